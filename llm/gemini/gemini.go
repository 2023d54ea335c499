// Package gemini is the gohands provider for the Gemini API
// (generateContent, and streamGenerateContent with alt=sse), spoken
// directly in JSON over net/http. Importing it registers it with package
// llm for "gemini/" models and bare gemini-* names.
//
// Tools are declared with their JSON schemas converted to Gemini's schema
// subset. Thought parts become the reply's reasoning text. Thought
// signatures on function calls are kept the way LiteLLM keeps them for the
// reference, appended to the tool call id after "__thought__" (base64), so
// histories written by either side replay on the other; they are put back
// on the function call parts on later turns, as Gemini 3 requires.
//
// Only the config is used: GEMINI_API_KEY, GOOGLE_API_KEY and
// GOOGLE_GEMINI_BASE_URL are never read, and only the config's key is
// sent. Gemini on Vertex AI ("vertex_ai/gemini-..." models) is spoken here
// too, at the aiplatform path of a project and location, authorized with
// Google credentials as package llm/internal/vertex finds them (the
// VERTEXAI_* variables, a service account key, gcloud's credentials).
//
// Not supported yet: images in tool results
// (Gemini 3 takes them inside function responses), explicit context
// caching, safety settings, Google's built-in tools (search grounding,
// code execution, URL context). Thought signatures on replies without
// function calls are dropped, as the reference drops them; http(s) image
// URLs are passed by reference, which Gemini fetches only for some hosts.
package gemini

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
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
	llm.RegisterProvider(llm.APIGemini, Provider{})
}

// Provider speaks the Gemini API. The zero value is ready to use; it
// holds no state.
type Provider struct{}

var _ llm.Provider = Provider{}

// ThoughtSeparator separates a tool call id from the base64 thought
// signature appended to it (LiteLLM's convention).
const ThoughtSeparator = "__thought__"

// skipSignature is the placeholder Google documents for function calls
// that have no signature of their own (made by another model), which
// Gemini 3 would otherwise reject.
const skipSignature = "skip_thought_signature_validator"

// keyHeader is where the Gemini API takes the key.
const keyHeader = "x-goog-api-key"

// apiVersion is the path segment of the API version we speak.
const apiVersion = "v1beta"

// Complete implements llm.Provider.
func (Provider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	body, err := buildRequest(req)
	if err != nil {
		return nil, err
	}
	data, err := encodeBody(body, req.Config.ExtraBody)
	if err != nil {
		return nil, fmt.Errorf("gemini: encoding the request: %w", err)
	}
	stream := req.OnDelta != nil
	hreq, secrets, err := newHTTPRequest(ctx, req, stream, data)
	if err != nil {
		return nil, err
	}
	resp, err := send(req, hreq, stream)
	return resp, vertex.Redact(err, secrets)
}

// send sends one call and reads its reply.
func send(req *llm.Request, hreq *http.Request, stream bool) (*llm.Response, error) {
	hc := req.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := httpapi.Do(hc, hreq)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var a accumulator
	if !stream {
		reply, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("gemini: reading the reply: %w", err)
		}
		if err := a.add(reply, nil); err != nil {
			return nil, err
		}
		return a.response(false)
	}
	for ev, err := range sse.Events(resp.Body) {
		if err != nil {
			return nil, fmt.Errorf("gemini: stream: %w", err)
		}
		if err := a.add(ev.Data, req.OnDelta); err != nil {
			return nil, err
		}
	}
	return a.response(true)
}

