package event

import (
	"bytes"
	"encoding/json"
	"fmt"
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

type textContentJSON struct {
	CachePrompt bool   `json:"cache_prompt"`
	Type        string `json:"type"`
	Text        string `json:"text"`
}

type imageContentJSON struct {
	CachePrompt bool     `json:"cache_prompt"`
	Type        string   `json:"type"`
	ImageURLs   []string `json:"image_urls"`
}

// MarshalJSON implements json.Marshaler.
func (c Content) MarshalJSON() ([]byte, error) {
	switch c.Type {
	case ContentText, "":
		return marshal(textContentJSON{c.CachePrompt, ContentText, c.Text})
	case ContentImage:
		urls := c.ImageURLs
		if urls == nil {
			urls = []string{}
		}
		return marshal(imageContentJSON{c.CachePrompt, ContentImage, urls})
	}
	return nil, fmt.Errorf("event: unknown content type %q", c.Type)
}

// UnmarshalJSON implements json.Unmarshaler. Text content is strict, as in the
// reference (only the deprecated enable_truncation key is tolerated); image
// content ignores unknown keys.
func (c *Content) UnmarshalJSON(data []byte) error {
	var probe struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return err
	}
	switch probe.Type {
	case ContentText:
		var t struct {
			textContentJSON
			EnableTruncation any `json:"enable_truncation"`
		}
		if err := unmarshalStrict(data, &t); err != nil {
			return fmt.Errorf("TextContent: %w", err)
		}
		*c = Content{Type: ContentText, Text: t.Text, CachePrompt: t.CachePrompt}
	case ContentImage:
		var im imageContentJSON
		if err := json.Unmarshal(data, &im); err != nil {
			return fmt.Errorf("ImageContent: %w", err)
		}
		*c = Content{Type: ContentImage, ImageURLs: im.ImageURLs, CachePrompt: im.CachePrompt}
	default:
		return fmt.Errorf("content: unknown type %q", probe.Type)
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

type thinkingJSON struct {
	Type      string  `json:"type"`
	Thinking  string  `json:"thinking"`
	Signature *string `json:"signature,omitempty"`
}

type redactedThinkingJSON struct {
	Type string `json:"type"`
	Data string `json:"data"`
}

// MarshalJSON implements json.Marshaler.
func (b ThinkingBlock) MarshalJSON() ([]byte, error) {
	if b.Redacted {
		return marshal(redactedThinkingJSON{"redacted_thinking", b.Data})
	}
	return marshal(thinkingJSON{"thinking", b.Thinking, b.Signature})
}

// UnmarshalJSON implements json.Unmarshaler.
func (b *ThinkingBlock) UnmarshalJSON(data []byte) error {
	var raw struct {
		Type      string  `json:"type"`
		Thinking  string  `json:"thinking"`
		Signature *string `json:"signature"`
		Data      string  `json:"data"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	switch raw.Type {
	case "thinking":
		*b = ThinkingBlock{Thinking: raw.Thinking, Signature: raw.Signature}
	case "redacted_thinking":
		*b = ThinkingBlock{Redacted: true, Data: raw.Data}
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
	Content          []string     `json:"content,omitempty"`
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
	ID              string `json:"id"`
	ResponsesItemID string `json:"responses_item_id,omitempty"`
	Name            string `json:"name"`
	Arguments       string `json:"arguments"`
	Origin          string `json:"origin"`
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
	ToolCalls        []ToolCall          `json:"tool_calls,omitempty"`
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
// block.
func (m *Message) UnmarshalJSON(data []byte) error {
	type plain Message
	var raw struct {
		plain
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*m = Message(raw.plain)
	switch c := bytes.TrimSpace(raw.Content); {
	case len(c) == 0 || bytes.Equal(c, []byte("null")):
		m.Content = List[Content]{}
	case c[0] == '"':
		var s string
		if err := json.Unmarshal(c, &s); err != nil {
			return err
		}
		m.Content = List[Content]{Text(s)}
	default:
		var list []Content
		if err := json.Unmarshal(c, &list); err != nil {
			return fmt.Errorf("message content: %w", err)
		}
		m.Content = list
	}
	switch m.Role {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool:
	default:
		return fmt.Errorf("message: invalid role %q", m.Role)
	}
	return nil
}
