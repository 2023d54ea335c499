package agent_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
)

// A model that cannot see, given an image and no vision tool, is not
// called: the agent says so in a message and the run finishes, as in
// 1.58.2. A later text message is answered as usual.
func TestCannotSeeImage(t *testing.T) {
	p := llmtest.NewProvider(t, llmtest.Reply{Text: "a text answer"})
	cfg := llm.DefaultConfig("openai/gpt-3.5-turbo") // no vision
	cfg.RetryMinWait, cfg.RetryMaxWait, cfg.RetryMultiplier = 0, 0, 0
	l, err := llm.New(cfg, &llm.Options{Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := newConv(t, agent.New(cfg, nil, &agent.Options{Model: l}), nil)
	msg := event.UserMessage("what is in the picture?")
	msg.Content = append(msg.Content, event.Image("data:image/png;base64,AAAA"))
	c.SendMessage(ctx, msg)
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(p.Requests()); n != 0 {
		t.Errorf("the model was called %d times", n)
	}
	if s := c.Status(); s != conversation.StatusFinished {
		t.Errorf("status %s, want finished", s)
	}
	evs := logEvents(t, c)
	last, ok := evs[len(evs)-1].(*event.MessageEvent)
	if !ok || last.Source != event.SourceAgent || last.LLMMessage.Role != event.RoleAssistant ||
		!strings.Contains(event.TextOf(last.LLMMessage.Content), "openai/gpt-3.5-turbo") {
		t.Fatalf("last event %#v, want the agent's message naming the model; kinds %v", evs[len(evs)-1], kindsOf(evs))
	}
	got, err := agent.FinalResponse(t.Context(), c.State())
	if err != nil || got != event.TextOf(last.LLMMessage.Content) {
		t.Errorf("final response %q (%v), want the message", got, err)
	}

	c.SendMessage(ctx, event.UserMessage("then just say hello"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(p.Requests()); n != 1 {
		t.Fatalf("after a text message the model was called %d times, want 1", n)
	}
	evs = logEvents(t, c)
	if last, ok := evs[len(evs)-1].(*event.MessageEvent); !ok || event.TextOf(last.LLMMessage.Content) != "a text answer" {
		t.Errorf("kinds %v, want the model's answer last", kindsOf(evs))
	}
	if !slices.ContainsFunc(p.Requests()[0].Messages, func(m event.Message) bool { return m.Role == event.RoleAssistant }) {
		t.Errorf("the model did not get the earlier reply")
	}
}
