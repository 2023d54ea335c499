package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
)

// With stream set in its LLM config, the agent publishes the reply's text
// and reasoning as StreamingDeltaEvents to subscribers, before the whole
// message; the deltas are not stored.
func TestStreamingDeltas(t *testing.T) {
	a, _ := newAgent(t, llmtest.Reply{Text: "Hello there, streaming world.", Reasoning: "thinking hard"})
	a.LLM.Stream = true
	c, rec := newConv(t, a, nil)
	sub := &recorder{}
	unsubscribe := c.Subscribe(sub.add)
	ctx := context.Background()
	if err := c.SendMessage(ctx, event.UserMessage("hi")); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	unsubscribe()

	var text, reasoning strings.Builder
	deltas, msgAt := 0, -1
	for i, e := range sub.events {
		switch e := e.(type) {
		case *event.StreamingDeltaEvent:
			deltas++
			if msgAt >= 0 {
				t.Errorf("delta after the agent's message")
			}
			if e.Content != nil {
				text.WriteString(*e.Content)
			}
			if e.ReasoningContent != nil {
				reasoning.WriteString(*e.ReasoningContent)
			}
		case *event.MessageEvent:
			if e.Source == event.SourceAgent {
				msgAt = i
			}
		}
	}
	if deltas < 2 {
		t.Errorf("%d deltas, want the reply in several", deltas)
	}
	if text.String() != "Hello there, streaming world." || reasoning.String() != "thinking hard" {
		t.Errorf("deltas spell %q / %q", text.String(), reasoning.String())
	}
	for _, k := range append(rec.kinds(), kindsOf(logEvents(t, c))...) {
		if k == "StreamingDeltaEvent" {
			t.Fatal("a delta reached OnEvent or the log")
		}
	}
}

// Without stream, no deltas are published.
func TestNoStreamingDeltas(t *testing.T) {
	a, _ := newAgent(t, llmtest.Reply{Text: "Hello there."})
	c, _ := newConv(t, a, nil)
	sub := &recorder{}
	unsubscribe := c.Subscribe(sub.add)
	ctx := context.Background()
	if err := c.SendMessage(ctx, event.UserMessage("hi")); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	unsubscribe()
	for _, k := range sub.kinds() {
		if k == "StreamingDeltaEvent" {
			t.Fatal("delta published without stream")
		}
	}
}
