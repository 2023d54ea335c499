package llmtest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// Reply is one scripted turn of the model. The same Reply drives every wire
// format; each server renders the parts its API has (reasoning, for
// instance, becomes reasoning_content, a Responses reasoning item, an
// Anthropic thinking block or a Gemini thought part).
//
// A Reply with Fail set answers with an HTTP error instead; one with
// Disconnect set drops the connection without answering.
type Reply struct {
	// ID is the response id; a numbered one is made up when empty.
	ID string
	// Text is the assistant's reply text.
	Text string
	// ToolCalls are the tool calls of the reply, in order.
	ToolCalls []ToolCall
	// Reasoning is the model's reasoning text: reasoning_content on Chat
	// Completions, a summary of a reasoning item on Responses, a thinking
	// block on Anthropic, a thought part on Gemini.
	Reasoning string
	// Signature signs the reasoning: the Anthropic thinking signature, or
	// the Gemini thought signature (raw bytes, base64 on the wire). It is
	// attached to the first function call part on Gemini, as Gemini does,
	// or to the text part when there are no calls.
	Signature string
	// EncryptedReasoning is the encrypted_content of a Responses reasoning
	// item.
	EncryptedReasoning string
	// RedactedThinking are the data of Anthropic redacted_thinking blocks,
	// sent after the thinking block.
	RedactedThinking []string
	// Usage is what the server reports for the call.
	Usage Usage
	// FinishReason overrides the finish reason, in the Chat Completions
	// vocabulary (stop, length, tool_calls, content_filter); each server
	// translates it. By default it is tool_calls when there are tool calls
	// and stop otherwise.
	FinishReason string
	// Delay holds the answer back this long (to test timeouts). The wait
	// ends early if the client goes away.
	Delay time.Duration
	// ChunkDelay paces a streamed answer: the server waits this long
	// between events (to test interrupting a stream, or a stream that
	// stalls). The in-process Provider waits between deltas.
	ChunkDelay time.Duration
	// Fail, if set, makes the server answer with this HTTP error.
	Fail *Failure
	// Disconnect makes the server close the connection without answering,
	// as a dropped connection would.
	Disconnect bool
	// CutAfter, if positive, makes a streamed answer stop after that many
	// events: the server drops the connection mid-stream.
	CutAfter int
	// StallAfter, if positive, makes a streamed answer stop sending after
	// that many events and keep the connection open until the client goes
	// away: a stream that stalls mid-reply (for stream_idle_timeout).
	StallAfter int
	// MalformedStream makes a streamed answer's first event one whose data
	// is not JSON.
	MalformedStream bool
}

// ToolCall is a scripted tool call.
type ToolCall struct {
	// ID is the call id; a numbered one is made up when empty. Gemini
	// replies carry no id unless one is set here, as the Gemini API does.
	ID string
	// Name is the tool's name.
	Name string
	// Arguments is the JSON text of the arguments. Chat Completions and
	// Responses send it as is (so it may be malformed on purpose);
	// Anthropic and Gemini need a JSON object. Empty means {}.
	Arguments string
}

// Usage is the token usage a server reports, counted the OpenAI way:
// PromptTokens includes cached tokens and CompletionTokens includes
// reasoning tokens. Each server converts to its own API's sense (Anthropic
// reports uncached input apart from cache reads and writes; Gemini reports
// thoughts apart from candidates).
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	CacheReadTokens  int
	CacheWriteTokens int
	ReasoningTokens  int
}

// Failure is a scripted HTTP error. Each server writes it in its
// provider's real error format.
type Failure struct {
	// Status is the HTTP status code.
	Status int
	// Message is the error message; a provider-like one is used if empty.
	Message string
	// RetryAfter, if set, is sent as the Retry-After header (seconds, or an
	// HTTP date).
	RetryAfter string
	// ContextWindow makes this the provider's own "context window
	// exceeded" error (status 400 unless Status says otherwise).
	ContextWindow bool
	// Body, if set, is sent verbatim as the response body (JSON) instead of
	// the provider-shaped error.
	Body string
	// MidStream makes a streamed call fail inside the stream: the reply's
	// content (Text, ToolCalls, ...) is streamed first, then the error
	// arrives as an error event where the final events would be, as
	// servers do when they fail after answering 200. A plain call gets
	// the HTTP error.
	MidStream bool
}

// Fail returns a reply that fails with an HTTP error of the given status
// and message, in the provider's error format.
func Fail(status int, message string) Reply {
	return Reply{Fail: &Failure{Status: status, Message: message}}
}

// RateLimited returns a reply that fails with HTTP 429 and a Retry-After
// header of the given whole seconds.
func RateLimited(retryAfter time.Duration) Reply {
	return Reply{Fail: &Failure{
		Status:     http.StatusTooManyRequests,
		RetryAfter: strconv.Itoa(int(retryAfter / time.Second)),
	}}
}

// ContextWindowExceeded returns a reply that fails the way the provider
// reports a prompt longer than the model's context window.
func ContextWindowExceeded() Reply {
	return Reply{Fail: &Failure{Status: http.StatusBadRequest, ContextWindow: true}}
}

// Args encodes v as the JSON text of tool call arguments. It panics if v
// cannot be encoded, which is a bug in the test.
func Args(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic("llmtest.Args: " + err.Error())
	}
	return string(b)
}

// finishReason returns the reply's finish reason in the Chat vocabulary.
func (r *Reply) finishReason() string {
	switch {
	case r.FinishReason != "":
		return r.FinishReason
	case len(r.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

// argsObject returns the arguments of c as a JSON object.
func (c *ToolCall) argsObject() (map[string]any, error) {
	if c.Arguments == "" {
		return map[string]any{}, nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(c.Arguments), &m); err != nil {
		return nil, err
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}
