package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/internal/sse"
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
	// Stream comes last, where the SDK this package once used appended it.
	Stream bool `json:"stream,omitempty"`
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

const clipNotice = "<response clipped: the middle of this result was cut to fit the output limit>"

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
	msgs := chatInput(req, flags)
	out := make([]chatMessage, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, chatMessageOf(m, flags))
	}
	return out
}

// chatInput is the messages to send: a tool message takes only text (the
// document's ChatCompletionRequestToolMessage), so the images of tool
// results go in a user message after them.
func chatInput(req *llm.Request, flags chatFlags) []event.Message {
	if !flags.vision {
		return req.Messages
	}
	return llm.MoveToolImages(req.Messages)
}

// chatFlags is what a message's encoding depends on besides the message.
type chatFlags struct {
	list                  bool // content as a list of parts
	vision, sendReasoning bool
	// proxy is a LiteLLM proxy, which takes two keys the document has not
	// (a tool message's name, an assistant's thinking_blocks) and needs
	// them to speak to other providers (Claude's thinking is replayed).
	proxy bool
}

func chatFlagsOf(req *llm.Request) chatFlags {
	f := req.Features
	return chatFlags{
		// The list format carries images and cache markers; a few models
		// only take strings.
		list:   !f.ForceStringContent && (req.Config.NativeToolCalling || req.Config.CachingPrompt || f.Vision),
		vision: f.Vision, sendReasoning: f.SendReasoningContent,
		proxy: isLiteLLMProxy(req.Endpoint.Provider),
	}
}

// chatMessageOf converts one message.
func chatMessageOf(m event.Message, flags chatFlags) chatMessage {
	list := flags.list
	cm := chatMessage{Role: m.Role, ToolCallID: m.ToolCallID}
	if m.Role == event.RoleTool && flags.proxy {
		cm.Name = m.Name
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
		if list && flags.proxy {
			cm.ThinkingBlocks = m.ThinkingBlocks
		}
	}
	return cm
}

// isLiteLLMProxy reports whether provider names a LiteLLM proxy (the
// OpenHands one is too).
func isLiteLLMProxy(provider string) bool {
	return provider == "litellm_proxy" || provider == "openhands"
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
		body.Stream = true
	}
	return body
}

// Complete implements llm.Provider.
func (Chat) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	raw, err := encodeChatBody(req)
	if err != nil {
		return nil, err
	}
	var header map[string]string
	if req.Features.ThinkingMode == "manual" {
		header = map[string]string{"anthropic-beta": "interleaved-thinking-2025-05-14"}
	}
	httpResp, err := post(ctx, req, "chat/completions", raw, req.OnDelta != nil, header)
	if err != nil {
		return nil, err
	}
	var resp *llm.Response
	if req.OnDelta == nil {
		var cc chatCompletion
		if err := decodeReply(ctx, httpResp, &cc); err != nil {
			return nil, err
		}
		if len(cc.Choices) == 0 && isError(cc.Error) {
			// Some proxies answer 200 with an error body.
			return nil, streamError(cc.Error)
		}
		resp, err = chatResponse(&cc, "")
	} else {
		resp, err = streamChat(ctx, req, httpResp)
	}
	if err != nil {
		return nil, err
	}
	resp.Cost = responseCost(httpResp)
	return resp, nil
}

// chatCompletion is a Chat Completions reply, or one chunk of a streamed
// one: the fields gohands reads.
type chatCompletion struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Choices []chatChoice    `json:"choices"`
	Usage   *chatUsage      `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type chatChoice struct {
	Index        int       `json:"index"`
	Message      chatReply `json:"message"`
	Delta        chatReply `json:"delta"`
	FinishReason string    `json:"finish_reason"`
}

// chatReply is the assistant's message, or a chunk's delta of it.
type chatReply struct {
	Content          text            `json:"content"`
	Refusal          text            `json:"refusal"`
	ReasoningContent text            `json:"reasoning_content"`
	ThinkingBlocks   json.RawMessage `json:"thinking_blocks"`
	ToolCalls        []chatReplyCall `json:"tool_calls"`
}

type chatReplyCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      text `json:"name"`
		Arguments text `json:"arguments"`
	} `json:"function"`
}

// chatUsage is the token usage of a call, with the fields compatible
// servers add (cached_tokens, cache_creation_input_tokens).
type chatUsage struct {
	PromptTokens        count `json:"prompt_tokens"`
	CompletionTokens    count `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens count `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens count `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	CachedTokens             count `json:"cached_tokens"`
	CacheCreationInputTokens count `json:"cache_creation_input_tokens"`
}

// text is a string field that some servers send in another shape: null
// reads as "", a list of parts as their texts joined, any other value as
// its JSON text (tool call arguments sent as an object, say).
type text string

func (t *text) UnmarshalJSON(b []byte) error {
	switch b[0] {
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = text(s)
	case 'n':
		*t = ""
	case '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(b, &parts) != nil {
			*t = text(b)
			return nil
		}
		var sb strings.Builder
		for _, p := range parts {
			if p.Type == "text" || p.Type == "output_text" || p.Type == "" {
				sb.WriteString(p.Text)
			}
		}
		*t = text(sb.String())
	default:
		*t = text(b)
	}
	return nil
}