// encodeBody encodes the request with extra merged into it: objects merge
// key by key, anything else replaces what is there.
func encodeBody(body *generateRequest, extra map[string]any) ([]byte, error) {
	data, err := json.Marshal(body)
	if err != nil || len(extra) == 0 {
		return data, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	mergeMaps(m, extra)
	return json.Marshal(m)
}

func mergeMaps(dst, src map[string]any) {
	for k, v := range src {
		d, dok := dst[k].(map[string]any)
		s, sok := v.(map[string]any)
		if dok && sok {
			mergeMaps(d, s)
			continue
		}
		dst[k] = v
	}
}

// newHTTPRequest makes the POST of one call, configured from the request
// alone.
func newHTTPRequest(ctx context.Context, req *llm.Request, stream bool, body []byte) (*http.Request, []string, error) {
	ep := req.Endpoint
	verb := "generateContent"
	if stream {
		verb = "streamGenerateContent"
	}
	if ep.Provider == "vertex_ai" {
		call, err := vertex.Prepare(ctx, req, "google", verb)
		if err != nil {
			return nil, nil, err
		}
		u := call.URL
		if stream {
			u += "?alt=sse"
		}
		hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
		if err != nil {
			return nil, nil, fmt.Errorf("gemini: %w", err)
		}
		hr.Header.Set("User-Agent", "gohands")
		for k, v := range ep.Headers {
			hr.Header.Set(k, v)
		}
		hr.Header.Set("Content-Type", "application/json")
		if stream {
			hr.Header.Set("Accept", "text/event-stream")
		}
		maps.Copy(hr.Header, call.Header)
		return hr, call.Secrets, nil
	}
	model := ep.Model
	if !strings.HasPrefix(model, "models/") && !strings.HasPrefix(model, "tunedModels/") {
		model = "models/" + model
	}
	u := baseURL(ep.BaseURL) + apiVersion + "/" + model + ":" + verb
	if stream {
		u += "?alt=sse"
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, nil, fmt.Errorf("gemini: %w", err)
	}
	hr.Header.Set("User-Agent", "gohands")
	for k, v := range ep.Headers {
		hr.Header.Set(k, v)
	}
	hr.Header.Set("Content-Type", "application/json")
	if stream {
		hr.Header.Set("Accept", "text/event-stream")
	}
	// Only the config's key is sent, and none when it has none.
	hr.Header.Del(keyHeader)
	if key := req.Config.APIKey.Value(); key != "" {
		h := ep.AuthHeader
		if h == "" {
			h = keyHeader
		}
		hr.Header.Set(h, ep.AuthPrefix+key)
	}
	return hr, nil, nil
}

// baseURL returns the server root with a trailing slash, accepting base
// URLs written with the API version.
func baseURL(u string) string {
	u = strings.TrimSuffix(u, "/")
	u = strings.TrimSuffix(u, "/"+apiVersion)
	return u + "/"
}

// malformed reports a reply that is not the JSON Gemini sends: a broken
// server or proxy, worth another try.
func malformed(err error) error {
	return &llm.APIError{Kind: llm.ErrServer, Message: "gemini: malformed reply: " + err.Error(), Err: err}
}

// accumulator gathers a reply from one response or the chunks of a
// stream.
type accumulator struct {
	id, model string
	text      strings.Builder
	reasoning strings.Builder
	calls     []event.ToolCall
	finish    string
	usage     *usageMetadata
	blocked   string
	chunks    int
}

// add takes one response (or stream chunk), passing its fragments to
// onDelta if set. A chunk may be an error instead, sent after the stream
// began with 200: its code is the HTTP status it stands for.
func (a *accumulator) add(data []byte, onDelta func(llm.Delta) error) error {
	var r generateResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return malformed(fmt.Errorf("%.80q: %w", data, err))
	}
	if r.Error != nil {
		return httpapi.Error(r.Error.Code, nil, data)
	}
	a.chunks++
	if r.ResponseID != "" {
		a.id = r.ResponseID
	}
	if r.ModelVersion != "" {
		a.model = r.ModelVersion
	}
	if r.UsageMetadata != nil {
		// Every chunk reports usage so far; the last one counts.
		a.usage = r.UsageMetadata
	}
	if pf := r.PromptFeedback; pf != nil && pf.BlockReason != "" {
		a.blocked = pf.BlockReason
	}
	if len(r.Candidates) == 0 {
		return nil
	}
	c := r.Candidates[0]
	if c.FinishReason != "" {
		a.finish = c.FinishReason
	}
	if c.Content == nil {
		return nil
	}
	for _, p := range c.Content.Parts {
		if p == nil {
			continue
		}
		var d llm.Delta
		switch {
		case p.FunctionCall != nil:
			tc, err := toolCall(p)
			if err != nil {
				return err
			}
			d.ToolCall = &llm.ToolCallDelta{Index: len(a.calls), ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments}
			a.calls = append(a.calls, tc)
		case p.Thought:
			a.reasoning.WriteString(p.Text)
			d.Reasoning = p.Text
		default:
			a.text.WriteString(p.Text)
			d.Text = p.Text
		}
		if onDelta != nil && d != (llm.Delta{}) {
			if err := onDelta(d); err != nil {
				return err
			}
		}
	}
	return nil
}

