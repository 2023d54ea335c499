package llm

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Error kinds. Errors returned by an LLM match one of them with errors.Is,
// and are *APIError for errors.As when the provider answered.
var (
	ErrAuthentication = errors.New("llm: authentication failed")
	ErrRateLimit      = errors.New("llm: rate limited")
	// ErrContextWindowExceeded means the conversation no longer fits the
	// model's input: the caller should condense it and try again.
	ErrContextWindowExceeded = errors.New("llm: context window exceeded")
	// ErrMalformedHistory means the provider rejected the shape of the
	// history (tool results without calls and the like). Condensing also
	// recovers from it.
	ErrMalformedHistory = errors.New("llm: malformed conversation history")
	ErrContentPolicy    = errors.New("llm: content policy violation")
	ErrBadRequest       = errors.New("llm: bad request")
	ErrTimeout          = errors.New("llm: timeout")
	ErrConnection       = errors.New("llm: connection failed")
	// ErrServer means the provider failed or is unavailable (5xx).
	ErrServer = errors.New("llm: provider error")
	// ErrNoResponse means the provider answered without a reply (no choices,
	// or a stream that ended before its completion event).
	ErrNoResponse = errors.New("llm: no response from provider")
)

// APIError is a failed provider call.
type APIError struct {
	// Kind is one of the Err* sentinels.
	Kind error
	// StatusCode is the HTTP status, 0 if there was no response.
	StatusCode int
	// Code is the provider's error code or type, if it sent one.
	Code string
	// Message is the provider's message.
	Message string
	// RetryAfter is the wait the provider asked for (Retry-After), 0 if
	// none.
	RetryAfter time.Duration
	// Err is the underlying error, if any.
	Err error
}

// Error implements error.
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString(e.Kind.Error())
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.StatusCode)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	} else if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Is makes errors.Is(err, ErrRateLimit) and friends work.
func (e *APIError) Is(target error) bool { return target == e.Kind }

// Unwrap returns the underlying error.
func (e *APIError) Unwrap() error { return e.Err }

// Lowercase substrings that identify error messages across providers.
var (
	contextWindowPatterns = []string{
		"contextwindowexceedederror", "context_length_exceeded", "maximum context length",
		"prompt is too long", "input length and `max_tokens` exceed context limit",
		"please reduce the length of", "exceeds the available context size",
		"context length exceeded", "input exceeds the context window",
		"context window exceeds limit", "exceeds the maximum number of tokens",
		"request too large for model", "reduce the length of the messages",
		"string_above_max_length", "input is too long", "too many input tokens",
	}
	malformedHistoryPatterns = []string{
		"tool_use ids were found without `tool_result` blocks immediately after",
		"`tool_use` ids were found without `tool_result` blocks immediately after",
		"each `tool_use` block must have a corresponding `tool_result` block in the next message",
		"each tool_use must have a single result",
		"found multiple `tool_result` blocks with id:",
		"unexpected `tool_use_id` found in `tool_result` blocks",
		"each `tool_result` block must have a corresponding `tool_use` block in the previous message",
		"must be followed by tool messages responding to each 'tool_call_id'",
		"failed to parse tool call arguments as json",
	}
	authPatterns          = []string{"invalid api key", "incorrect api key", "unauthorized", "missing api key", "invalid authentication", "access denied", "api key not valid", "invalid x-api-key"}
	contentPolicyPatterns = []string{"content_policy", "content filtering policy", "output blocked by content filtering"}
)

// NewAPIError classifies a failed HTTP call. status is the HTTP status (0
// when there was no response), code the provider's error code or type,
// message its error message, header the response headers (for
// Retry-After) and err the underlying error. Providers use it so every
// wire API maps errors the same way.
func NewAPIError(status int, code, message string, header http.Header, err error) *APIError {
	e := &APIError{StatusCode: status, Code: code, Message: message, Err: err}
	if header != nil {
		e.RetryAfter = parseRetryAfter(header)
	}
	text := strings.ToLower(code + " " + message)
	if message == "" && err != nil {
		text += " " + strings.ToLower(err.Error())
	}
	switch {
	case matches(text, contextWindowPatterns...):
		e.Kind = ErrContextWindowExceeded
	case matches(text, malformedHistoryPatterns...):
		e.Kind = ErrMalformedHistory
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Kind = ErrAuthentication
	case status == http.StatusTooManyRequests || code == "rate_limit_exceeded" || code == "RESOURCE_EXHAUSTED":
		e.Kind = ErrRateLimit
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout:
		e.Kind = ErrTimeout
	case status >= 500 || status == 529:
		e.Kind = ErrServer
	case status >= 400 && matches(text, authPatterns...):
		e.Kind = ErrAuthentication
	case status >= 400 && matches(text, contentPolicyPatterns...):
		e.Kind = ErrContentPolicy
	case status >= 400:
		e.Kind = ErrBadRequest
	default:
		e.Kind = ErrConnection
	}
	return e
}

// parseRetryAfter reads retry-after-ms, then Retry-After as seconds or an
// HTTP date.
func parseRetryAfter(h http.Header) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// retryable reports whether an attempt that failed with err is worth
// repeating.
func retryable(err error) bool {
	if errors.Is(err, ErrReplyTooLarge) {
		return false // the same request would get the same reply
	}
	if Unreachable(err) {
		return false
	}
	for _, k := range []error{ErrRateLimit, ErrServer, ErrTimeout, ErrConnection, ErrNoResponse} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

// RetryAfter returns the wait a rate-limited provider asked for.
func RetryAfter(err error) (time.Duration, bool) {
	var e *APIError
	if errors.As(err, &e) && e.RetryAfter > 0 {
		return e.RetryAfter, true
	}
	return 0, false
}

// Unreachable reports whether err says the model's endpoint cannot be
// reached at all: nothing listens at its address (connection refused) or
// its host does not exist. A person must fix the address; retrying for
// minutes only hides that, so an LLM does not retry these errors (a
// temporary DNS failure is retried).
func Unreachable(err error) bool {
	var dns *net.DNSError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &dns) && dns.IsNotFound
}

// unreachableHint says why an Unreachable error was not retried and what
// to check, for every program that shows it (it names no address: the
// error does, with any password in it removed).
func unreachableHint(err error) string {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return "not retried: nothing listens at the model's address; is its server running, and is base_url right?"
	}
	return "not retried: the model's host does not exist; check base_url"
}
