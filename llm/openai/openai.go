// Package openai is the gohands provider for OpenAI's Chat Completions and
// Responses APIs, and for every server that speaks Chat Completions
// (OpenRouter, DeepSeek, Groq, Mistral, Together, xAI, Ollama, vLLM, LiteLLM
// proxies, ...). Importing it registers it with package llm.
//
// It speaks the wire APIs with net/http and encoding/json: requests are
// built in the shape the reference SDK sends (so fields such as
// reasoning_content, thinking_blocks and cache_control reach the servers
// that use them), replies and server-sent events are decoded into the few
// fields gohands reads. Only the config decides where a call goes and with
// which key: no OPENAI_* environment variable is read.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/internal/httpapi"
)

func init() {
	llm.RegisterProvider(llm.APIChat, Chat{})
	llm.RegisterProvider(llm.APIResponses, Responses{})
}

// endpointURL is where a call to path (chat/completions or responses)
// goes.
func endpointURL(ep llm.Endpoint, path string) (string, error) {
	base := strings.TrimSuffix(ep.BaseURL, "/")
	if ep.Provider == "azure" {
		// Azure serves each deployment under its own path and wants an
		// api-version on every call.
		if path == "responses" {
			base += "/openai"
		} else {
			base += "/openai/deployments/" + url.PathEscape(ep.Model)
		}
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("openai: base url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("openai: base url %q: want an http or https URL", ep.BaseURL)
	}
	u = u.JoinPath(path)
	if ep.Provider == "azure" && ep.APIVersion != "" {
		q := u.Query()
		q.Set("api-version", ep.APIVersion)
		u.RawQuery = q.Encode()
	}
	return u.String(), nil
}

// post sends a request body to path and returns the 2xx response, whose
// body the caller reads and closes. header holds the call's own headers,
// set last.
func post(ctx context.Context, req *llm.Request, path string, b body, stream bool, header map[string]string) (*http.Response, error) {
	ep := req.Endpoint
	u, err := endpointURL(ep, path)
	if err != nil {
		return nil, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u, &bodyReader{b: b})
	if err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	hr.ContentLength = int64(b.len())
	hr.GetBody = func() (io.ReadCloser, error) { return &bodyReader{b: b}, nil }
	h := hr.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "gohands")
	if stream {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	if key := req.Config.APIKey.Value(); key != "" && ep.AuthHeader != "" {
		h.Set(ep.AuthHeader, ep.AuthPrefix+key)
	}
	for k, v := range ep.Headers {
		h.Set(k, v)
	}
	if id := req.ConversationID; id != "" && sessionAware(ep.Provider) {
		h.Set("x-litellm-session-id", id)
	}
	for k, v := range header {
		h.Set(k, v)
	}
	hc := req.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := httpapi.Do(hc, hr)
	if err != nil {
		if _, ok := err.(*llm.APIError); ok {
			return nil, err
		}
		return nil, ctxErr(ctx, err)
	}
	return resp, nil
}

// body is a request body as pieces: head, the items separated by commas,
// tail. A request's messages are items, kept encoded between calls
// (llm.MessageCache): sending them as they are saves copying the history
// into one buffer at every step.
type body struct {
	head  []byte
	items [][]byte
	tail  []byte
}

// parts is how many pieces b reads as, commas included.
func (b *body) parts() int { return 2 + max(2*len(b.items)-1, 0) }

// part returns piece k of b.
func (b *body) part(k int) []byte {
	switch j := k - 1; {
	case k == 0:
		return b.head
	case j < 2*len(b.items)-1 && j%2 == 0:
		return b.items[j/2]
	case j < 2*len(b.items)-1:
		return comma
	}
	return b.tail
}

var comma = []byte(",")

func (b *body) len() int {
	n := len(b.head) + len(b.tail) + max(len(b.items)-1, 0)
	for _, it := range b.items {
		n += len(it)
	}
	return n
}

// bytes returns b in one slice.
func (b *body) bytes() []byte {
	out := make([]byte, 0, b.len())
	for k := range b.parts() {
		out = append(out, b.part(k)...)
	}
	return out
}

// bodyReader reads a body, which it does not modify.
type bodyReader struct {
	b      body
	k, off int // the next byte is b.part(k)[off]
}

func (r *bodyReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && r.k < r.b.parts() {
		part := r.b.part(r.k)
		c := copy(p[n:], part[r.off:])
		n += c
		if r.off += c; r.off == len(part) {
			r.k, r.off = r.k+1, 0
		}
	}
	if n == 0 && r.k == r.b.parts() && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (r *bodyReader) Close() error { return nil }

// Len returns how many bytes are left to read.
func (r *bodyReader) Len() int {
	n := -r.off
	for k := r.k; k < r.b.parts(); k++ {
		n += len(r.b.part(k))
	}
	return n
}

// sendBufs hold the copies WriteTo sends.
var sendBufs = sync.Pool{New: func() any { return new([sendBuf]byte) }}

// sendBuf is the size of WriteTo's writes: a long history's body (half a
// megabyte at a thousand steps) then costs a few system calls where
// io.Copy's 32 KB buffer would make twenty.
const sendBuf = 128 << 10

// WriteTo writes what is left of the body to w (the connection, see
// llm's default HTTP client): a long piece (the history, joined by the
// message cache) as it is, short ones gathered into writes of up to
// sendBuf bytes.
func (r *bodyReader) WriteTo(w io.Writer) (int64, error) {
	buf := sendBufs.Get().(*[sendBuf]byte)
	defer sendBufs.Put(buf)
	var total int64
	n := 0 // buffered
	write := func(p []byte) error {
		m, err := w.Write(p)
		total += int64(m)
		return err
	}
	for ; r.k < r.b.parts(); r.k, r.off = r.k+1, 0 {
		p := r.b.part(r.k)[r.off:]
		if len(p) < sendBuf/2 && n+len(p) <= sendBuf {
			n += copy(buf[n:], p)
			continue
		}
		if n > 0 {
			if err := write(buf[:n]); err != nil {
				return total, err
			}
			n = 0
		}
		if len(p) >= sendBuf/2 {
			if err := write(p); err != nil {
				return total, err
			}
		} else {
			n = copy(buf[:], p)
		}
	}
	if n > 0 {
		if err := write(buf[:n]); err != nil {
			return total, err
		}
	}
	return total, nil
}

// drain reads what follows the end of a stream (normally only the end of
// the chunked body) so that the connection goes back to the pool: closed
// unread, it would be dropped, and the next call would pay a new TLS
// handshake. A server that keeps the stream open is given up on after a
// second.
func drain(body io.ReadCloser) {
	t := time.AfterFunc(time.Second, func() { body.Close() })
	defer t.Stop()
	io.Copy(io.Discard, io.LimitReader(body, 64<<10))
}

// decodeReply reads a whole (non-streamed) reply into v.
func decodeReply(ctx context.Context, resp *http.Response, v any) error {
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return ctxErr(ctx, fmt.Errorf("openai: reading the reply: %w", err))
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("openai: decoding the reply: %w", err)
	}
	return nil
}

// streamError maps an error reported inside a stream that began with
// 200. Its type or code stands in for the missing HTTP status.
func streamError(data []byte) *llm.APIError {
	b := httpapi.ParseBody(data)
	status := statusOfError(b.Code, b.Type)
	if status == 0 {
		// OpenRouter puts the HTTP status in a numeric code.
		var v struct {
			Error struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal(data, &v) == nil && v.Error.Code >= 400 && v.Error.Code < 600 {
			status = v.Error.Code
		}
	}
	return httpapi.Error(status, nil, data)
}

// statusOfError returns the HTTP status OpenAI (or, through a proxy,
// Anthropic) answers with for an error code or type, 0 if unknown.
func statusOfError(code, typ string) int {
	for _, s := range []string{code, typ} {
		switch s {
		case "server_error", "api_error":
			return http.StatusInternalServerError
		case "overloaded_error":
			return 529
		case "rate_limit_exceeded", "rate_limit_error", "requests", "tokens", "insufficient_quota":
			return http.StatusTooManyRequests
		case "invalid_api_key", "authentication_error":
			return http.StatusUnauthorized
		case "invalid_request_error", "context_length_exceeded", "invalid_prompt":
			return http.StatusBadRequest
		}
	}
	return 0
}

// sessionAware reports whether the provider is a LiteLLM proxy, which
// groups calls by the x-litellm-session-id header.
func sessionAware(provider string) bool {
	return provider == "litellm_proxy" || provider == "openhands"
}

// cacheKeyAware reports whether the provider takes OpenAI's
// prompt_cache_key and prompt_cache_retention parameters.
func cacheKeyAware(provider string) bool {
	switch provider {
	case "openai", "azure", "litellm_proxy", "openhands":
		return true
	}
	return false
}

// responseCost reads the cost a LiteLLM proxy reports for a call.
func responseCost(resp *http.Response) float64 {
	if resp == nil {
		return 0
	}
	var cost float64
	if v := resp.Header.Get("x-litellm-response-cost"); v != "" {
		if err := json.Unmarshal([]byte(v), &cost); err != nil {
			return 0
		}
	}
	return cost
}

// marshalBody encodes a request body and merges the config's extra body
// keys into it (litellm_extra_body), which win over ours.
func marshalBody(v any, extra map[string]any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("openai: encoding request: %w", err)
	}
	if len(extra) == 0 {
		return b, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, v := range extra {
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("openai: encoding litellm_extra_body[%q]: %w", k, err)
		}
		m[k] = raw
	}
	return json.Marshal(m)
}

// ctxErr prefers the context's error when the context ended, so a timeout
// reads as a timeout rather than as the transport's symptom of it.
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		return fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	return err
}
