package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Chat is the Chat Completions provider.
type Chat struct{}

// chatRequest is a Chat Completions request body, keys in the order the
// reference sends them.
type chatRequest struct {
	Model                string         `json:"model"`
	Messages             []chatMessage  `json:"messages"`
	MaxCompletionTokens  int            `json:"max_completion_tokens,omitempty"`
	MaxTokens            int            `json:"max_tokens,omitempty"`
	Temperature          *float64       `json:"temperature,omitempty"`
	TopP                 *float64       `json:"top_p,omitempty"`
	TopK                 *float64       `json:"top_k,omitempty"`
	Seed                 *int           `json:"seed,omitempty"`
	Stop                 []string       `json:"stop,omitempty"`
	ReasoningEffort      string         `json:"reasoning_effort,omitempty"`
	Tools                []chatTool     `json:"tools,omitempty"`
	Thinking             *thinkingParam `json:"thinking,omitempty"`
	PromptCacheKey       string         `json:"prompt_cache_key,omitempty"`
	PromptCacheRetention string         `json:"prompt_cache_retention,omitempty"`
	StreamOptions        *streamOptions `json:"stream_options,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type thinkingParam struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens,omitempty"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// chatMessage is one message on the wire. Content is a string or a list of
// parts (nil drops the key, as for an assistant message with only tool
// calls).
type chatMessage struct {
	Content          any                   `json:"content,omitempty"`
	Role             string                `json:"role"`
	CacheControl     *cacheControl         `json:"cache_control,omitempty"`
	ToolCalls        []chatToolCall        `json:"tool_calls,omitempty"`
	ToolCallID       string                `json:"tool_call_id,omitempty"`
	Name             string                `json:"name,omitempty"`
	ReasoningContent string                `json:"reasoning_content,omitempty"`
	ThinkingBlocks   []event.ThinkingBlock `json:"thinking_blocks,omitempty"`
}

type cacheControl struct {
	Type string `json:"type"`
}

var ephemeral = &cacheControl{Type: "ephemeral"}

type chatPart struct {
	Type         string        `json:"type"`
	Text         *string       `json:"text,omitempty"`
	ImageURL     *imageURL     `json:"image_url,omitempty"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

type chatToolCall struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function chatCallFunction `json:"function"`
}

type chatCallFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// maxToolText is the longest tool result sent; longer ones are cut in the
// middle (the reference's global tool-text limit).
const maxToolText = 50000

const clipNotice = "<response clipped><NOTE>Due to the max output limit, only part of the full response has been shown to you.</NOTE>"

// clip keeps the head and tail of s around a notice so it fits limit.
func clip(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	keep := max(limit-len(clipNotice), 0)
	head := (keep + 1) / 2
	tail := keep - head
	return s[:head] + clipNotice + s[len(s)-tail:]
}

// chatMessages converts messages to the Chat Completions wire format, as
// the reference serialises them.
func chatMessages(req *llm.Request) []chatMessage {
	flags := chatFlagsOf(req)
	out := make([]chatMessage, 0, len(req.Messages))
	for _, m := range req.Messages {
		out = append(out, chatMessageOf(m, flags))
	}
	return out
}

// chatFlags is what a message's encoding depends on besides the message.
type chatFlags struct {
	list                  bool // content as a list of parts
	vision, sendReasoning bool
}

func chatFlagsOf(req *llm.Request) chatFlags {
	f := req.Features
	return chatFlags{
		// The list format carries images and cache markers; a few models
		// only take strings.
		list:   !f.ForceStringContent && (req.Config.NativeToolCalling || req.Config.CachingPrompt || f.Vision),
		vision: f.Vision, sendReasoning: f.SendReasoningContent,
	}
}

