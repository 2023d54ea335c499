// Package httpapi holds what the providers share to call a model's HTTP
// API: sending a request and mapping a failed answer to an *llm.APIError.
package httpapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gohands/gohands/llm"
)

// maxErrorBody bounds how much of an error body is read.
const maxErrorBody = 64 << 10

// maxMessage bounds the message kept from an error body that is not JSON
// (an HTML page from a proxy, say).
const maxMessage = 2 << 10

// Do sends req with hc. A 2xx response is returned for the caller to read
// and close; any other status is read, closed and returned as the error
// Error makes of it. Transport errors are returned as they are, for
// package llm to classify.
func Do(hc *http.Client, req *http.Request) (*http.Response, error) {
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := Error(resp.StatusCode, resp.Header, body)
	if err != nil && len(body) == 0 {
		e.Err = fmt.Errorf("reading the error body: %w", err)
	}
	return nil, e
}

// Error classifies a failed call from its HTTP status (0 for an error
// that arrived inside a stream), headers (Retry-After) and body. It reads
// the error bodies of OpenAI ({"error":{"message","type","code"}}),
// Anthropic ({"type":"error","error":{"type","message"}}) and Google
// ({"error":{"code","message","status"}}), and the {"error":"text"},
// {"message":...} and {"detail":...} of other compatible servers; any other
// body becomes the message as it is, shortened.
func Error(status int, header http.Header, body []byte) *llm.APIError {
	b := ParseBody(body)
	e := llm.NewAPIError(status, b.Code, b.Message, header, nil)
	if b.RetryAfter > 0 {
		e.RetryAfter = b.RetryAfter
	}
	return e
}

// Body is what an error body says.
type Body struct {
	// Code is the first of the error's string "code", "status" and
	// "type" that is set (Google's numeric code is the HTTP status).
	Code string
	// Type is the error's "type" (OpenAI's and Anthropic's class).
	Type string
	// Message is the error's message, or the body itself when it is not a
	// known shape.
	Message string
	// RetryAfter is the wait of a google.rpc.RetryInfo detail
	// ("retryDelay": "37s"), 0 if none.
	RetryAfter time.Duration
}

// ParseBody reads an error body.
func ParseBody(body []byte) Body {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	if json.Unmarshal(body, &v) != nil {
		return Body{Message: shorten(body)}
	}
	var inner struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Status  string          `json:"status"`
		Details []struct {
			Type       string `json:"@type"`
			RetryDelay string `json:"retryDelay"`
		} `json:"details"`
	}
	var text string
	switch {
	case json.Unmarshal(v.Error, &inner) == nil && (inner.Message != "" || inner.Type != "" || inner.Status != ""):
		b := Body{Type: inner.Type, Message: inner.Message}
		b.Code = stringOf(inner.Code)
		if b.Code == "" {
			b.Code = inner.Status
		}
		if b.Code == "" {
			b.Code = inner.Type
		}
		if b.Message == "" {
			b.Message = shorten(body)
		}
		for _, d := range inner.Details {
			if strings.HasSuffix(d.Type, "google.rpc.RetryInfo") {
				if w, err := time.ParseDuration(d.RetryDelay); err == nil && w > 0 {
					b.RetryAfter = w
				}
			}
		}
		return b
	case json.Unmarshal(v.Error, &text) == nil && text != "":
		return Body{Message: text}
	case v.Message != "":
		b := Body{Type: v.Type, Message: v.Message, Code: stringOf(v.Code)}
		if b.Code == "" {
			b.Code = v.Type
		}
		return b
	case json.Unmarshal(v.Detail, &text) == nil && text != "":
		return Body{Message: text}
	}
	return Body{Message: shorten(body)}
}

// stringOf returns raw's value if it is a JSON string.
func stringOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// shorten returns body as a message of at most maxMessage bytes.
func shorten(body []byte) string {
	s := strings.TrimSpace(string(body))
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
