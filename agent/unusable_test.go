package agent_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/secret"
)

// TestUnusableRepliesEndTheRun checks that a model whose every reply is
// over the size limit ends the run with an error after a few tries,
// instead of being asked again until the step limit.
func TestUnusableRepliesEndTheRun(t *testing.T) {
	big := llmtest.Reply{Text: strings.Repeat("x", 4096)}
	srv := llmtest.NewChat(t, big, big, big, big, big, big, big, big, big, big)
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.BaseURL = srv.URL + "/v1"
	cfg.APIKey = secret.New("k")
	cfg.RetryMinWait, cfg.RetryMaxWait, cfg.RetryMultiplier = 0, 0, 0
	model, err := llm.New(cfg, &llm.Options{MaxReplyBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := newConv(t, agent.New(cfg, nil, &agent.Options{Model: model}), nil)
	c.SendMessage(ctx, event.UserMessage("hello"))
	err = c.Run(ctx)
	var re *conversation.RunError
	if !errors.As(err, &re) || !errors.Is(err, llm.ErrReplyTooLarge) {
		t.Fatalf("Run = %v, want a run error wrapping llm.ErrReplyTooLarge", err)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("the model was asked %d times, want 3", n)
	}
	if c.Status() != conversation.StatusError {
		t.Errorf("status %s, want error", c.Status())
	}
}