// chatMessageOf converts one message.
func chatMessageOf(m event.Message, flags chatFlags) chatMessage {
	list := flags.list
	cm := chatMessage{Role: m.Role, ToolCallID: m.ToolCallID, Name: m.Name}
	if m.Role != event.RoleTool {
		cm.Name = ""
	}
	contents := m.Content
	if m.Role == event.RoleTool {
		contents = clipTexts(contents)
	}
	if list {
		parts := make([]chatPart, 0, len(contents))
		for _, c := range contents {
			switch c.Type {
			case event.ContentImage:
				if !flags.vision {
					continue
				}
				for _, u := range c.ImageURLs {
					parts = append(parts, chatPart{Type: "image_url", ImageURL: &imageURL{URL: u}})
				}
			default:
				if c.Text == "" && m.Role == event.RoleAssistant && len(m.ToolCalls) > 0 {
					continue
				}
				t := c.Text
				parts = append(parts, chatPart{Type: "text", Text: &t})
			}
			if c.CachePrompt && len(parts) > 0 {
				if m.Role == event.RoleTool {
					// Tool messages carry the marker on the message.
					cm.CacheControl = ephemeral
				} else {
					parts[len(parts)-1].CacheControl = ephemeral
				}
			}
		}
		switch {
		case len(parts) > 0:
			cm.Content = parts
		case m.Role == event.RoleAssistant && len(m.ToolCalls) > 0:
			// No content key at all.
		default:
			cm.Content = ""
		}
	} else {
		var texts []string
		for _, c := range contents {
			if c.Type != event.ContentImage {
				texts = append(texts, c.Text)
			}
		}
		text := strings.Join(texts, "\n")
		if text != "" || m.Role != event.RoleAssistant || len(m.ToolCalls) == 0 {
			cm.Content = text
		}
	}
	if cm.Content == nil && (m.Role != event.RoleAssistant || len(m.ToolCalls) == 0) {
		cm.Content = ""
	}
	for _, tc := range m.ToolCalls {
		cm.ToolCalls = append(cm.ToolCalls, chatToolCall{ID: tc.ID, Type: "function", Function: chatCallFunction{Name: tc.Name, Arguments: tc.Arguments}})
	}
	if m.Role == event.RoleAssistant {
		if flags.sendReasoning {
			cm.ReasoningContent = m.ReasoningContent
		}
		if list {
			cm.ThinkingBlocks = m.ThinkingBlocks
		}
	}
	return cm
}

func clipTexts(contents []event.Content) []event.Content {
	for i, c := range contents {
		if c.Type != event.ContentImage && len(c.Text) > maxToolText {
			out := append([]event.Content(nil), contents...)
			for j := i; j < len(out); j++ {
				if out[j].Type != event.ContentImage {
					out[j].Text = clip(out[j].Text, maxToolText)
				}
			}
			return out
		}
	}
	return contents
}

// chatBody builds the request body.
func chatBody(req *llm.Request) chatRequest {
	return chatBodyWith(req, chatMessages(req))
}

// chatBodyWith builds the request body around msgs.
func chatBodyWith(req *llm.Request, msgs []chatMessage) chatRequest {
	cfg, f, ep := req.Config, req.Features, req.Endpoint
	body := chatRequest{Model: ep.Model, Messages: msgs, Stop: req.Stop, Seed: cfg.Seed}
	if n := req.MaxOutputTokens; n > 0 {
		if ep.Provider == "azure" {
			body.MaxTokens = n
		} else {
			body.MaxCompletionTokens = n
		}
	}
	sampling := f.SamplingParams
	if f.ThinkingMode == "manual" && req.Config.ExtendedThinkingBudget > 0 {
		// Anthropic's budgeted thinking through an OpenAI-compatible
		// proxy: the budget must stay below max_tokens, and sampling
		// parameters are refused.
		budget := cfg.ExtendedThinkingBudget
		if req.MaxOutputTokens > 0 {
			budget = min(budget, req.MaxOutputTokens-1)
			body.MaxTokens = req.MaxOutputTokens
		}
		body.Thinking = &thinkingParam{Type: "enabled", BudgetTokens: budget}
		sampling = false
	}
	if sampling {
		body.Temperature, body.TopP, body.TopK = cfg.Temperature, cfg.TopP, cfg.TopK
	}
	if f.ReasoningEffort && cfg.ReasoningEffort != "" {
		body.ReasoningEffort = cfg.ReasoningEffort
	}
	for _, t := range req.Tools {
		body.Tools = append(body.Tools, chatTool{Type: "function", Function: chatFunction{Name: t.Name, Description: t.Description, Parameters: t.Parameters}})
	}
	if cacheKeyAware(ep.Provider) {
		body.PromptCacheKey = req.ConversationID
		if f.PromptCacheRetain && cfg.PromptCacheRetention != "" {
			body.PromptCacheRetention = cfg.PromptCacheRetention
		}
	}
	if req.OnDelta != nil {
		body.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	return body
}

// Complete implements llm.Provider.
func (Chat) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	raw, err := encodeChat(req)
	if err != nil {
		return nil, err
	}
	opts, err := requestOptions(req, raw, "chat/completions")
	if err != nil {
		return nil, err
	}
	if req.Features.ThinkingMode == "manual" {
		opts = append(opts, option.WithHeader("anthropic-beta", "interleaved-thinking-2025-05-14"))
	}
	var httpResp *http.Response
	opts = append(opts, option.WithResponseInto(&httpResp))
	svc := oai.NewChatCompletionService(opts...)
	if req.OnDelta == nil {
		cc, err := svc.New(ctx, oai.ChatCompletionNewParams{})
		if err != nil {
			return nil, mapError(ctxErr(ctx, err))
		}
		resp, err := chatResponse(cc, "")
		if err != nil {
			return nil, err
		}
		resp.Cost = responseCost(httpResp)
		return resp, nil
	}
	return streamChat(ctx, svc, req, &httpResp)
}

