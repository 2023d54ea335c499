// Package anthropic is the gohands provider for Anthropic's Messages API
// (version 2023-06-01), spoken directly in JSON over net/http, streamed
// as server-sent events. Importing it registers it with package llm for
// "anthropic/" models and bare claude-* names.
//
// It sends the system prompt, tools, images and tool results in the
// Messages shape, turns the prompt-cache marks of package llm into
// cache_control breakpoints, and enables extended thinking as the
// reference does (a budget for the models with manual thinking, adaptive
// thinking where the model has it, a budget from the reasoning effort
// otherwise). Thinking and redacted_thinking blocks come back as
// event.ThinkingBlock values and are sent back unchanged on later turns,
// as the API requires while a tool-use loop is running.
//
// Only the config is used: no ANTHROPIC_* environment variable and no
// profile file is read.
//
// Claude on Vertex AI ("vertex_ai/claude-..." models) is spoken here too:
// rawPredict and streamRawPredict with anthropic_version vertex-2023-10-16,
// authorized with Google credentials (package llm/internal/vertex). Claude
// on Bedrock is llm/bedrock's, through the Converse API.
//
// Not supported yet: the
// is_error flag of tool results (the event model has no such flag),
// document and PDF blocks, Anthropic's server tools (web search, code
// execution), citations, pause_turn continuations and the Batches, Files
// and token-counting endpoints.
package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/internal/httpapi"
	"github.com/gohands/gohands/llm/internal/sse"
	"github.com/gohands/gohands/llm/internal/vertex"
)

func init() {
	llm.RegisterProvider(llm.APIAnthropic, Provider{})
}

// Provider speaks the Anthropic Messages API. The zero value is ready to
// use; it holds no state.
type Provider struct{}

var _ llm.Provider = Provider{}

// apiVersion is the anthropic-version header: the API version we speak.
// 2023-06-01 is still the current and only version of the Messages API
// (the official SDK, anthropic 0.125.0, sends it too); features since come
// as anthropic-beta headers.
const apiVersion = "2023-06-01"

// maxNonStreamingTokens is the largest max_tokens of a call not streamed:
// Anthropic requires streaming for calls that may take over ten minutes,
// which its SDK reckons as an hour per 128,000 output tokens (and refuses
// larger ones). A larger call is streamed, without deltas for the caller.
const maxNonStreamingTokens = 128_000 * 10 / 60

// Complete implements llm.Provider.
func (Provider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	params, header, err := buildRequest(req)
	if err != nil {
		return nil, err
	}
	onDelta := req.OnDelta
	if onDelta == nil && params.MaxTokens > maxNonStreamingTokens {
		onDelta = func(llm.Delta) error { return nil }
	}
	params.Stream = onDelta != nil
	onVertex := req.Endpoint.Provider == "vertex_ai"
	extra := req.Config.ExtraBody
	if onVertex {
		// Vertex takes the model in the path and the API version in the
		// body.
		extra = maps.Clone(extra)
		if extra == nil {
			extra = map[string]any{}
		}
		extra["anthropic_version"] = vertexVersion
	}
	data, err := encodeBody(params, extra)
	if err != nil {
		return nil, fmt.Errorf("anthropic: encoding the request: %w", err)
	}
	if onVertex {
		if data, err = dropModel(data); err != nil {
			return nil, fmt.Errorf("anthropic: encoding the request: %w", err)
		}
		verb := "rawPredict"
		if params.Stream {
			verb = "streamRawPredict"
		}
		call, err := vertex.Prepare(ctx, req, "anthropic", verb)
		if err != nil {
			return nil, err
		}
		resp, err := send(ctx, req, call.URL, call.Header, header, data, params.Stream, onDelta)
		return resp, vertex.Redact(err, call.Secrets)
	}
	return send(ctx, req, baseURL(req.Endpoint.BaseURL)+"v1/messages", apiKeyHeader(req), header, data, params.Stream, onDelta)
}

// vertexVersion is the API version of Claude on Vertex AI, which its
// rawPredict takes in the body as anthropic_version.
const vertexVersion = "vertex-2023-10-16"

// dropModel removes the model from an encoded body.
func dropModel(data []byte) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	delete(m, "model")
	return json.Marshal(m)
}

