// Package anthropic is the gohands provider for Anthropic's Messages API,
// built on the official anthropic-sdk-go (v1, API version 2023-06-01).
// Importing it registers it with package llm for "anthropic/" models and
// bare claude-* names.
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
// The client is always configured explicitly: no ANTHROPIC_* environment
// variable and no profile file is read.
//
// Not supported yet: Claude on Bedrock or Vertex AI (their auth), the
// is_error flag of tool results (the event model has no such flag),
// document and PDF blocks, Anthropic's server tools (web search, code
// execution), citations, pause_turn continuations and the Batches, Files
// and token-counting endpoints.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

func init() {
	llm.RegisterProvider(llm.APIAnthropic, Provider{})
}

// Provider speaks the Anthropic Messages API. The zero value is ready to
// use; it holds no state.
type Provider struct{}

var _ llm.Provider = Provider{}

// noDeadline is the SDK request timeout of calls whose context has no
// deadline (the config's timeout is 0).
const noDeadline = 24 * time.Hour

// Complete implements llm.Provider.
func (Provider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	params, opts, err := buildParams(req)
	if err != nil {
		return nil, err
	}
	client := sdk.NewClient(clientOptions(req)...)
	if req.OnDelta == nil {
		// The SDK refuses large max_tokens without streaming unless a
		// request timeout is set; ours is the context's deadline.
		timeout := noDeadline
		if d, ok := ctx.Deadline(); ok {
			timeout = max(time.Until(d), time.Millisecond)
		}
		opts = append(opts, option.WithRequestTimeout(timeout))
		msg, err := client.Messages.New(ctx, params, opts...)
		if err != nil {
			return nil, mapError(err)
		}
		return toResponse(msg), nil
	}
	return stream(ctx, &client, params, opts, req.OnDelta)
}

// clientOptions configure the client from the request alone.
func clientOptions(req *llm.Request) []option.RequestOption {
	ep := req.Endpoint
	hc := req.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(hc),
		option.WithBaseURL(baseURL(ep.BaseURL)),
		// Package llm retries; the SDK must not retry on its own.
		option.WithMaxRetries(0),
	}
	if key := req.Config.APIKey.Value(); key != "" {
		if ep.AuthHeader == "" || strings.EqualFold(ep.AuthHeader, "x-api-key") {
			opts = append(opts, option.WithAPIKey(key))
		} else {
			opts = append(opts, option.WithHeader(ep.AuthHeader, ep.AuthPrefix+key))
		}
	}
	return opts
}

// baseURL returns the server root the SDK wants (it adds /v1/messages),
// accepting base URLs written with /v1 or /v1/messages as LiteLLM users
// do.
func baseURL(u string) string {
	u = strings.TrimSuffix(u, "/")
	u = strings.TrimSuffix(u, "/messages")
	u = strings.TrimSuffix(u, "/v1")
	return u + "/"
}

// stream makes a streamed call, passing fragments to onDelta and
// accumulating the message.
func stream(ctx context.Context, client *sdk.Client, params sdk.MessageNewParams, opts []option.RequestOption, onDelta func(llm.Delta) error) (*llm.Response, error) {
	s := client.Messages.NewStreaming(ctx, params, opts...)
	defer s.Close()
	var msg sdk.Message
	calls := map[int64]int{} // content block index -> tool call index
	stopped := false
	for s.Next() {
		ev := s.Current()
		if err := msg.Accumulate(ev); err != nil {
			return nil, fmt.Errorf("anthropic: stream: %w", err)
		}
		var d llm.Delta
		switch ev.Type {
		case "content_block_start":
			if b := ev.ContentBlock; b.Type == "tool_use" {
				i := len(calls)
				calls[ev.Index] = i
				d.ToolCall = &llm.ToolCallDelta{Index: i, ID: b.ID, Name: b.Name}
			}
		case "content_block_delta":
			switch ev.Delta.Type {
			case "text_delta":
				d.Text = ev.Delta.Text
			case "thinking_delta":
				d.Reasoning = ev.Delta.Thinking
			case "input_json_delta":
				if i, ok := calls[ev.Index]; ok && ev.Delta.PartialJSON != "" {
					d.ToolCall = &llm.ToolCallDelta{Index: i, Arguments: ev.Delta.PartialJSON}
				}
			}
		case "message_stop":
			stopped = true
		}
		if d != (llm.Delta{}) {
			if err := onDelta(d); err != nil {
				return nil, err
			}
		}
	}
	if err := s.Err(); err != nil {
		return nil, mapError(err)
	}
	if !stopped {
		return nil, &llm.APIError{Kind: llm.ErrNoResponse, Message: "anthropic: stream ended before message_stop"}
	}
	return toResponse(&msg), nil
}

// toResponse converts a complete message.
func toResponse(m *sdk.Message) *llm.Response {
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
			args := string(b.Input)
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
	return &llm.Response{
		ID:           m.ID,
		Model:        string(m.Model),
		Message:      out,
		FinishReason: finishReason(m.StopReason),
		Usage: llm.TokenUsage{
			// Anthropic counts cached input apart; PromptTokens counts all.
			PromptTokens:     int(u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens),
			CompletionTokens: int(u.OutputTokens),
			CacheReadTokens:  int(u.CacheReadInputTokens),
			CacheWriteTokens: int(u.CacheCreationInputTokens),
			ReasoningTokens:  int(u.OutputTokensDetails.ThinkingTokens),
		},
	}
}

// finishReason maps a stop reason to the Chat Completions vocabulary.
func finishReason(r sdk.StopReason) string {
	switch r {
	case sdk.StopReasonToolUse:
		return "tool_calls"
	case sdk.StopReasonMaxTokens:
		return "length"
	case sdk.StopReasonRefusal:
		return "content_filter"
	}
	return "stop"
}

// mapError turns an SDK error into an *llm.APIError when the server
// answered. Transport and context errors are returned as they are:
// package llm classifies those.
func mapError(err error) error {
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) {
		return err
	}
	var body struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	raw := apiErr.RawJSON()
	_ = json.Unmarshal([]byte(raw), &body)
	msg := body.Error.Message
	if msg == "" {
		msg = strings.TrimSpace(raw)
	}
	var h http.Header
	if apiErr.Response != nil {
		h = apiErr.Response.Header
	}
	status := apiErr.StatusCode
	if status < 400 {
		// An error event in a stream that began with 200: its type says
		// what went wrong.
		status = statusOfType[body.Error.Type]
	}
	return llm.NewAPIError(status, body.Error.Type, msg, h, err)
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
