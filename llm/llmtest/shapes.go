package llmtest

import (
	"github.com/gohands/gohands/event"
)

// TinyPNG is a 1×1 PNG as a data URL.
const TinyPNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

// A Shape is a history of one kind the agent sends, ending where the next
// request is made.
type Shape struct {
	Name     string
	Messages []event.Message
}

// Shapes are the message shapes the agent produces, for conformance tests
// against the providers' documents: text, tool calls (with and without
// text), images from the user and in tool results, reasoning of each
// provider's kind, prompt-cache marks, and a history other models wrote.
// Their tool calls are to "terminal".
func Shapes() []Shape {
	sys := event.Message{Role: event.RoleSystem, Content: event.List[event.Content]{event.Text("You are helpful."), event.Text("Workspace directory: /w")}}
	calls := []event.ToolCall{
		{ID: "call_1", Name: "terminal", Arguments: `{"command":"ls"}`, Origin: event.OriginCompletion},
		{ID: "call_2", Name: "terminal", Arguments: `{"command":"pwd"}`, Origin: event.OriginCompletion},
	}
	result := func(id string, c ...event.Content) event.Message {
		return event.Message{Role: event.RoleTool, ToolCallID: id, Name: "terminal", Content: c}
	}
	sig := "EqQBCkgIARABGAIiQL"
	cached := sys
	cached.Content = event.List[event.Content]{{Type: event.ContentText, Text: "You are helpful.", CachePrompt: true}}
	lastUser := event.UserMessage("Go on.")
	lastUser.Content[0].CachePrompt = true
	return []Shape{
		{"text", []event.Message{sys, event.UserMessage("Say hello.")}},
		{"tool calls", []event.Message{sys, event.UserMessage("List the files."),
			{Role: event.RoleAssistant, Content: event.List[event.Content]{event.Text("Listing them.")}, ToolCalls: calls},
			result("call_1", event.Text("a.txt")), result("call_2", event.Text("/w"))}},
		{"tool call without text", []event.Message{sys, event.UserMessage("List the files."),
			{Role: event.RoleAssistant, ToolCalls: calls[:1]}, result("call_1", event.Text("a.txt"))}},
		{"user image", []event.Message{sys, {Role: event.RoleUser, Content: event.List[event.Content]{event.Text("What is this?"), event.Image(TinyPNG)}}}},
		{"tool image", []event.Message{sys, event.UserMessage("Take a screenshot."),
			{Role: event.RoleAssistant, ToolCalls: calls},
			result("call_1", event.Text("Page loaded."), event.Image(TinyPNG)), result("call_2", event.Image(TinyPNG))}},
		{"reasoning", []event.Message{sys, event.UserMessage("List the files."),
			{Role: event.RoleAssistant, Content: event.List[event.Content]{event.Text("Listing.")}, ReasoningContent: "The user wants files.",
				ThinkingBlocks: []event.ThinkingBlock{{Thinking: "Files.", Signature: &sig}, {Redacted: true, Data: "EmwKAhgB"}},
				ResponsesItem:  &event.ReasoningItem{ID: "rs_1", Summary: event.List[string]{"Plan"}, EncryptedContent: "gAAAAB", Status: "completed"},
				ToolCalls:      []event.ToolCall{{ID: "call_1", ResponsesItemID: "fc_1", Name: "terminal", Arguments: `{"command":"ls"}`, Origin: event.OriginResponses}}},
			result("call_1", event.Text("a.txt"))}},
		{"cache control", []event.Message{cached, event.UserMessage("List the files."),
			{Role: event.RoleAssistant, ToolCalls: calls[:1]}, {Role: event.RoleTool, ToolCallID: "call_1", Name: "terminal", Content: event.List[event.Content]{{Type: event.ContentText, Text: "a.txt", CachePrompt: true}}},
			lastUser}},
		{"after a model switch", []event.Message{sys, event.UserMessage("List the files."),
			// Claude's turn: thinking blocks, a toolu_ id.
			{Role: event.RoleAssistant, Content: event.List[event.Content]{event.Text("Listing.")},
				ThinkingBlocks: []event.ThinkingBlock{{Thinking: "Files.", Signature: &sig}, {Redacted: true, Data: "EmwKAhgB"}},
				ToolCalls:      []event.ToolCall{{ID: "toolu_01A", Name: "terminal", Arguments: `{"command":"ls"}`, Origin: event.OriginCompletion}}},
			result("toolu_01A", event.Text("a.txt")),
			// Gemini's turn: a thought signature on the call id.
			{Role: event.RoleAssistant, ToolCalls: []event.ToolCall{{ID: "call_g__thought__c2ln", Name: "terminal", Arguments: `{"command":"pwd"}`, Origin: event.OriginCompletion}}},
			result("call_g__thought__c2ln", event.Text("/w")),
			// OpenAI's turn: a Responses reasoning item.
			{Role: event.RoleAssistant, Content: event.List[event.Content]{event.Text("Done.")},
				ResponsesItem: &event.ReasoningItem{ID: "rs_2", Summary: event.List[string]{"Done"}, EncryptedContent: "gAAAAC", Status: "completed"}},
			event.UserMessage("Go on.")}},
	}
}
