package condenser

import (
	"github.com/gohands/gohands/event"
)

// TokenCounter estimates how many tokens a request takes.
type TokenCounter interface {
	// CountTokens returns the tokens of messages plus the tool definitions
	// offered with them.
	CountTokens(messages []event.Message, tools []event.ToolDefinition) int
}

// CharCounter estimates tokens as characters/4 (rounded up), plus a few
// tokens of framing per message and tool call. It over-counts code and
// prose a little for most tokenizers, which errs on the safe side.
type CharCounter struct{}

// Per-item framing, in tokens, roughly what chat formats add.
const (
	messageOverhead = 4
	callOverhead    = 3
)

// CountTokens implements TokenCounter.
func (CharCounter) CountTokens(messages []event.Message, tools []event.ToolDefinition) int {
	chars, extra := 0, 0
	for i := range messages {
		m := &messages[i]
		extra += messageOverhead
		chars += len(m.Role) + len(m.Name) + len(m.ToolCallID) + len(m.ReasoningContent)
		for _, c := range m.Content {
			chars += len(c.Text)
			extra += 85 * len(c.ImageURLs) // a low-detail image
		}
		for _, t := range m.ThinkingBlocks {
			chars += len(t.Thinking)
		}
		for _, tc := range m.ToolCalls {
			extra += callOverhead
			chars += len(tc.ID) + len(tc.Name) + len(tc.Arguments)
		}
	}
	for _, t := range tools {
		extra += messageOverhead
		chars += len(t.Title) + len(t.Description) + len(t.ActionType) + len(t.Meta)
	}
	return (chars+3)/4 + extra
}

// viewTokens counts the tokens of the request events would make: their
// messages and the tools of the first SystemPromptEvent.
func viewTokens(tc TokenCounter, events []event.Event) int {
	var tools []event.ToolDefinition
	for _, e := range events {
		if sp, ok := e.(*event.SystemPromptEvent); ok {
			tools = sp.Tools
			break
		}
	}
	return tc.CountTokens(event.LLMMessages(events), tools)
}
