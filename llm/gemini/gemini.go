// Package gemini is the gohands provider for the Gemini API
// (generateContent and streamGenerateContent), built on the official
// google.golang.org/genai client. Importing it registers it with package
// llm for "gemini/" models and bare gemini-* names.
//
// Tools are declared with their JSON schemas converted to Gemini's schema
// subset. Thought parts become the reply's reasoning text. Thought
// signatures on function calls are kept the way LiteLLM keeps them for the
// reference, appended to the tool call id after "__thought__" (base64), so
// histories written by either side replay on the other; they are put back
// on the function call parts on later turns, as Gemini 3 requires.
//
// The client is always configured explicitly: GEMINI_API_KEY,
// GOOGLE_API_KEY, GOOGLE_GEMINI_BASE_URL and the Vertex variables are
// never used, and only the config's key is sent.
//
// Not supported yet: the Vertex AI backend, images in tool results
// (Gemini 3 takes them inside function responses), explicit context
// caching, safety settings, Google's built-in tools (search grounding,
// code execution, URL context). Thought signatures on replies without
// function calls are dropped, as the reference drops them; http(s) image
// URLs are passed by reference, which Gemini fetches only for some hosts.
package gemini

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
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

// Complete implements llm.Provider.
func (Provider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	contents, cfg, err := buildRequest(req)
	if err != nil {
		return nil, err
	}
	client, err := newClient(ctx, req)
	if err != nil {
		return nil, err
	}
	model := req.Endpoint.Model
	if req.OnDelta == nil {
		r, err := client.Models.GenerateContent(ctx, model, contents, cfg)
		if err != nil {
			return nil, mapError(err)
		}
		var a accumulator
		if err := a.add(r, nil); err != nil {
			return nil, err
		}
		return a.response()
	}
	var a accumulator
	for r, err := range client.Models.GenerateContentStream(ctx, model, contents, cfg) {
		if err != nil {
			return nil, mapError(err)
		}
		if err := a.add(r, req.OnDelta); err != nil {
			return nil, err
		}
	}
	return a.response()
}

// newClient makes a client for one call, configured from the request
// alone.
func newClient(ctx context.Context, req *llm.Request) (*genai.Client, error) {
	ep := req.Endpoint
	hc := req.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	key := req.Config.APIKey.Value()
	// The key goes on in our transport, so whatever the client would have
	// found in the environment never leaves the process. The client wants
	// some key for the Gemini API backend; this one is always replaced.
	wrapped := *hc
	wrapped.Transport = &keyTransport{base: hc.Transport, header: ep.AuthHeader, prefix: ep.AuthPrefix, key: key}
	opts := genai.HTTPOptions{BaseURL: baseURL(ep.BaseURL), APIVersion: "v1beta"}
	if len(ep.Headers) > 0 {
		opts.Headers = http.Header{}
		for k, v := range ep.Headers {
			opts.Headers.Set(k, v)
		}
	}
	if len(req.Config.ExtraBody) > 0 {
		opts.ExtraBody = req.Config.ExtraBody
	}
	c, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:      "replaced-by-transport",
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  &wrapped,
		HTTPOptions: opts,
	})
	if err != nil {
		return nil, fmt.Errorf("gemini: client: %w", err)
	}
	return c, nil
}

// baseURL returns the server root the client wants (it adds
// /v1beta/models/...), accepting base URLs written with the version.
func baseURL(u string) string {
	u = strings.TrimSuffix(u, "/")
	u = strings.TrimSuffix(u, "/v1beta")
	return u + "/"
}

// keyTransport sets the API key header to the config's key, or removes
// it when there is none.
type keyTransport struct {
	base           http.RoundTripper
	header, prefix string
	key            string
}

func (t *keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Del(keyHeader)
	if t.key != "" {
		h := t.header
		if h == "" {
			h = keyHeader
		}
		r.Header.Set(h, t.prefix+t.key)
	}
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}