// toolCall converts a function call part. Gemini usually sends no call id,
// so one is made up; a thought signature rides on the id.
func toolCall(p *part) (event.ToolCall, error) {
	fc := p.FunctionCall
	args := "{}"
	if raw := bytes.TrimSpace(fc.Args); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		obj, ok := objectArgs(raw)
		if !ok {
			return event.ToolCall{}, malformed(fmt.Errorf("function call %s: arguments %.80q are not a JSON object", fc.Name, raw))
		}
		if obj != nil {
			args = string(obj)
		}
	}
	id := fc.ID
	if id == "" {
		id = newCallID()
	}
	if len(p.ThoughtSignature) > 0 {
		id += ThoughtSeparator + base64.StdEncoding.EncodeToString(p.ThoughtSignature)
	}
	return event.ToolCall{ID: id, Name: fc.Name, Arguments: args, Origin: event.OriginCompletion}, nil
}

func newCallID() string {
	var b [12]byte
	rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}

// response returns the reply gathered. A stream must have ended with a
// finish reason (or a blocked prompt): one cut at an event boundary is
// not a whole reply.
func (a *accumulator) response(stream bool) (*llm.Response, error) {
	if a.chunks == 0 {
		return nil, &llm.APIError{Kind: llm.ErrNoResponse, Message: "gemini: empty stream"}
	}
	if a.blocked != "" && a.text.Len() == 0 && len(a.calls) == 0 {
		return nil, &llm.APIError{Kind: llm.ErrContentPolicy, Code: a.blocked, Message: "gemini: prompt blocked: " + a.blocked}
	}
	if stream && a.finish == "" {
		return nil, &llm.APIError{Kind: llm.ErrNoResponse, Message: "gemini: stream ended before its finish reason"}
	}
	msg := event.Message{Role: event.RoleAssistant, Content: event.List[event.Content]{}, ToolCalls: a.calls, ReasoningContent: a.reasoning.String()}
	if a.text.Len() > 0 {
		msg.Content = append(msg.Content, event.Text(a.text.String()))
	}
	r := &llm.Response{ID: a.id, Model: a.model, Message: msg, FinishReason: finishReason(a.finish, len(a.calls) > 0)}
	if u := a.usage; u != nil {
		r.Usage = llm.TokenUsage{
			PromptTokens:     u.PromptTokenCount,
			CompletionTokens: u.CandidatesTokenCount + u.ThoughtsTokenCount,
			CacheReadTokens:  u.CachedContentTokenCount,
			ReasoningTokens:  u.ThoughtsTokenCount,
		}
	}
	return r, nil
}

// finishReason maps Gemini's finish reason to the Chat Completions
// vocabulary. Gemini says STOP for replies with function calls.
func finishReason(f string, calls bool) string {
	switch f {
	case "MAX_TOKENS":
		return "length"
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY":
		return "content_filter"
	}
	if calls {
		return "tool_calls"
	}
	return "stop"
}
