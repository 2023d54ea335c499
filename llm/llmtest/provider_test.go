package llmtest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
)

// newLLM returns an LLM driven by p, retrying quickly.
func newLLM(t testing.TB, p llm.Provider) *llm.LLM {
	t.Helper()
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.NumRetries = 3
	cfg.RetryMultiplier, cfg.RetryMinWait, cfg.RetryMaxWait = 0, 0, 0
	l, err := llm.New(cfg, &llm.Options{Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestProviderReplies(t *testing.T) {
	p := llmtest.NewProvider(t, script...)
	l := newLLM(t, p)
	ctx := context.Background()
	msgs := []event.Message{event.UserMessage("hi")}

	r, err := l.Completion(ctx, msgs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := r.Message
	if m.Role != event.RoleAssistant || event.TextOf(m.Content) != "Hello there, world." || m.ReasoningContent != "The user greets me." {
		t.Errorf("message = %+v", m)
	}
	if len(m.ThinkingBlocks) != 2 || *m.ThinkingBlocks[0].Signature != "sig-1" || m.ThinkingBlocks[1].Data != "opaque-1" {
		t.Errorf("thinking blocks = %+v", m.ThinkingBlocks)
	}
	if m.ResponsesItem == nil || m.ResponsesItem.EncryptedContent != "gAAAAenc1" {
		t.Errorf("reasoning item = %+v", m.ResponsesItem)
	}
	if r.Usage.PromptTokens != 100 || r.Usage.CacheReadTokens != 30 || r.FinishReason != "stop" {
		t.Errorf("usage %+v, finish %q", r.Usage, r.FinishReason)
	}

	var text strings.Builder
	args := map[int]string{}
	r, err = l.Completion(ctx, msgs, nil, &llm.CallOptions{OnDelta: func(d llm.Delta) error {
		text.WriteString(d.Text)
		if d.ToolCall != nil {
			args[d.ToolCall.Index] += d.ToolCall.Arguments
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Message.ToolCalls; len(got) != 2 || got[0].Name != "terminal" || got[1].ID != "call_given" || r.FinishReason != "tool_calls" {
		t.Errorf("tool calls = %+v, finish %q", got, r.FinishReason)
	}
	if text.String() != "Running two commands." || args[0] != `{"command":"ls -la /tmp"}` {
		t.Errorf("streamed text %q, args %v", text.String(), args)
	}
	if n := len(p.Requests()); n != 2 {
		t.Errorf("%d requests recorded", n)
	}
	if got := l.Metrics().AccumulatedTokenUsage; got == nil || got.PromptTokens != 300 {
		t.Errorf("accumulated usage = %+v", got)
	}
}

func TestProviderFailures(t *testing.T) {
	p := llmtest.NewProvider(t,
		llmtest.RateLimited(0), llmtest.Reply{Disconnect: true}, llmtest.Reply{Text: "third time"},
		llmtest.ContextWindowExceeded(),
		llmtest.Fail(401, "bad key"),
	)
	l := newLLM(t, p)
	ctx := context.Background()
	msgs := []event.Message{event.UserMessage("hi")}

	r, err := l.Completion(ctx, msgs, nil, nil)
	if err != nil || event.TextOf(r.Message.Content) != "third time" {
		t.Fatalf("after a 429 and a disconnect: %v, %+v", err, r)
	}
	if _, err := l.Completion(ctx, msgs, nil, nil); !errors.Is(err, llm.ErrContextWindowExceeded) {
		t.Errorf("err = %v, want ErrContextWindowExceeded", err)
	}
	if _, err := l.Completion(ctx, msgs, nil, nil); !errors.Is(err, llm.ErrAuthentication) {
		t.Errorf("err = %v, want ErrAuthentication", err)
	}
	if p.Remaining() != 0 {
		t.Errorf("Remaining = %d (auth errors must not be retried)", p.Remaining())
	}
}

func TestProviderMidStreamFailure(t *testing.T) {
	p := llmtest.NewProvider(t, llmtest.Reply{Text: "partial", Fail: &llmtest.Failure{Status: 500, MidStream: true}})
	l := newLLM(t, p)
	var got strings.Builder
	_, err := l.Completion(context.Background(), []event.Message{event.UserMessage("hi")}, nil, &llm.CallOptions{OnDelta: func(d llm.Delta) error {
		got.WriteString(d.Text)
		return nil
	}})
	if !errors.Is(err, llm.ErrServer) || got.String() != "partial" {
		t.Errorf("err = %v after streaming %q", err, got.String())
	}
	if n := len(p.Requests()); n != 1 {
		t.Errorf("%d calls: a reply streamed in part must not be retried", n)
	}
}

func TestProviderChunkDelay(t *testing.T) {
	l := newLLM(t, llmtest.NewProvider(t, llmtest.Reply{Text: "one two three four", ChunkDelay: time.Hour}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []string
	_, err := l.Completion(ctx, []event.Message{event.UserMessage("hi")}, nil, &llm.CallOptions{OnDelta: func(d llm.Delta) error {
		got = append(got, d.Text)
		cancel() // interrupt after the first fragment
		return nil
	}})
	if !errors.Is(err, context.Canceled) || len(got) != 1 || got[0] != "one " {
		t.Errorf("err = %v after fragments %q", err, got)
	}
}

func TestProviderDelayHonoursContext(t *testing.T) {
	l := newLLM(t, llmtest.NewProvider(t, llmtest.Reply{Delay: time.Hour}))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := l.Completion(ctx, []event.Message{event.UserMessage("hi")}, nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want a deadline error", err)
	}
}

func TestProviderExhausted(t *testing.T) {
	rec := &recorder{TB: t}
	l := newLLM(t, llmtest.NewProvider(rec))
	_, err := l.Completion(context.Background(), []event.Message{event.UserMessage("hi")}, nil, nil)
	if !errors.Is(err, llm.ErrBadRequest) {
		t.Errorf("err = %v, want ErrBadRequest", err)
	}
	if f := rec.failures(); len(f) != 1 || !strings.Contains(f[0], "script exhausted") {
		t.Errorf("failures = %q", f)
	}
}

// BenchmarkProviderCompletion measures one LLM call through the in-process
// provider: the floor under agent-loop benchmarks.
func BenchmarkProviderCompletion(b *testing.B) {
	p := llmtest.NewProvider(b)
	l := newLLM(b, p)
	msgs := []event.Message{event.UserMessage("hi")}
	reply := llmtest.Reply{Text: "ok", ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"ls"}`}}}
	ctx := context.Background()
	for b.Loop() {
		p.Add(reply)
		if _, err := l.Completion(ctx, msgs, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}