// apiKeyHeader is the API key header of a call to Anthropic's API (or a
// compatible proxy), with the anthropic-version header.
func apiKeyHeader(req *llm.Request) http.Header {
	h := http.Header{"Anthropic-Version": {apiVersion}}
	if key := req.Config.APIKey.Value(); key != "" {
		name := req.Endpoint.AuthHeader
		if name == "" {
			name = "x-api-key"
		}
		h.Set(name, req.Endpoint.AuthPrefix+key)
	}
	return h
}

// send posts one call to u with the auth headers and the extra headers
// of the request, and reads its reply.
func send(ctx context.Context, req *llm.Request, u string, auth, header http.Header, data []byte, streamed bool, onDelta func(llm.Delta) error) (*llm.Response, error) {
	hr, err := newHTTPRequest(ctx, u, auth, header, data, streamed)
	if err != nil {
		return nil, err
	}
	hc := req.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := httpapi.Do(hc, hr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if onDelta == nil {
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("anthropic: reading the reply: %w", err)
		}
		var m messageResponse
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, malformed(fmt.Errorf("reply %.80q: %w", raw, err))
		}
		return toResponse(&m), nil
	}
	return stream(resp.Body, onDelta)
}

// encodeBody encodes the request with the extra body keys set at its top
// level, replacing ours.
func encodeBody(p *messagesRequest, extra map[string]any) ([]byte, error) {
	data, err := json.Marshal(p)
	if err != nil || len(extra) == 0 {
		return data, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	maps.Copy(m, extra)
	return json.Marshal(m)
}

// newHTTPRequest makes the POST of one call to u.
func newHTTPRequest(ctx context.Context, u string, auth, header http.Header, body []byte, streamed bool) (*http.Request, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("User-Agent", "gohands")
	hr.Header.Set("Accept", "application/json")
	if streamed {
		hr.Header.Set("Accept", "text/event-stream")
	}
	maps.Copy(hr.Header, auth)
	// The config's extra headers come last: they may override ours.
	maps.Copy(hr.Header, header)
	return hr, nil
}

// baseURL returns the server root with a trailing slash, accepting base
// URLs written with /v1 or /v1/messages as LiteLLM users do.
func baseURL(u string) string {
	u = strings.TrimSuffix(u, "/")
	u = strings.TrimSuffix(u, "/messages")
	u = strings.TrimSuffix(u, "/v1")
	return u + "/"
}

// malformed reports a reply that is not the JSON the API sends: a broken
// server or proxy, worth another try.
func malformed(err error) error {
	return &llm.APIError{Kind: llm.ErrServer, Message: "anthropic: malformed reply: " + err.Error(), Err: err}
}

// stream reads a streamed reply, passing fragments to onDelta and
// gathering the message.
func stream(body io.Reader, onDelta func(llm.Delta) error) (*llm.Response, error) {
	var msg messageResponse
	calls := map[int]int{} // content block index -> tool call index
	started, stopped := false, false
	for ev, err := range sse.Events(body) {
		if err != nil {
			return nil, fmt.Errorf("anthropic: stream: %w", err)
		}
		var e streamEvent
		if err := json.Unmarshal(ev.Data, &e); err != nil {
			return nil, malformed(fmt.Errorf("stream event %.80q: %w", ev.Data, err))
		}
		if ev.Name == "error" || e.Type == "error" {
			return nil, streamError(ev.Data, e)
		}
		if !started && e.Type != "message_start" && e.Type != "ping" {
			return nil, malformed(fmt.Errorf("stream: %s event before message_start", e.Type))
		}
		var d llm.Delta
		switch e.Type {
		case "message_start":
			if e.Message == nil {
				return nil, malformed(fmt.Errorf("stream: message_start without a message"))
			}
			msg, started = *e.Message, true
			msg.Content = nil
		case "content_block_start":
			// Blocks start in index order, each right after the last.
			b := e.ContentBlock
			if b == nil || e.Index != len(msg.Content) {
				return nil, malformed(fmt.Errorf("stream: content block %d started out of order (have %d)", e.Index, len(msg.Content)))
			}
			msg.Content = append(msg.Content, b)
			if b.Type == "tool_use" {
				i := len(calls)
				calls[e.Index] = i
				d.ToolCall = &llm.ToolCallDelta{Index: i, ID: b.ID, Name: b.Name}
			}
		case "content_block_delta":
			if e.Index < 0 || e.Index >= len(msg.Content) {
				return nil, malformed(fmt.Errorf("stream: delta for content block %d, which has not started", e.Index))
			}
			b := msg.Content[e.Index]
			switch e.Delta.Type {
			case "text_delta":
				b.text = append(b.text, e.Delta.Text...)
				d.Text = e.Delta.Text
			case "thinking_delta":
				b.thinking = append(b.thinking, e.Delta.Thinking...)
				d.Reasoning = e.Delta.Thinking
			case "signature_delta":
				b.signature = append(b.signature, e.Delta.Signature...)
			case "input_json_delta":
				b.input = append(b.input, e.Delta.PartialJSON...)
				b.streamed = true
				if i, ok := calls[e.Index]; ok && e.Delta.PartialJSON != "" {
					d.ToolCall = &llm.ToolCallDelta{Index: i, Arguments: e.Delta.PartialJSON}
				}
			}
		case "message_delta":
			if e.Delta.StopReason != "" {
				msg.StopReason = e.Delta.StopReason
			}
			if e.Usage != nil {
				msg.Usage.update(*e.Usage)
			}
		case "message_stop":
			stopped = true
		}
		if d != (llm.Delta{}) {
			if err := onDelta(d); err != nil {
				return nil, err
			}
		}
		if stopped {
			break
		}
	}
	if !stopped {
		return nil, &llm.APIError{Kind: llm.ErrNoResponse, Message: "anthropic: stream ended before message_stop"}
	}
	for _, b := range msg.Content {
		b.finish()
	}
	return toResponse(&msg), nil
}

// streamError converts an error event, sent in a stream that began with
// 200: its type says what went wrong.
func streamError(data []byte, e streamEvent) error {
	status := 0
	if e.Error != nil {
		status = statusOfType[e.Error.Type]
	}
	return httpapi.Error(status, nil, data)
}

// toResponse converts a complete message.
func toResponse(m *messageResponse) *llm.Response {
	out := event.Message{Role: event.RoleAssistant, Content: event.List[event.Content]{}}
	var text, reasoning strings.Builder
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "thinking":
			sig := b.Signature
			out.ThinkingBlocks = append(out.ThinkingBlocks, event.ThinkingBlock{Thinking: b.Thinking, Signature: &sig})
			reasoning.WriteString(b.Thinking)
		case "redacted_thinking":
			out.ThinkingBlocks = append(out.ThinkingBlocks, event.ThinkingBlock{Redacted: true, Data: b.Data})
		case "tool_use":
			args := string(bytes.TrimSpace(b.Input))
			if args == "" {
				args = "{}"
			}
			out.ToolCalls = append(out.ToolCalls, event.ToolCall{ID: b.ID, Name: b.Name, Arguments: args, Origin: event.OriginCompletion})
		}
	}
	if text.Len() > 0 {
		out.Content = append(out.Content, event.Text(text.String()))
	}
	out.ReasoningContent = reasoning.String()
	u := m.Usage
	r := &llm.Response{
		ID:           m.ID,
		Model:        m.Model,
		Message:      out,
		FinishReason: finishReason(m.StopReason),
		Usage: llm.TokenUsage{
			// Anthropic counts cached input apart; PromptTokens counts all.
			PromptTokens:     count(u.InputTokens) + count(u.CacheReadInputTokens) + count(u.CacheCreationInputTokens),
			CompletionTokens: count(u.OutputTokens),
			CacheReadTokens:  count(u.CacheReadInputTokens),
			CacheWriteTokens: count(u.CacheCreationInputTokens),
		},
	}
	if d := u.OutputTokensDetails; d != nil {
		r.Usage.ReasoningTokens = d.ThinkingTokens
	}
	return r
}

// finishReason maps a stop reason to the Chat Completions vocabulary.
func finishReason(r string) string {
	switch r {
	case "tool_use":
		return "tool_calls"
	case "max_tokens":
		return "length"
	case "refusal":
		return "content_filter"
	}
	return "stop"
}

// statusOfType maps Anthropic error types to their HTTP statuses.
var statusOfType = map[string]int{
	"invalid_request_error": http.StatusBadRequest,
	"authentication_error":  http.StatusUnauthorized,
	"billing_error":         http.StatusPaymentRequired,
	"permission_error":      http.StatusForbidden,
	"not_found_error":       http.StatusNotFound,
	"request_too_large":     http.StatusRequestEntityTooLarge,
	"rate_limit_error":      http.StatusTooManyRequests,
	"api_error":             http.StatusInternalServerError,
	"timeout_error":         http.StatusGatewayTimeout,
	"overloaded_error":      529,
}
