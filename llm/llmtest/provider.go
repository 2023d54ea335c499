package llmtest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

// Provider is an llm.Provider that answers from a script in process, with
// no HTTP and no latency: for agent-loop tests and benchmarks that do not
// care about a wire format. Pass it as llm.Options.Provider.
//
// It renders a Reply the provider-neutral way: Reasoning becomes the
// message's reasoning_content (and, with a Signature, a thinking block),
// RedactedThinking redacted thinking blocks, EncryptedReasoning a
// Responses reasoning item. Failures become the *llm.APIError an HTTP
// provider would return, and Disconnect a dropped connection. It is safe
// for concurrent use.
type Provider struct {
	t testing.TB

	mu       sync.Mutex
	script   []Reply
	next     int
	requests []llm.Request
}

var _ llm.Provider = (*Provider)(nil)

// NewProvider returns a Provider answering from replies. A call the script
// has no reply for fails t (t may be nil outside tests) and returns a bad
// request error.
func NewProvider(t testing.TB, replies ...Reply) *Provider {
	return &Provider{t: t, script: slices.Clone(replies)}
}

// Add appends replies to the script.
func (p *Provider) Add(replies ...Reply) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.script = append(p.script, replies...)
}

// Remaining returns how many replies of the script have not been used.
func (p *Provider) Remaining() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.script) - p.next
}

// Requests returns copies of the requests received so far, in order.
func (p *Provider) Requests() []llm.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests)
}

// Complete implements llm.Provider.
func (p *Provider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	rec := *req
	rec.Messages = slices.Clone(req.Messages)
	rec.Tools = slices.Clone(req.Tools)
	p.mu.Lock()
	p.requests = append(p.requests, rec)
	n := len(p.requests)
	if p.next >= len(p.script) {
		p.mu.Unlock()
		msg := fmt.Sprintf("llmtest: script exhausted: call #%d has no scripted reply", n)
		if p.t != nil {
			p.t.Errorf("%s", msg)
		}
		return nil, llm.NewAPIError(http.StatusBadRequest, "", msg, nil, nil)
	}
	r := p.script[p.next]
	p.next++
	p.mu.Unlock()

	if r.Delay > 0 {
		t := time.NewTimer(r.Delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	if r.Disconnect {
		return nil, fmt.Errorf("llmtest: scripted disconnect: %w", io.ErrUnexpectedEOF)
	}
	if f := r.Fail; f != nil && !(f.MidStream && req.OnDelta != nil) {
		return nil, failureError(f)
	}

	tr := &turn{Reply: r, n: n, model: req.Endpoint.Model}
	msg := event.Message{Role: event.RoleAssistant, Content: event.List[event.Content]{}, ReasoningContent: r.Reasoning}
	if r.Text != "" {
		msg.Content = append(msg.Content, event.Text(r.Text))
	}
	if r.Signature != "" {
		sig := r.Signature
		msg.ThinkingBlocks = append(msg.ThinkingBlocks, event.ThinkingBlock{Thinking: r.Reasoning, Signature: &sig})
	}
	for _, d := range r.RedactedThinking {
		msg.ThinkingBlocks = append(msg.ThinkingBlocks, event.ThinkingBlock{Redacted: true, Data: d})
	}
	if r.EncryptedReasoning != "" {
		item := &event.ReasoningItem{ID: fmt.Sprintf("rs_llmtest%d", n), EncryptedContent: r.EncryptedReasoning, Status: "completed"}
		if r.Reasoning != "" {
			item.Summary = event.List[string]{r.Reasoning}
		}
		msg.ResponsesItem = item
	}
	for i, c := range r.ToolCalls {
		args := c.Arguments
		if args == "" {
			args = "{}"
		}
		msg.ToolCalls = append(msg.ToolCalls, event.ToolCall{
			ID: tr.callID("call_", i), Name: c.Name, Arguments: args, Origin: event.OriginCompletion,
		})
	}

	if req.OnDelta != nil {
		if err := streamDeltas(ctx, req.OnDelta, &msg, r.ChunkDelay); err != nil {
			return nil, err
		}
		if r.Fail != nil {
			return nil, failureError(r.Fail)
		}
	}
	u := r.Usage
	return &llm.Response{
		ID:           tr.id("llmtest-"),
		Model:        req.Endpoint.Model,
		Message:      msg,
		FinishReason: r.finishReason(),
		Usage: llm.TokenUsage{
			PromptTokens:     u.PromptTokens,
			CompletionTokens: u.CompletionTokens,
			CacheReadTokens:  u.CacheReadTokens,
			CacheWriteTokens: u.CacheWriteTokens,
			ReasoningTokens:  u.ReasoningTokens,
		},
	}, nil
}

// streamDeltas delivers msg to onDelta in fragments, as a streaming
// provider would, pausing delay between fragments.
func streamDeltas(ctx context.Context, onDelta func(llm.Delta) error, msg *event.Message, delay time.Duration) error {
	var ds []llm.Delta
	for _, p := range chunks(msg.ReasoningContent, 16) {
		ds = append(ds, llm.Delta{Reasoning: p})
	}
	for _, p := range chunks(event.TextOf(msg.Content), 16) {
		ds = append(ds, llm.Delta{Text: p})
	}
	for i, c := range msg.ToolCalls {
		ds = append(ds, llm.Delta{ToolCall: &llm.ToolCallDelta{Index: i, ID: c.ID, Name: c.Name}})
		for _, p := range chunks(c.Arguments, 8) {
			ds = append(ds, llm.Delta{ToolCall: &llm.ToolCallDelta{Index: i, Arguments: p}})
		}
	}
	for i, d := range ds {
		if i > 0 && delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			}
		}
		if err := onDelta(d); err != nil {
			return err
		}
	}
	return nil
}

// failureError returns the error an HTTP provider would return for f.
func failureError(f *Failure) error {
	status := f.Status
	if status == 0 {
		status = http.StatusBadRequest
	}
	msg := f.Message
	if f.ContextWindow && msg == "" {
		msg = "prompt is too long: 208310 tokens > 200000 maximum"
	}
	if msg == "" {
		msg = defaultMessage(status)
	}
	var h http.Header
	if f.RetryAfter != "" {
		h = http.Header{"Retry-After": {f.RetryAfter}}
	}
	return llm.NewAPIError(status, "", msg, h, nil)
}
