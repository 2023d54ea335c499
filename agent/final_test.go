package agent_test

import (
	"testing"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
)

func TestFinalResponse(t *testing.T) {
	a, _ := newAgent(t,
		llmtest.Reply{Text: "a plain answer"},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: agent.FinishToolName, Arguments: `{"message":"finished with this"}`}}},
	)
	c, _ := newConv(t, a, nil)
	final := func() string {
		t.Helper()
		s, err := agent.FinalResponse(t.Context(), c.State())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if got := final(); got != "" {
		t.Errorf("before any reply: %q, want empty", got)
	}
	for _, want := range []string{"a plain answer", "finished with this"} {
		c.SendMessage(ctx, event.UserMessage("go on"))
		if err := c.Run(ctx); err != nil {
			t.Fatal(err)
		}
		if got := final(); got != want {
			t.Errorf("final response %q, want %q", got, want)
		}
	}
	// A user message after the answer does not hide it.
	c.SendMessage(ctx, event.UserMessage("thanks"))
	if got := final(); got != "finished with this" {
		t.Errorf("after a user message: %q", got)
	}
}
