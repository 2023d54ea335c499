package condenser

import (
	"fmt"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
)

// obs is a plain observation for tests.
type obs struct {
	event.ObservationBase
}

// builder makes conversations with unique ids.
type builder struct {
	n      int
	events []event.Event
}

func (b *builder) id(prefix string) string {
	b.n++
	return fmt.Sprintf("%s%d", prefix, b.n)
}

func (b *builder) system() *builder {
	b.events = append(b.events, &event.SystemPromptEvent{Base: event.Base{ID: b.id("sys"), Source: event.SourceAgent},
		SystemPrompt: event.Text("You are a test agent."),
		Tools:        []event.ToolDefinition{{Title: "terminal", Description: "Runs commands.", ActionType: "TerminalAction", Kind: "TerminalTool"}}})
	return b
}

func (b *builder) user(text string) *builder {
	b.events = append(b.events, &event.MessageEvent{Base: event.Base{ID: b.id("msg"), Source: event.SourceUser}, LLMMessage: event.UserMessage(text)})
	return b
}

// batch appends n parallel calls of one response and then their results;
// thinking marks the first action as starting a tool loop.
func (b *builder) batch(n int, output string, thinking bool) *builder {
	resp := b.id("resp")
	var acts []*event.ActionEvent
	for i := range n {
		call := b.id("call")
		a := &event.ActionEvent{Base: event.Base{ID: b.id("act"), Source: event.SourceAgent},
			ToolName: "terminal", ToolCallID: call, LLMResponseID: resp,
			ToolCall: event.ToolCall{ID: call, Name: "terminal", Arguments: `{"command":"ls"}`, Origin: event.OriginCompletion}}
		if i == 0 {
			a.Thought = event.List[event.Content]{event.Text("let me look")}
			if thinking {
				a.ThinkingBlocks = event.List[event.ThinkingBlock]{{Thinking: "hmm"}}
			}
		}
		acts = append(acts, a)
		b.events = append(b.events, a)
	}
	for _, a := range acts {
		b.events = append(b.events, &event.ObservationEvent{Base: event.Base{ID: b.id("obs"), Source: event.SourceEnvironment},
			ToolName: "terminal", ToolCallID: a.ToolCallID, ActionID: a.ID,
			Observation: &obs{event.ObservationBase{Content: event.List[event.Content]{event.Text(output)}}}})
	}
	return b
}

// scripted returns an LLM answering from replies through the in-process
// llmtest provider, with no retries.
func scripted(t *testing.T, replies ...llmtest.Reply) (*llm.LLM, *llmtest.Provider) {
	t.Helper()
	p := llmtest.NewProvider(t, replies...)
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.NumRetries = 1
	cfg.UsageID = "condenser"
	l, err := llm.New(cfg, &llm.Options{Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	return l, p
}

// checkWellFormed fails unless every tool call of msgs is answered by
// exactly one tool message before the next assistant message, and every
// tool message answers a call.
func checkWellFormed(t *testing.T, msgs []event.Message) {
	t.Helper()
	open := map[string]bool{}
	for i, m := range msgs {
		switch m.Role {
		case event.RoleTool:
			if !open[m.ToolCallID] {
				t.Fatalf("message %d: tool result %q answers no open call", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
		default:
			if len(open) > 0 {
				t.Fatalf("message %d (%s): calls %v left unanswered", i, m.Role, open)
			}
			for _, c := range m.ToolCalls {
				open[c.ID] = true
			}
		}
	}
	if len(open) > 0 {
		t.Fatalf("calls %v left unanswered at the end", open)
	}
}