// accumulator gathers a reply from one response or the chunks of a
// stream.
type accumulator struct {
	id, model string
	text      strings.Builder
	reasoning strings.Builder
	calls     []event.ToolCall
	finish    genai.FinishReason
	usage     *genai.GenerateContentResponseUsageMetadata
	blocked   string
	chunks    int
}

// add takes one response (or stream chunk), passing its fragments to
// onDelta if set.
func (a *accumulator) add(r *genai.GenerateContentResponse, onDelta func(llm.Delta) error) error {
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
		a.blocked = string(pf.BlockReason)
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
func toolCall(p *genai.Part) (event.ToolCall, error) {
	fc := p.FunctionCall
	args := []byte("{}")
	if len(fc.Args) > 0 {
		var err error
		if args, err = json.Marshal(fc.Args); err != nil {
			return event.ToolCall{}, fmt.Errorf("gemini: function call %s: arguments: %w", fc.Name, err)
		}
	}
	id := fc.ID
	if id == "" {
		id = newCallID()
	}
	if len(p.ThoughtSignature) > 0 {
		id += ThoughtSeparator + base64.StdEncoding.EncodeToString(p.ThoughtSignature)
	}
	return event.ToolCall{ID: id, Name: fc.Name, Arguments: string(args), Origin: event.OriginCompletion}, nil
}

func newCallID() string {
	var b [12]byte
	rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}

func (a *accumulator) response() (*llm.Response, error) {
	if a.chunks == 0 {
		return nil, &llm.APIError{Kind: llm.ErrNoResponse, Message: "gemini: empty stream"}
	}
	if a.blocked != "" && a.text.Len() == 0 && len(a.calls) == 0 {
		return nil, &llm.APIError{Kind: llm.ErrContentPolicy, Code: a.blocked, Message: "gemini: prompt blocked: " + a.blocked}
	}
	msg := event.Message{Role: event.RoleAssistant, Content: event.List[event.Content]{}, ToolCalls: a.calls, ReasoningContent: a.reasoning.String()}
	if a.text.Len() > 0 {
		msg.Content = append(msg.Content, event.Text(a.text.String()))
	}
	r := &llm.Response{ID: a.id, Model: a.model, Message: msg, FinishReason: finishReason(a.finish, len(a.calls) > 0)}
	if u := a.usage; u != nil {
		r.Usage = llm.TokenUsage{
			PromptTokens:     int(u.PromptTokenCount),
			CompletionTokens: int(u.CandidatesTokenCount + u.ThoughtsTokenCount),
			CacheReadTokens:  int(u.CachedContentTokenCount),
			ReasoningTokens:  int(u.ThoughtsTokenCount),
		}
	}
	return r, nil
}

// finishReason maps Gemini's finish reason to the Chat Completions
// vocabulary. Gemini says STOP for replies with function calls.
func finishReason(f genai.FinishReason, calls bool) string {
	switch f {
	case genai.FinishReasonMaxTokens:
		return "length"
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonBlocklist,
		genai.FinishReasonProhibitedContent, genai.FinishReasonSPII, genai.FinishReasonImageSafety:
		return "content_filter"
	}
	if calls {
		return "tool_calls"
	}
	return "stop"
}

// mapError turns a Gemini API error into an *llm.APIError. Transport and
// context errors are returned as they are: package llm classifies those.
func mapError(err error) error {
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) {
		var p *genai.APIError
		if !errors.As(err, &p) {
			return err
		}
		apiErr = *p
	}
	e := llm.NewAPIError(apiErr.Code, apiErr.Status, apiErr.Message, nil, err)
	e.RetryAfter = retryDelay(apiErr.Details)
	return e
}

// retryDelay reads the wait Gemini asks for in a google.rpc.RetryInfo
// detail ("retryDelay": "37s").
func retryDelay(details []map[string]any) time.Duration {
	for _, d := range details {
		if t, _ := d["@type"].(string); !strings.HasSuffix(t, "google.rpc.RetryInfo") {
			continue
		}
		if s, _ := d["retryDelay"].(string); s != "" {
			if dur, err := time.ParseDuration(s); err == nil && dur > 0 {
				return dur
			}
		}
	}
	return 0
}