// streamChat runs a streaming call, passing fragments to req.OnDelta and
// accumulating the final completion.
func streamChat(ctx context.Context, svc oai.ChatCompletionService, req *llm.Request, httpResp **http.Response) (*llm.Response, error) {
	stream := svc.NewStreaming(ctx, oai.ChatCompletionNewParams{})
	defer stream.Close()
	var (
		acc       oai.ChatCompletionAccumulator
		reasoning strings.Builder
		usage     *oai.CompletionUsage
		chunks    int
	)
	for stream.Next() {
		chunk := stream.Current()
		chunks++
		acc.AddChunk(chunk)
		if chunk.JSON.Usage.Valid() && (chunk.Usage.PromptTokens > 0 || chunk.Usage.CompletionTokens > 0) {
			u := chunk.Usage
			usage = &u
		}
		if len(chunk.Choices) == 0 {
			continue
		}
		d := chunk.Choices[0].Delta
		if r := extraString(d.JSON.ExtraFields, "reasoning_content"); r != "" {
			reasoning.WriteString(r)
			if err := req.OnDelta(llm.Delta{Reasoning: r}); err != nil {
				return nil, err
			}
		}
		if text := d.Content + d.Refusal; text != "" {
			if err := req.OnDelta(llm.Delta{Text: text}); err != nil {
				return nil, err
			}
		}
		for _, tc := range d.ToolCalls {
			td := &llm.ToolCallDelta{Index: int(tc.Index), ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}
			if err := req.OnDelta(llm.Delta{ToolCall: td}); err != nil {
				return nil, err
			}
		}
	}
	if err := stream.Err(); err != nil {
		return nil, mapError(ctxErr(ctx, err))
	}
	if chunks == 0 {
		return nil, &llm.APIError{Kind: llm.ErrNoResponse, Message: "stream ended without data"}
	}
	cc := acc.ChatCompletion
	if usage != nil {
		cc.Usage = *usage
	}
	resp, err := chatResponse(&cc, reasoning.String())
	if err != nil {
		return nil, err
	}
	resp.Cost = responseCost(*httpResp)
	return resp, nil
}