// count is a token count; null, a string or anything else that is not a
// number reads as 0 rather than failing the call.
type count int

func (c *count) UnmarshalJSON(b []byte) error {
	var f float64
	if json.Unmarshal(b, &f) == nil {
		*c = count(f)
	}
	return nil
}

// malformedStream is the error of a stream event that is not JSON: a
// server error, retried like one (a broken proxy, a cut line).
func malformedStream(what string, data []byte, err error) error {
	return &llm.APIError{Kind: llm.ErrServer, Message: fmt.Sprintf("openai: malformed stream %s %.80q: %v", what, data, err), Err: err}
}

// isError reports whether raw holds an error (not absent, not null).
func isError(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// maxToolCallGap bounds how far past the calls seen so far a streamed
// tool call index may point, so a hostile index cannot allocate much.
const maxToolCallGap = 128

// streamChat reads a streamed reply, passing fragments to req.OnDelta, and
// accumulates choice 0 into the final reply.
func streamChat(ctx context.Context, req *llm.Request, httpResp *http.Response) (*llm.Response, error) {
	defer httpResp.Body.Close()
	var (
		cc        chatCompletion
		content   strings.Builder
		refusal   strings.Builder
		reasoning strings.Builder
		thinking  thinkingAccumulator
		calls     []chatReplyCall
		finish    string
		chunks    int
	)
	events := sse.NewReader(httpResp.Body)
	for {
		ev, err := events.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, ctxErr(ctx, fmt.Errorf("openai: reading the stream: %w", err))
		}
		if bytes.HasPrefix(ev.Data, []byte("[DONE]")) {
			drain(httpResp.Body)
			break
		}
		var chunk chatCompletion
		if err := json.Unmarshal(ev.Data, &chunk); err != nil {
			return nil, malformedStream("chunk", ev.Data, err)
		}
		if isError(chunk.Error) {
			return nil, streamError(ev.Data)
		}
		chunks++
		if cc.ID == "" {
			cc.ID = chunk.ID
		}
		if chunk.Model != "" {
			cc.Model = chunk.Model
		}
		if u := chunk.Usage; u != nil && (u.PromptTokens > 0 || u.CompletionTokens > 0) {
			cc.Usage = u
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue // one choice is asked for
			}
			if ch.FinishReason != "" {
				finish = ch.FinishReason
			}
			d := ch.Delta
			if r := string(d.ReasoningContent); r != "" {
				reasoning.WriteString(r)
				if err := req.OnDelta(llm.Delta{Reasoning: r}); err != nil {
					return nil, err
				}
			}
			thinking.add(d.ThinkingBlocks)
			content.WriteString(string(d.Content))
			refusal.WriteString(string(d.Refusal))
			if t := string(d.Content + d.Refusal); t != "" {
				if err := req.OnDelta(llm.Delta{Text: t}); err != nil {
					return nil, err
				}
			}
			for _, tc := range d.ToolCalls {
				i := len(calls)
				if tc.Index != nil {
					i = max(*tc.Index, 0) // some servers send -1 for a single call
				}
				if i >= len(calls)+maxToolCallGap {
					return nil, fmt.Errorf("openai: stream: tool call index %d out of range", i)
				}
				for len(calls) <= i {
					calls = append(calls, chatReplyCall{})
				}
				c := &calls[i]
				if tc.ID != "" {
					c.ID = tc.ID
				}
				if tc.Type != "" {
					c.Type = tc.Type
				}
				c.Function.Name += tc.Function.Name
				c.Function.Arguments += tc.Function.Arguments
				td := &llm.ToolCallDelta{Index: i, ID: tc.ID, Name: string(tc.Function.Name), Arguments: string(tc.Function.Arguments)}
				if err := req.OnDelta(llm.Delta{ToolCall: td}); err != nil {
					return nil, err
				}
			}
		}
	}
	if chunks == 0 {
		return nil, &llm.APIError{Kind: llm.ErrNoResponse, Message: "stream ended without data"}
	}
	if cc.Usage == nil {
		cc.Usage = &chatUsage{}
	}
	msg := chatReply{Content: text(content.String()), Refusal: text(refusal.String())}
	for _, c := range calls {
		if c.ID != "" || c.Function.Name != "" {
			msg.ToolCalls = append(msg.ToolCalls, c)
		}
	}
	cc.Choices = []chatChoice{{Message: msg, FinishReason: finish}}
	resp, err := chatResponse(&cc, reasoning.String())
	if err != nil {
		return nil, err
	}
	resp.Message.ThinkingBlocks = thinking.blocks()
	return resp, nil
}

// thinkingAccumulator assembles the thinking blocks a LiteLLM proxy
// streams for Claude, as LiteLLM's own stream_chunk_builder does: the
// thinking text of successive deltas makes one block, which its signature
// ends; a block without both text and signature is dropped, and a
// redacted block stands alone.
type thinkingAccumulator struct {
	out  []event.ThinkingBlock
	text strings.Builder
	sig  string
}

