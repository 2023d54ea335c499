package event

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/gohands/gohands/internal/wire"
)

// Content is one block of message content: text or images. It is a small
// union rather than an interface so content lists decode without help.
//
// On the wire it is the reference's TextContent ({"cache_prompt","type":"text",
// "text"}) or ImageContent ({"cache_prompt","type":"image","image_urls"}).
type Content struct {
	Type        string   // "text" or "image"
	Text        string   // for "text"
	ImageURLs   []string // for "image": http(s) URLs or data: URLs
	CachePrompt bool     // mark a prompt-cache breakpoint after this block
}

// Content types.
const (
	ContentText  = "text"
	ContentImage = "image"
)

// Text returns a text content block.
func Text(s string) Content { return Content{Type: ContentText, Text: s} }

// Image returns an image content block.
func Image(urls ...string) Content { return Content{Type: ContentImage, ImageURLs: urls} }

// appendContent appends c as the reference writes TextContent or
// ImageContent.
func appendContent(b []byte, c *Content) ([]byte, error) {
	b = append(b, `{"cache_prompt":`...)
	b = strconv.AppendBool(b, c.CachePrompt)
	switch c.Type {
	case ContentText, "":
		b = append(b, `,"type":"text","text":`...)
		b = wire.AppendString(b, c.Text)
	case ContentImage:
		b = append(b, `,"type":"image","image_urls":[`...)
		for i, u := range c.ImageURLs {
			if i > 0 {
				b = append(b, ',')
			}
			b = wire.AppendString(b, u)
		}
		b = append(b, ']')
	default:
		return nil, fmt.Errorf("event: unknown content type %q", c.Type)
	}
	return append(b, '}'), nil
}

// MarshalJSON implements json.Marshaler.
func (c Content) MarshalJSON() ([]byte, error) { return appendContent(nil, &c) }

// UnmarshalJSON implements json.Unmarshaler. As in the reference, text
// content is strict (only the deprecated enable_truncation key is tolerated)
// while image content ignores unknown keys, and a block without "type" is
// whichever of the two it validates as.
func (c *Content) UnmarshalJSON(data []byte) error {
	d := &wire.Decoder{Data: data}
	d.SkipSpace()
	if err := decodeContent(d, c); err != nil {
		return err
	}
	d.SkipSpace()
	if d.Pos < len(d.Data) {
		return d.Errorf("trailing data after content")
	}
	return nil
}

// ThinkingBlock is an Anthropic extended-thinking block, or with Redacted set,
// a redacted_thinking block whose opaque Data must be sent back unchanged.
type ThinkingBlock struct {
	Thinking  string
	Signature *string // nil when the provider sent none
	Redacted  bool
	Data      string // for redacted blocks
}

// appendThinking appends b as the reference writes ThinkingBlock or
// RedactedThinkingBlock (signature omitted when nil).
func appendThinking(b []byte, t *ThinkingBlock) []byte {
	if t.Redacted {
		b = append(b, `{"type":"redacted_thinking","data":`...)
		b = wire.AppendString(b, t.Data)
		return append(b, '}')
	}
	b = append(b, `{"type":"thinking","thinking":`...)
	b = wire.AppendString(b, t.Thinking)
	if t.Signature != nil {
		b = append(b, `,"signature":`...)
		b = wire.AppendString(b, *t.Signature)
	}
	return append(b, '}')
}

// MarshalJSON implements json.Marshaler.
func (b ThinkingBlock) MarshalJSON() ([]byte, error) { return appendThinking(nil, &b), nil }

// UnmarshalJSON implements json.Unmarshaler. Unknown keys are ignored, as in
// the reference; a block without "type" is a redacted one when it has data
// and no thinking.
func (b *ThinkingBlock) UnmarshalJSON(data []byte) error {
	var raw struct {
		Type      string  `json:"type"`
		Thinking  *string `json:"thinking"`
		Signature *string `json:"signature"`
		Data      *string `json:"data"`
	}
	if err := wire.Decode(data, &raw, false); err != nil {
		return fmt.Errorf("thinking block: %w", err)
	}
	if raw.Type == "" {
		raw.Type = "thinking"
		if raw.Thinking == nil && raw.Data != nil {
			raw.Type = "redacted_thinking"
		}
	}
	switch raw.Type {
	case "thinking":
		if raw.Thinking == nil {
			return errors.New("thinking block: missing thinking")
		}
		*b = ThinkingBlock{Thinking: *raw.Thinking, Signature: raw.Signature}
	case "redacted_thinking":
		if raw.Data == nil {
			return errors.New("redacted thinking block: missing data")
		}
		*b = ThinkingBlock{Redacted: true, Data: *raw.Data}
	default:
		return fmt.Errorf("thinking block: unknown type %q", raw.Type)
	}
	return nil
}

// ReasoningItem is an OpenAI Responses reasoning item, kept so it can be sent
// back on later turns (the reference's ReasoningItemModel).
type ReasoningItem struct {
	ID               string       `json:"id,omitempty"`
	Summary          List[string] `json:"summary"`
	Content          []string     `json:"content,omitzero"` // nil is null; [] is kept
	EncryptedContent string       `json:"encrypted_content,omitempty"`
	Status           string       `json:"status,omitempty"`
}

// ToolCall origins.
const (
	OriginCompletion = "completion" // Chat Completions style APIs
	OriginResponses  = "responses"  // OpenAI Responses API
)

// ToolCall is a tool call made by the model (the reference's MessageToolCall).
// Arguments is the JSON text of the arguments exactly as the model sent them.
type ToolCall struct {
	ID              string `json:"id" required:"true"`
	ResponsesItemID string `json:"responses_item_id,omitempty"`
	Name            string `json:"name" required:"true"`
	Arguments       string `json:"arguments" required:"true"`
	Origin          string `json:"origin" required:"true"`
}

// Roles of a Message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one LLM message, provider-neutral.
type Message struct {
	Role             string              `json:"role"`
	Content          List[Content]       `json:"content"`
	ToolCalls        []ToolCall          `json:"tool_calls,omitzero"` // nil is null; [] is kept
	ToolCallID       string              `json:"tool_call_id,omitempty"`
	Name             string              `json:"name,omitempty"`
	ReasoningContent string              `json:"reasoning_content,omitempty"`
	ThinkingBlocks   List[ThinkingBlock] `json:"thinking_blocks"`
	ResponsesItem    *ReasoningItem      `json:"responses_reasoning_item,omitempty"`
}

// UserMessage returns a user message with one text block.
func UserMessage(text string) Message {
	return Message{Role: RoleUser, Content: List[Content]{Text(text)}}
}

// TextOf returns the concatenated text blocks of contents.
func TextOf(contents []Content) string {
	var b bytes.Buffer
	for _, c := range contents {
		if c.Type == ContentText {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// UnmarshalJSON implements json.Unmarshaler. Like the reference it ignores
// unknown keys, reads null content as empty and a bare string as one text
// block, and rejects unknown roles.
func (m *Message) UnmarshalJSON(data []byte) error {
	return wire.Decode(data, m, false)
}
