package bedrock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/internal/eventstream"
)

// converseResponse is a Converse reply (the fields gohands reads).
type converseResponse struct {
	Output struct {
		Message *struct {
			Role    string       `json:"role"`
			Content []*replyPart `json:"content"`
		} `json:"message"`
	} `json:"output"`
	StopReason string `json:"stopReason"`
	Usage      usage  `json:"usage"`
}

// replyPart is a content block of a reply.
type replyPart struct {
	Text    *string `json:"text"`
	ToolUse *struct {
		ToolUseID string          `json:"toolUseId"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
	} `json:"toolUse"`
	ReasoningContent *struct {
		ReasoningText *struct {
			Text      string `json:"text"`
			Signature string `json:"signature"`
		} `json:"reasoningText"`
		RedactedContent string `json:"redactedContent"`
	} `json:"reasoningContent"`
}

type usage struct {
	InputTokens           int `json:"inputTokens"`
	OutputTokens          int `json:"outputTokens"`
	CacheReadInputTokens  int `json:"cacheReadInputTokens"`
	CacheWriteInputTokens int `json:"cacheWriteInputTokens"`
}

// part is a reply's content block as it is gathered.
type part struct {
	kind      string // text, tool, thinking, redacted
	text      strings.Builder
	signature string
	id, name  string
	input     strings.Builder
}

// toResponse converts a complete Converse reply.
func toResponse(r *converseResponse, id, model string) *llm.Response {
	var parts []*part
	if m := r.Output.Message; m != nil {
		for _, c := range m.Content {
			p := &part{}
			switch {
			case c.Text != nil:
				p.kind = "text"
				p.text.WriteString(*c.Text)
			case c.ToolUse != nil:
				p.kind, p.id, p.name = "tool", c.ToolUse.ToolUseID, c.ToolUse.Name
				p.input.Write(c.ToolUse.Input)
			case c.ReasoningContent != nil && c.ReasoningContent.ReasoningText != nil:
				p.kind, p.signature = "thinking", c.ReasoningContent.ReasoningText.Signature
				p.text.WriteString(c.ReasoningContent.ReasoningText.Text)
			case c.ReasoningContent != nil && c.ReasoningContent.RedactedContent != "":
				p.kind = "redacted"
				p.text.WriteString(c.ReasoningContent.RedactedContent)
			default:
				continue
			}
			parts = append(parts, p)
		}
	}
	return response(parts, r.StopReason, r.Usage, id, model)
}

func response(parts []*part, stop string, u usage, id, model string) *llm.Response {
	out := event.Message{Role: event.RoleAssistant, Content: event.List[event.Content]{}}
	var txt, reasoning strings.Builder
	for _, p := range parts {
		switch p.kind {
		case "text":
			txt.WriteString(p.text.String())
		case "thinking":
			sig := p.signature
			out.ThinkingBlocks = append(out.ThinkingBlocks, event.ThinkingBlock{Thinking: p.text.String(), Signature: &sig})
			reasoning.WriteString(p.text.String())
		case "redacted":
			out.ThinkingBlocks = append(out.ThinkingBlocks, event.ThinkingBlock{Redacted: true, Data: p.text.String()})
		case "tool":
			args := strings.TrimSpace(p.input.String())
			if args == "" {
				args = "{}"
			}
			out.ToolCalls = append(out.ToolCalls, event.ToolCall{ID: p.id, Name: p.name, Arguments: args, Origin: event.OriginCompletion})
		}
	}
	if txt.Len() > 0 {
		out.Content = append(out.Content, event.Text(txt.String()))
	}
	out.ReasoningContent = reasoning.String()
	return &llm.Response{
		ID:           id,
		Model:        model,
		Message:      out,
		FinishReason: finishReason(stop),
		Usage: llm.TokenUsage{
			// Bedrock counts cached input apart; PromptTokens counts all.
			PromptTokens:     u.InputTokens + u.CacheReadInputTokens + u.CacheWriteInputTokens,
			CompletionTokens: u.OutputTokens,
			CacheReadTokens:  u.CacheReadInputTokens,
			CacheWriteTokens: u.CacheWriteInputTokens,
		},
	}
}

// finishReason maps a stop reason to the Chat Completions vocabulary.
func finishReason(r string) string {
	switch r {
	case "tool_use":
		return "tool_calls"
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	case "guardrail_intervened", "content_filtered":
		return "content_filter"
	}
	return "stop"
}

// streamEvent is the payload of a ConverseStream event; which fields are
// set depends on the event type.
type streamEvent struct {
	ContentBlockIndex int `json:"contentBlockIndex"`
	Start             *struct {
		ToolUse *struct {
			ToolUseID string `json:"toolUseId"`
			Name      string `json:"name"`
		} `json:"toolUse"`
	} `json:"start"`
	Delta *struct {
		Text    *string `json:"text"`
		ToolUse *struct {
			Input string `json:"input"`
		} `json:"toolUse"`
		ReasoningContent *struct {
			Text            *string `json:"text"`
			Signature       *string `json:"signature"`
			RedactedContent *string `json:"redactedContent"`
		} `json:"reasoningContent"`
	} `json:"delta"`
	StopReason string `json:"stopReason"`
	Usage      *usage `json:"usage"`
	Message    string `json:"message"`
}

// stream reads a ConverseStream reply, passing fragments to onDelta and
// gathering the message. It ends after the metadata event (usage), which
// follows messageStop.
func stream(body io.Reader, onDelta func(llm.Delta) error, id, model string) (*llm.Response, error) {
	var parts []*part
	calls := map[int]int{} // content block index -> tool call index
	stop, stopped, done := "", false, false
	var u usage
	at := func(i int, kind string) (*part, error) {
		for len(parts) <= i {
			if i > len(parts) {
				return nil, malformed(fmt.Errorf("stream: content block %d before block %d", i, len(parts)))
			}
			parts = append(parts, &part{kind: kind})
		}
		return parts[i], nil
	}
	for msg, err := range eventstream.Messages(body) {
		if err != nil {
			return nil, fmt.Errorf("bedrock: stream: %w", err)
		}
		switch msg.Headers[":message-type"] {
		case "event":
		case "exception":
			return nil, streamException(msg)
		case "error":
			return nil, llm.NewAPIError(0, msg.Headers[":error-code"], msg.Headers[":error-message"], nil, nil)
		default:
			return nil, malformed(fmt.Errorf("stream: message type %q", msg.Headers[":message-type"]))
		}
		var e streamEvent
		if err := json.Unmarshal(msg.Payload, &e); err != nil {
			return nil, malformed(fmt.Errorf("stream event %.80q: %w", msg.Payload, err))
		}
		var d llm.Delta
		switch msg.Headers[":event-type"] {
		case "contentBlockStart":
			if e.Start == nil || e.Start.ToolUse == nil {
				break
			}
			p, err := at(e.ContentBlockIndex, "tool")
			if err != nil {
				return nil, err
			}
			p.kind, p.id, p.name = "tool", e.Start.ToolUse.ToolUseID, e.Start.ToolUse.Name
			i := len(calls)
			calls[e.ContentBlockIndex] = i
			d.ToolCall = &llm.ToolCallDelta{Index: i, ID: p.id, Name: p.name}
		case "contentBlockDelta":
			if e.Delta == nil {
				return nil, malformed(fmt.Errorf("stream: contentBlockDelta without a delta"))
			}
			switch {
			case e.Delta.Text != nil:
				p, err := at(e.ContentBlockIndex, "text")
				if err != nil {
					return nil, err
				}
				p.text.WriteString(*e.Delta.Text)
				d.Text = *e.Delta.Text
			case e.Delta.ToolUse != nil:
				p, err := at(e.ContentBlockIndex, "tool")
				if err != nil {
					return nil, err
				}
				p.input.WriteString(e.Delta.ToolUse.Input)
				if i, ok := calls[e.ContentBlockIndex]; ok && e.Delta.ToolUse.Input != "" {
					d.ToolCall = &llm.ToolCallDelta{Index: i, Arguments: e.Delta.ToolUse.Input}
				}
			case e.Delta.ReasoningContent != nil:
				rc := e.Delta.ReasoningContent
				kind := "thinking"
				if rc.RedactedContent != nil {
					kind = "redacted"
				}
				p, err := at(e.ContentBlockIndex, kind)
				if err != nil {
					return nil, err
				}
				switch {
				case rc.Text != nil:
					p.text.WriteString(*rc.Text)
					d.Reasoning = *rc.Text
				case rc.Signature != nil:
					p.signature += *rc.Signature
				case rc.RedactedContent != nil:
					p.kind = "redacted"
					p.text.WriteString(*rc.RedactedContent)
				}
			}
		case "messageStop":
			stop, stopped = e.StopReason, true
		case "metadata":
			if e.Usage != nil {
				u = *e.Usage
			}
			done = true
		}
		if d != (llm.Delta{}) {
			if err := onDelta(d); err != nil {
				return nil, err
			}
		}
		if done {
			break
		}
	}
	if !stopped {
		return nil, &llm.APIError{Kind: llm.ErrNoResponse, Message: "bedrock: stream ended before messageStop"}
	}
	return response(parts, stop, u, id, model), nil
}

// streamException converts an exception sent inside a stream that began
// with 200 ("throttlingException", "modelStreamErrorException", ...).
func streamException(msg eventstream.Message) error {
	typ := msg.Headers[":exception-type"]
	name := strings.ToUpper(typ[:min(1, len(typ))]) + typ[min(1, len(typ)):]
	var body struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(msg.Payload, &body)
	if body.Message == "" {
		body.Message = string(bytes.TrimSpace(msg.Payload))
	}
	status, ok := statusOfException[name]
	if !ok {
		status = http.StatusInternalServerError
	}
	return llm.NewAPIError(status, name, body.Message, nil, nil)
}
