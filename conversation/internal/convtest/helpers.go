// Package convtest holds what the conversation and store tests share: a
// stand-in agent kind, terminal action and observation kinds with the
// reference's fields, and event fixtures.
package convtest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/workspace"
	"github.com/google/uuid"
)

func NewAgent() *Agent {
	return &Agent{LLM: json.RawMessage(`{"model":"gpt-4o","usage_id":"agent"}`), Tools: []any{}}
}

func NewFields() *conversation.Fields {
	return conversation.NewFields(uuid.NewString(), NewAgent(), &workspace.Local{WorkingDir: "/tmp/work"})
}

func UserMessage(text string) *event.MessageEvent {
	return &event.MessageEvent{Base: event.NewBase(event.SourceUser), LLMMessage: event.Message{Role: "user", Content: []event.Content{event.Text(text)}}}
}

// ActionCycle returns a terminal action and its observation, the
// observation carrying outputBytes of output.
func ActionCycle(n, outputBytes int) (*event.ActionEvent, *event.ObservationEvent) {
	call := fmt.Sprintf("call_%06d", n)
	cmd := fmt.Sprintf("grep -rn pattern%d src/ | head -50", n)
	args, _ := json.Marshal(map[string]any{"command": cmd, "security_risk": "LOW", "summary": "search the sources"})
	a := &event.ActionEvent{
		Base:          event.NewBase(event.SourceAgent),
		Thought:       []event.Content{event.Text("Let me look for where the pattern is used before changing it; " + strings.Repeat("reasoning ", 40))},
		Action:        &TerminalAction{Command: cmd},
		ToolName:      "terminal",
		ToolCallID:    call,
		ToolCall:      event.ToolCall{ID: call, Name: "terminal", Arguments: string(args), Origin: "completion"},
		LLMResponseID: "chatcmpl-" + call,
		SecurityRisk:  event.RiskUnknown,
		Summary:       "search the sources",
	}
	line := "src/pkg/file.go:123: some matching line of source code with pattern in it\n"
	out := strings.Repeat(line, max(1, outputBytes/len(line)))
	exit := 0
	o := &event.ObservationEvent{
		Base:       event.NewBase(event.SourceEnvironment),
		ToolName:   "terminal",
		ToolCallID: call,
		Observation: &TerminalObservation{
			ObservationBase: event.ObservationBase{Content: []event.Content{event.Text(out)}},
			Command:         &cmd, ExitCode: &exit,
			Metadata: TerminalMetadata{ExitCode: 0, PID: -1, Username: "root", Hostname: "sandbox", WorkingDir: "/workspace/project"},
		},
		ActionID: a.ID,
	}
	return a, o
}

// RealisticEvents returns n events shaped like the reference's median
// conversation (82 events, 380 KB): a system prompt, a user message, then
// action/observation cycles whose observations carry most of the bytes,
// with a state update now and then.
func RealisticEvents(n int) []event.Event {
	out := []event.Event{
		&event.SystemPromptEvent{Base: event.NewBase(event.SourceAgent), SystemPrompt: event.Text(strings.Repeat("You are a careful software engineer. ", 650)), Tools: []event.ToolDefinition{}},
		UserMessage(strings.Repeat("Please fix the failing test in the parser package. ", 60)),
	}
	for i := 0; len(out) < n; i++ {
		if i%40 == 39 {
			out = append(out, &event.ConversationStateUpdateEvent{Base: event.NewBase(event.SourceEnvironment), Key: "execution_status", Value: "running"})
			continue
		}
		a, o := ActionCycle(i, 1800+((i*7)%13)*900)
		out = append(out, a, o)
	}
	return out[:n]
}
