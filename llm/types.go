package llm

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/gohands/gohands/event"
)

// ToolSpec is a tool as the model sees it.
type ToolSpec struct {
	Name        string
	Description string
	// Parameters is the JSON schema of the arguments, an object schema. It
	// is kept as raw JSON so the property order the model sees is the order
	// the tool author wrote.
	Parameters json.RawMessage
}

// CallOptions are the per-call options of a completion. A nil *CallOptions
// is valid.
type CallOptions struct {
	// OnDelta, if set, streams the reply: it is called with each fragment
	// as it arrives, and the call still returns the complete Response. An
	// error returned by OnDelta aborts the call with that error. (The
	// reference streams only when its config's stream flag is also set;
	// here the callback alone decides, and Config.Stream is carried for
	// applications to consult.) A reply already streamed in part is not
	// retried, unless it stalled: a stream cut by stream_idle_timeout is
	// tried again, as the reference does, after a Delta with Restart set.
	OnDelta func(Delta) error
	// Stop adds stop sequences.
	Stop []string
	// ConversationID keys provider-side prompt caches (prompt_cache_key)
	// and LiteLLM proxy sessions.
	ConversationID string
	// NoStream forces a non-streaming call even when OnDelta is set and the
	// config asks for streaming (the reference does this for sub-agents and
	// condenser summaries).
	NoStream bool
}

// Delta is one streamed fragment of a reply.
type Delta struct {
	// Text is a fragment of the reply text.
	Text string
	// Reasoning is a fragment of reasoning text (reasoning_content, a
	// thinking block, or a Responses reasoning summary).
	Reasoning string
	// ToolCall is a fragment of a tool call: the first fragment of a call
	// has its ID and Name, later ones add to Arguments.
	ToolCall *ToolCallDelta
	// Restart, alone in its Delta, voids the fragments delivered so far:
	// the stream stalled (stream_idle_timeout) after it had begun and the
	// call is tried again, whose fragments follow from the start.
	Restart bool
}

// ToolCallDelta is a fragment of a streamed tool call.
type ToolCallDelta struct {
	Index     int // position of the call in the reply
	ID        string
	Name      string
	Arguments string
}

// Response is the outcome of one completion.
type Response struct {
	// ID is the provider's response id, recorded on events as
	// llm_response_id.
	ID string
	// Model is the model that answered, as the provider reports it.
	Model string
	// Message is the assistant message: text, tool calls and reasoning.
	Message event.Message
	// FinishReason is the provider's stop reason, normalised to the Chat
	// Completions vocabulary: stop, length, tool_calls, content_filter.
	FinishReason string
	// Usage is the token usage of the call. Providers fill the counts; the
	// LLM fills model, context window, per-turn total and response id.
	Usage TokenUsage
	// Cost is the cost of the call in USD, as charged by the provider (a
	// LiteLLM proxy reports it) or priced from the table.
	Cost float64
	// Latency is the duration of the successful attempt.
	Latency time.Duration
}

// Request is what the LLM hands to a Provider: one fully resolved call.
// Providers must not modify it.
type Request struct {
	// Endpoint is where and how to call.
	Endpoint Endpoint
	// Config is the normalised config of the LLM.
	Config *Config
	// Features are the model's resolved capabilities.
	Features Features
	Messages []event.Message
	Tools    []ToolSpec
	// Stop are the stop sequences to send (already filtered by support).
	Stop []string
	// MaxOutputTokens is the effective output limit; 0 leaves it to the
	// provider.
	MaxOutputTokens int
	ConversationID  string
	// OnDelta is non-nil for a streaming call.
	OnDelta func(Delta) error
	// HTTPClient is the client to send with. It has no timeout of its own;
	// the per-call timeout is on ctx.
	HTTPClient *http.Client
	// Cache keeps the encodings of the LLM's previous request's messages
	// for a provider to reuse (nil: none).
	Cache *MessageCache
}

// Provider speaks one wire API (Chat Completions, Responses, Anthropic
// Messages, Gemini). Implementations do not retry: the LLM does. They
// return errors made by NewAPIError (or wrapping one) so callers can
// branch on the kind.
type Provider interface {
	Complete(ctx context.Context, req *Request) (*Response, error)
}

// ProviderFunc adapts a function to Provider.
type ProviderFunc func(ctx context.Context, req *Request) (*Response, error)

// Complete implements Provider.
func (f ProviderFunc) Complete(ctx context.Context, req *Request) (*Response, error) {
	return f(ctx, req)
}
