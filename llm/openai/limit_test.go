package openai_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/secret"
)

// TestReplyTooLarge: a reply past Options.MaxReplyBytes fails with
// ErrReplyTooLarge, streamed or not, and is not asked for again.
func TestReplyTooLarge(t *testing.T) {
	apis(t, func(t *testing.T, model string, newServer func(...llmtest.Reply) *llmtest.Server) {
		for _, stream := range []bool{false, true} {
			srv := newServer(llmtest.Reply{Text: strings.Repeat("x", 64<<10)}, llmtest.Reply{Text: "again"})
			cfg := llm.DefaultConfig(model)
			cfg.APIKey = secret.New("sk-test")
			cfg.BaseURL = srv.URL + "/v1"
			cfg.RetryMinWait, cfg.RetryMaxWait, cfg.RetryMultiplier = 0.001, 0.01, 0.001
			cfg.NumRetries = 3
			cfg.Stream = stream
			l, err := llm.New(cfg, &llm.Options{HTTPClient: srv.Client(), Logger: quiet, MaxReplyBytes: 16 << 10})
			if err != nil {
				t.Fatal(err)
			}
			_, err = l.Completion(context.Background(), userMsgs("hi"), nil, nil)
			if !errors.Is(err, llm.ErrReplyTooLarge) {
				t.Errorf("stream=%v: err = %v", stream, err)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("stream=%v: %d requests", stream, n)
			}
		}
	})
}
