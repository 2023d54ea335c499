package event

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLLMMessages(t *testing.T) {
	call := func(id string) ToolCall {
		return ToolCall{ID: id, Name: "terminal", Arguments: `{"command":"ls"}`, Origin: OriginCompletion}
	}
	action := func(id, resp string, thought ...Content) *ActionEvent {
		return &ActionEvent{Base: NewBase(SourceAgent), Thought: thought, ToolName: "terminal", ToolCallID: id,
			ToolCall: call(id), LLMResponseID: resp, Action: &terminalAction{Command: "ls"}}
	}
	obs := func(id, text string, isErr bool) *ObservationEvent {
		return &ObservationEvent{Base: NewBase(SourceEnvironment), ToolName: "terminal", ToolCallID: id, ActionID: "a",
			Observation: &terminalObservation{ObservationBase: ObservationBase{Content: List[Content]{Text(text)}, IsError: isErr}}}
	}
	user := func(text string) *MessageEvent {
		return &MessageEvent{Base: NewBase(SourceUser), LLMMessage: UserMessage(text)}
	}
	sys := &SystemPromptEvent{Base: NewBase(SourceAgent), SystemPrompt: Text("sys"), DynamicContext: new(Text("dyn"))}
	withReasoning := action("c1", "r1", Text("thinking aloud"))
	withReasoning.ReasoningContent = "why"
	withReasoning.ThinkingBlocks = List[ThinkingBlock]{{Thinking: "t"}}

	tests := []struct {
		name   string
		events []Event
		want   []Message
	}{
		{"empty", nil, nil},
		{"system prompt with dynamic context", []Event{sys},
			[]Message{{Role: RoleSystem, Content: List[Content]{Text("sys"), Text("dyn")}}}},
		{"system prompt alone",
			[]Event{&SystemPromptEvent{Base: NewBase(SourceAgent), SystemPrompt: Text("sys")}},
			[]Message{{Role: RoleSystem, Content: List[Content]{Text("sys")}}}},
		{"parallel calls of one response merge",
			[]Event{withReasoning, action("c2", "r1"), obs("c1", "out1", false), obs("c2", "out2", true)},
			[]Message{
				{Role: RoleAssistant, Content: List[Content]{Text("thinking aloud")}, ToolCalls: []ToolCall{call("c1"), call("c2")},
					ReasoningContent: "why", ThinkingBlocks: List[ThinkingBlock]{{Thinking: "t"}}},
				{Role: RoleTool, Name: "terminal", ToolCallID: "c1", Content: List[Content]{Text("out1")}},
				{Role: RoleTool, Name: "terminal", ToolCallID: "c2", Content: List[Content]{Text(ErrorHeader), Text("out2")}},
			}},
		{"different responses stay apart",
			[]Event{action("c1", "r1"), action("c2", "r2")},
			[]Message{
				{Role: RoleAssistant, Content: List[Content]{}, ToolCalls: []ToolCall{call("c1")}},
				{Role: RoleAssistant, Content: List[Content]{}, ToolCalls: []ToolCall{call("c2")}},
			}},
		{"a later thought is kept, not lost",
			[]Event{action("c1", "r1", Text("a")), action("c2", "r1", Text("b"))},
			[]Message{{Role: RoleAssistant, Content: List[Content]{Text("a"), Text("b")}, ToolCalls: []ToolCall{call("c1"), call("c2")}}}},
		{"rejection and agent error are tool messages",
			[]Event{
				&UserRejectObservation{Base: NewBase(SourceEnvironment), ToolName: "terminal", ToolCallID: "c1", RejectionReason: "no"},
				&AgentErrorEvent{Base: NewBase(SourceAgent), ToolName: "nope", ToolCallID: "c2", Error: "Tool 'nope' not found."},
			},
			[]Message{
				{Role: RoleTool, Name: "terminal", ToolCallID: "c1", Content: List[Content]{Text("Action rejected: no")}},
				{Role: RoleTool, Name: "nope", ToolCallID: "c2", Content: List[Content]{Text("Tool 'nope' not found.")}},
			}},
		{"consecutive user messages join; extended content appended",
			[]Event{
				&MessageEvent{Base: NewBase(SourceUser), LLMMessage: UserMessage("one"), ExtendedContent: List[Content]{Text("skill")}},
				&PauseEvent{Base: NewBase(SourceUser)},
				user("two"),
				&CondensationSummaryEvent{Base: NewBase(SourceEnvironment), Summary: "sum"},
			},
			[]Message{{Role: RoleUser, Content: List[Content]{Text("one"), Text("skill"), Text("two"), Text("sum")}}}},
		{"observation extended content follows the output",
			[]Event{&ObservationEvent{Base: NewBase(SourceEnvironment), ToolName: "terminal", ToolCallID: "c9",
				Observation:     &terminalObservation{ObservationBase: ObservationBase{Content: List[Content]{Text("out")}}},
				ExtendedContent: List[Content]{Text("rule")}}},
			[]Message{{Role: RoleTool, Name: "terminal", ToolCallID: "c9", Content: List[Content]{Text("out"), Text("rule")}}}},
		{"non-LLM events are skipped; an agent reply splits user turns",
			[]Event{
				user("a"), &ConversationStateUpdateEvent{Base: NewBase(SourceEnvironment), Key: "k"},
				&MessageEvent{Base: NewBase(SourceAgent), LLMMessage: Message{Role: RoleAssistant, Content: List[Content]{Text("hi")}}},
				user("b"), &Condensation{Base: NewBase(SourceEnvironment)}, &TokenEvent{Base: NewBase(SourceAgent)},
			},
			[]Message{
				{Role: RoleUser, Content: List[Content]{Text("a")}},
				{Role: RoleAssistant, Content: List[Content]{Text("hi")}},
				{Role: RoleUser, Content: List[Content]{Text("b")}},
			}},
		{"user message with tool fields is not joined",
			[]Event{user("a"), &MessageEvent{Base: NewBase(SourceUser), LLMMessage: Message{Role: RoleUser, Name: "x", Content: List[Content]{Text("b")}}}},
			[]Message{
				{Role: RoleUser, Content: List[Content]{Text("a")}},
				{Role: RoleUser, Name: "x", Content: List[Content]{Text("b")}},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := LLMMessages(tt.events)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("LLMMessages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLLMMessagesDoesNotAlias(t *testing.T) {
	m := &MessageEvent{Base: NewBase(SourceUser), LLMMessage: Message{Role: RoleUser, Content: make(List[Content], 1, 8)}}
	m.LLMMessage.Content[0] = Text("one")
	msgs := LLMMessages([]Event{m, &MessageEvent{Base: NewBase(SourceUser), LLMMessage: UserMessage("two")}})
	msgs[0].Content[0] = Text("changed")
	if m.LLMMessage.Content[0].Text != "one" || len(m.LLMMessage.Content) != 1 {
		t.Fatalf("projection wrote through to the event: %+v", m.LLMMessage.Content[:cap(m.LLMMessage.Content)][:2])
	}
}

func ExampleLLMMessages() {
	events := []Event{
		&SystemPromptEvent{Base: NewBase(SourceAgent), SystemPrompt: Text("You are terse.")},
		&MessageEvent{Base: NewBase(SourceUser), LLMMessage: UserMessage("Hello")},
	}
	for _, m := range LLMMessages(events) {
		fmt.Println(m.Role, TextOf(m.Content))
	}
	// Output:
	// system You are terse.
	// user Hello
}