func (a *thinkingAccumulator) add(raw json.RawMessage) {
	if !isError(raw) {
		return
	}
	var blocks []struct {
		Type      string `json:"type"`
		Thinking  string `json:"thinking"`
		Signature string `json:"signature"`
		Data      string `json:"data"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return
	}
	for _, b := range blocks {
		if b.Type == "redacted_thinking" {
			a.flush()
			if b.Data != "" {
				a.out = append(a.out, event.ThinkingBlock{Redacted: true, Data: b.Data})
			}
			continue
		}
		a.text.WriteString(b.Thinking)
		if b.Signature != "" {
			a.sig = b.Signature
			a.flush()
		}
	}
}

func (a *thinkingAccumulator) flush() {
	if a.text.Len() > 0 && a.sig != "" {
		sig := a.sig
		a.out = append(a.out, event.ThinkingBlock{Thinking: a.text.String(), Signature: &sig})
	}
	a.text.Reset()
	a.sig = ""
}

func (a *thinkingAccumulator) blocks() []event.ThinkingBlock {
	a.flush()
	return a.out
}

// chatResponse converts a completion: choice 0, function tool calls,
// reasoning_content and thinking blocks sent by compatible servers.
func chatResponse(cc *chatCompletion, streamedReasoning string) (*llm.Response, error) {
	if len(cc.Choices) == 0 {
		return nil, &llm.APIError{Kind: llm.ErrNoResponse, Message: "the reply has no choices"}
	}
	ch := cc.Choices[0]
	msg := event.Message{Role: event.RoleAssistant, Content: event.List[event.Content]{}}
	switch {
	case ch.Message.Content != "":
		msg.Content = append(msg.Content, event.Text(string(ch.Message.Content)))
	case ch.Message.Refusal != "":
		// A refusal is the model's answer; keep it visible.
		msg.Content = append(msg.Content, event.Text(string(ch.Message.Refusal)))
	}
	for _, tc := range ch.Message.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue
		}
		msg.ToolCalls = append(msg.ToolCalls, event.ToolCall{ID: tc.ID, Name: string(tc.Function.Name), Arguments: string(tc.Function.Arguments), Origin: event.OriginCompletion})
	}
	msg.ReasoningContent = streamedReasoning
	if msg.ReasoningContent == "" {
		msg.ReasoningContent = string(ch.Message.ReasoningContent)
	}
	if raw := ch.Message.ThinkingBlocks; isError(raw) {
		var blocks []event.ThinkingBlock
		if err := json.Unmarshal(raw, &blocks); err == nil {
			msg.ThinkingBlocks = blocks
		}
	}
	var usage llm.TokenUsage
	if u := cc.Usage; u != nil {
		usage = llm.TokenUsage{
			PromptTokens:     int(u.PromptTokens),
			CompletionTokens: int(u.CompletionTokens),
			CacheReadTokens:  int(u.PromptTokensDetails.CachedTokens),
			ReasoningTokens:  int(u.CompletionTokensDetails.ReasoningTokens),
			CacheWriteTokens: int(u.CacheCreationInputTokens),
		}
		if usage.CacheReadTokens == 0 {
			usage.CacheReadTokens = int(u.CachedTokens)
		}
	}
	return &llm.Response{
		ID:           cc.ID,
		Model:        cc.Model,
		Message:      msg,
		FinishReason: ch.FinishReason,
		Usage:        usage,
	}, nil
}

// encodeChat encodes the request body. The messages are encoded one by
// one through req.Cache, so that those of the previous request are not
// encoded again, and spliced into the rest of the body; the bytes are
// those of encoding the whole body at once.
func encodeChat(req *llm.Request) ([]byte, error) {
	b, err := encodeChatBody(req)
	if err != nil {
		return nil, err
	}
	return b.bytes(), nil
}

// encodeChatBody is encodeChat as the pieces that make the body: the
// messages are the cached encodings themselves, so that a long history is
// not copied into one buffer at each step.
func encodeChatBody(req *llm.Request) (body, error) {
	if len(req.Config.ExtraBody) > 0 {
		b, err := marshalBody(chatBody(req), req.Config.ExtraBody)
		return body{head: b}, err
	}
	flags := chatFlagsOf(req)
	input := chatInput(req, flags)
	msgs, err := req.Cache.Encode(flags, input, ',', func(i int) ([]byte, error) {
		return json.Marshal(chatMessageOf(input[i], flags))
	})
	if err != nil {
		return body{}, fmt.Errorf("openai: encoding request: %w", err)
	}
	rest, err := json.Marshal(chatBodyWith(req, []chatMessage{}))
	if err != nil {
		return body{}, fmt.Errorf("openai: encoding request: %w", err)
	}
	// "model" comes first and is a JSON string, in which a quote is
	// escaped: the first "messages":[] is the key's.
	const empty = `,"messages":[]`
	at := bytes.Index(rest, []byte(empty))
	if at < 0 {
		return body{}, errors.New("openai: encoding request: no messages key")
	}
	return body{head: rest[:at+len(empty)-1], items: msgs, tail: rest[at+len(empty)-1:]}, nil
}
