package event

import "slices"

// LLMMessages projects events onto the messages sent to the model, as the
// reference does:
//
//   - a SystemPromptEvent is a system message: the prompt, then the dynamic
//     context as a second text block;
//   - consecutive ActionEvents of one LLM response (same LLMResponseID) are
//     one assistant message: the first event's thought and reasoning, and
//     every event's tool call;
//   - observations, rejections and agent errors are tool messages carrying
//     the tool name and call id;
//   - a MessageEvent is its message with ExtendedContent appended, and a
//     CondensationSummaryEvent a user message;
//   - consecutive plain user messages (no tool fields) are joined into one;
//   - every other event is skipped.
//
// events is normally the model's view: the active branch with condensations
// applied. The returned messages' content and tool-call lists are their
// own, so callers may append to them without touching the events.
func LLMMessages(events []Event) []Message {
	var out []Message
	for i := 0; i < len(events); {
		var m Message
		if a, ok := events[i].(*ActionEvent); ok {
			j := i + 1
			for j < len(events) {
				b, ok := events[j].(*ActionEvent)
				if !ok || b.LLMResponseID != a.LLMResponseID {
					break
				}
				j++
			}
			m = actionsMessage(events[i:j])
			i = j
		} else {
			var ok bool
			if m, ok = LLMMessage(events[i]); !ok {
				i++
				continue
			}
			i++
		}
		if n := len(out); n > 0 && isPlainUser(out[n-1]) && isPlainUser(m) {
			out[n-1].Content = append(out[n-1].Content, m.Content...)
			continue
		}
		out = append(out, m)
	}
	return out
}

// LLMMessage returns the message e contributes to the model's input on its
// own, and false for events the model never sees. An ActionEvent gives a
// message with its one tool call; LLMMessages joins the calls of one
// response.
func LLMMessage(e Event) (Message, bool) {
	switch e := e.(type) {
	case *SystemPromptEvent:
		content := List[Content]{e.SystemPrompt}
		if e.DynamicContext != nil {
			content = append(content, *e.DynamicContext)
		}
		return Message{Role: RoleSystem, Content: content}, true
	case *MessageEvent:
		m := e.LLMMessage
		m.Content = concat(m.Content, e.ExtendedContent)
		m.ToolCalls = slices.Clone(m.ToolCalls)
		m.ThinkingBlocks = slices.Clone(m.ThinkingBlocks)
		return m, true
	case *ActionEvent:
		return actionsMessage([]Event{e}), true
	case *ObservationEvent:
		var content []Content
		if e.Observation != nil {
			content = ObservationContent(e.Observation)
		}
		return toolMessage(e.ToolName, e.ToolCallID, concat(content, e.ExtendedContent)), true
	case *UserRejectObservation:
		reason := e.RejectionReason
		if reason == "" {
			reason = DefaultRejectionReason
		}
		return toolMessage(e.ToolName, e.ToolCallID, List[Content]{Text("Action rejected: " + reason)}), true
	case *AgentErrorEvent:
		return toolMessage(e.ToolName, e.ToolCallID, List[Content]{Text(e.Error)}), true
	case *CondensationSummaryEvent:
		return Message{Role: RoleUser, Content: List[Content]{Text(e.Summary)}}, true
	}
	return Message{}, false
}

// actionsMessage joins the ActionEvents of one LLM response into the
// assistant message that produced them. The reference requires the thought
// of every event but the first to be empty (and fails otherwise); here any
// later thought is appended rather than lost.
func actionsMessage(batch []Event) Message {
	first := batch[0].(*ActionEvent)
	m := Message{
		Role:             RoleAssistant,
		Content:          slices.Clone(first.Thought),
		ToolCalls:        make([]ToolCall, 0, len(batch)),
		ReasoningContent: first.ReasoningContent,
		ThinkingBlocks:   slices.Clone(first.ThinkingBlocks),
		ResponsesItem:    first.ResponsesItem,
	}
	if m.Content == nil {
		m.Content = List[Content]{}
	}
	for i, e := range batch {
		a := e.(*ActionEvent)
		if i > 0 {
			m.Content = append(m.Content, a.Thought...)
		}
		m.ToolCalls = append(m.ToolCalls, a.ToolCall)
	}
	return m
}

func toolMessage(name, callID string, content List[Content]) Message {
	return Message{Role: RoleTool, Content: content, Name: name, ToolCallID: callID}
}

// concat returns a new list holding a then b.
func concat(a, b []Content) List[Content] {
	out := make(List[Content], 0, len(a)+len(b))
	return append(append(out, a...), b...)
}

// isPlainUser reports whether m is a user turn without tool fields, which
// may be joined with a neighbouring one.
func isPlainUser(m Message) bool {
	return m.Role == RoleUser && m.ToolCalls == nil && m.ToolCallID == "" && m.Name == ""
}