// chatResponse converts a completion: choice 0, function tool calls,
// reasoning_content and thinking blocks sent by compatible servers.
func chatResponse(cc *oai.ChatCompletion, streamedReasoning string) (*llm.Response, error) {
	if cc == nil || len(cc.Choices) == 0 {
		return nil, &llm.APIError{Kind: llm.ErrNoResponse, Message: "the reply has no choices"}
	}
	ch := cc.Choices[0]
	msg := event.Message{Role: event.RoleAssistant, Content: event.List[event.Content]{}}
	switch {
	case ch.Message.Content != "":
		msg.Content = append(msg.Content, event.Text(ch.Message.Content))
	case ch.Message.Refusal != "":
		// A refusal is the model's answer; keep it visible.
		msg.Content = append(msg.Content, event.Text(ch.Message.Refusal))
	}
	for _, tc := range ch.Message.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue
		}
		msg.ToolCalls = append(msg.ToolCalls, event.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments, Origin: event.OriginCompletion})
	}
	msg.ReasoningContent = streamedReasoning
	if msg.ReasoningContent == "" {
		msg.ReasoningContent = extraString(ch.Message.JSON.ExtraFields, "reasoning_content")
	}
	if raw := extraRaw(ch.Message.JSON.ExtraFields, "thinking_blocks"); raw != "" {
		var blocks []event.ThinkingBlock
		if err := json.Unmarshal([]byte(raw), &blocks); err == nil {
			msg.ThinkingBlocks = blocks
		}
	}
	u := cc.Usage
	usage := llm.TokenUsage{
		PromptTokens:     int(u.PromptTokens),
		CompletionTokens: int(u.CompletionTokens),
		CacheReadTokens:  int(u.PromptTokensDetails.CachedTokens),
		ReasoningTokens:  int(u.CompletionTokensDetails.ReasoningTokens),
	}
	if usage.CacheReadTokens == 0 {
		usage.CacheReadTokens = extraInt(u.JSON.ExtraFields, "cached_tokens")
	}
	usage.CacheWriteTokens = extraInt(u.JSON.ExtraFields, "cache_creation_input_tokens")
	return &llm.Response{
		ID:           cc.ID,
		Model:        cc.Model,
		Message:      msg,
		FinishReason: ch.FinishReason,
		Usage:        usage,
	}, nil
}

// extraRaw returns the JSON of a field the SDK does not know (the SDK
// marks such fields invalid, so Valid cannot be used), or "".
func extraRaw[F interface{ Raw() string }](fields map[string]F, key string) string {
	f, ok := fields[key]
	if !ok {
		return ""
	}
	if raw := f.Raw(); raw != "null" {
		return raw
	}
	return ""
}

// extraString reads a string field the SDK does not know.
func extraString[F interface{ Raw() string }](fields map[string]F, key string) string {
	var s string
	if raw := extraRaw(fields, key); raw != "" && json.Unmarshal([]byte(raw), &s) == nil {
		return s
	}
	return ""
}

// extraInt reads an integer field the SDK does not know.
func extraInt[F interface{ Raw() string }](fields map[string]F, key string) int {
	var n int
	if raw := extraRaw(fields, key); raw != "" && json.Unmarshal([]byte(raw), &n) == nil {
		return n
	}
	return 0
}

// encodeChat encodes the request body. The messages are encoded one by
// one through req.Cache, so that those of the previous request are not
// encoded again, and spliced into the rest of the body; the bytes are
// those of encoding the whole body at once.
func encodeChat(req *llm.Request) ([]byte, error) {
	if len(req.Config.ExtraBody) > 0 {
		return marshalBody(chatBody(req), req.Config.ExtraBody)
	}
	flags := chatFlagsOf(req)
	msgs, err := req.Cache.Encode(flags, req.Messages, func(i int) ([]byte, error) {
		return json.Marshal(chatMessageOf(req.Messages[i], flags))
	})
	if err != nil {
		return nil, fmt.Errorf("openai: encoding request: %w", err)
	}
	rest, err := json.Marshal(chatBodyWith(req, []chatMessage{}))
	if err != nil {
		return nil, fmt.Errorf("openai: encoding request: %w", err)
	}
	// "model" comes first and is a JSON string, in which a quote is
	// escaped: the first "messages":[] is the key's.
	const empty = `,"messages":[]`
	at := bytes.Index(rest, []byte(empty))
	if at < 0 {
		return nil, errors.New("openai: encoding request: no messages key")
	}
	n := len(rest) + len(msgs)
	for _, m := range msgs {
		n += len(m)
	}
	b := make([]byte, 0, n)
	b = append(b, rest[:at+len(empty)-1]...)
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, m...)
	}
	return append(b, rest[at+len(empty)-1:]...), nil
}
