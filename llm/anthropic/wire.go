package anthropic

import "encoding/json"

// The JSON of the Messages API (version 2023-06-01), as much of it as we
// send and read. Unknown response fields are ignored.

// messagesRequest is the body of POST /v1/messages.
type messagesRequest struct {
	Model         string          `json:"model"`
	MaxTokens     int             `json:"max_tokens"`
	System        []*block        `json:"system,omitempty"`
	Messages      []*message      `json:"messages"`
	Tools         []*toolParam    `json:"tools,omitempty"`
	StopSequences []string        `json:"stop_sequences,omitempty"`
	Temperature   *float64        `json:"temperature,omitempty"`
	TopP          *float64        `json:"top_p,omitempty"`
	TopK          *int            `json:"top_k,omitempty"`
	Thinking      *thinkingConfig `json:"thinking,omitempty"`
	OutputConfig  *outputConfig   `json:"output_config,omitempty"`
	Stream        bool            `json:"stream,omitempty"`
}

// Roles of messages.
const (
	roleUser      = "user"
	roleAssistant = "assistant"
)

type message struct {
	Role    string   `json:"role"`
	Content []*block `json:"content"`
}

// block is a content block of any type; only the fields of its type are
// set. Fields the API requires even when empty are pointers.
type block struct {
	Type string `json:"type"`
	// text
	Text string `json:"text,omitempty"`
	// thinking, redacted_thinking
	Thinking  *string `json:"thinking,omitempty"`
	Signature *string `json:"signature,omitempty"`
	Data      string  `json:"data,omitempty"`
	// image
	Source *imageSource `json:"source,omitempty"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result
	ToolUseID string   `json:"tool_use_id,omitempty"`
	Content   []*block `json:"content,omitempty"`

	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type imageSource struct {
	Type      string `json:"type"` // base64 or url
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

type cacheControl struct {
	Type string `json:"type"`
}

// ephemeral is the only cache breakpoint type.
var ephemeral = &cacheControl{Type: "ephemeral"}

type toolParam struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type thinkingConfig struct {
	Type         string `json:"type"` // enabled or adaptive
	BudgetTokens int    `json:"budget_tokens,omitempty"`
	Display      string `json:"display,omitempty"`
}

type outputConfig struct {
	Effort string `json:"effort,omitempty"`
}

// messageResponse is a reply: the body of a plain call, or the message
// of a stream's message_start event.
type messageResponse struct {
	ID         string          `json:"id"`
	Model      string          `json:"model"`
	Content    []*contentBlock `json:"content"`
	StopReason string          `json:"stop_reason"`
	Usage      usage           `json:"usage"`
}

// contentBlock is a content block of a reply.
type contentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`

	// The deltas of a streamed block, appended to the fields above once
	// the stream ends (adding to a string at each delta would copy the
	// text so far every time).
	text, thinking, signature, input []byte
	// streamed reports whether input deltas arrived: they replace the
	// start event's input, {}.
	streamed bool
}

// finish applies the streamed deltas.
func (b *contentBlock) finish() {
	b.Text += string(b.text)
	b.Thinking += string(b.thinking)
	b.Signature += string(b.signature)
	if b.streamed {
		b.Input = b.input
	}
}

// usage counts tokens. In a message_delta event the counts given are
// totals for the message; absent ones are left as they were, hence the
// pointers.
type usage struct {
	InputTokens              *int                 `json:"input_tokens"`
	OutputTokens             *int                 `json:"output_tokens"`
	CacheCreationInputTokens *int                 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int                 `json:"cache_read_input_tokens"`
	OutputTokensDetails      *outputTokensDetails `json:"output_tokens_details"`
}

type outputTokensDetails struct {
	ThinkingTokens int `json:"thinking_tokens"`
}

// update overwrites the counts that u sets.
func (dst *usage) update(u usage) {
	for _, p := range []struct{ d, s **int }{
		{&dst.InputTokens, &u.InputTokens}, {&dst.OutputTokens, &u.OutputTokens},
		{&dst.CacheCreationInputTokens, &u.CacheCreationInputTokens}, {&dst.CacheReadInputTokens, &u.CacheReadInputTokens},
	} {
		if *p.s != nil {
			*p.d = *p.s
		}
	}
	if u.OutputTokensDetails != nil {
		dst.OutputTokensDetails = u.OutputTokensDetails
	}
}

// streamEvent is one event of a streamed reply, of any type.
type streamEvent struct {
	Type         string           `json:"type"`
	Message      *messageResponse `json:"message"`       // message_start
	Index        int              `json:"index"`         // content_block_*
	ContentBlock *contentBlock    `json:"content_block"` // content_block_start
	Delta        struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"` // message_delta
	} `json:"delta"`
	Usage *usage `json:"usage"` // message_delta
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func count(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
