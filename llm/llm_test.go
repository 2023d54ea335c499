package llm_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/freeport"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// newLLM returns an LLM answering from a scripted in-process provider,
// with retry waits of a millisecond.
func newLLM(t *testing.T, model string, replies ...llmtest.Reply) (*llm.LLM, *llmtest.Provider) {
	t.Helper()
	p := llmtest.NewProvider(t, replies...)
	cfg := llm.DefaultConfig(model)
	cfg.RetryMinWait, cfg.RetryMaxWait, cfg.RetryMultiplier = 0.001, 0.002, 0.001
	l, err := llm.New(cfg, &llm.Options{Provider: p, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return l, p
}

func hi() []event.Message { return []event.Message{event.UserMessage("hi")} }

func TestNewNeedsARegisteredProvider(t *testing.T) {
	// No provider package is imported by this test binary.
	_, err := llm.New(llm.DefaultConfig("gemini/gemini-2.5-pro"), nil)
	if err == nil || !strings.Contains(err.Error(), "import") {
		t.Errorf("err = %v", err)
	}
	if _, err := llm.New(llm.DefaultConfig(""), nil); err == nil {
		t.Error("empty model accepted")
	}
}

func TestRetries(t *testing.T) {
	l, p := newLLM(t, "openai/gpt-4o",
		llmtest.Fail(500, "boom"), llmtest.Reply{Disconnect: true}, llmtest.Fail(503, ""), llmtest.Reply{Text: "ok"})
	resp, err := l.Completion(context.Background(), hi(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if event.TextOf(resp.Message.Content) != "ok" || len(p.Requests()) != 4 {
		t.Errorf("text %q after %d calls", event.TextOf(resp.Message.Content), len(p.Requests()))
	}

	// num_retries counts attempts.
	l, p = newLLM(t, "openai/gpt-4o", llmtest.Fail(500, ""), llmtest.Fail(500, ""), llmtest.Fail(500, ""), llmtest.Fail(500, ""), llmtest.Fail(500, ""))
	if _, err := l.Completion(context.Background(), hi(), nil, nil); !errors.Is(err, llm.ErrServer) {
		t.Errorf("err = %v", err)
	}
	if n := len(p.Requests()); n != 5 {
		t.Errorf("%d attempts, want 5", n)
	}
}

func TestNoResponseRetriedWithTemperature(t *testing.T) {
	var temps []float64
	calls := 0
	prov := llm.ProviderFunc(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		calls++
		temps = append(temps, *req.Config.Temperature)
		if calls == 1 {
			return nil, &llm.APIError{Kind: llm.ErrNoResponse}
		}
		return &llm.Response{Message: event.Message{Role: event.RoleAssistant, Content: event.List[event.Content]{event.Text("x")}}}, nil
	})
	cfg := llm.DefaultConfig("openai/gpt-4o")
	zero := 0.0
	cfg.Temperature = &zero
	cfg.RetryMinWait, cfg.RetryMaxWait = 0.001, 0.001
	l, err := llm.New(cfg, &llm.Options{Provider: prov, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Completion(context.Background(), hi(), nil, nil); err != nil {
		t.Fatal(err)
	}
	if len(temps) != 2 || temps[0] != 0 || temps[1] != 1 {
		t.Errorf("temperatures = %v, want [0 1]", temps)
	}
}

// A call cancelled while it waits out an hour-long Retry-After ends at
// once (in a synctest bubble, the hour costs nothing if it is waited).
func TestCancelDuringRetryWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := llmtest.NewProvider(t, llmtest.RateLimited(time.Hour))
		cfg := llm.DefaultConfig("openai/gpt-4o")
		cfg.RetryMaxWait = 2 * 3600
		var waits []time.Duration
		l, err := llm.New(cfg, &llm.Options{Provider: p, Logger: quiet, OnRetry: func(_ int, wait time.Duration, _ error) {
			waits = append(waits, wait)
		}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		start := time.Now()
		go func() {
			_, err := l.Completion(ctx, hi(), nil, nil)
			errc <- err
		}()
		synctest.Wait() // the call is asleep in its wait
		if len(p.Requests()) != 1 || len(waits) != 1 || waits[0] != time.Hour {
			t.Fatalf("%d requests, waits %v; want one request and an hour's wait", len(p.Requests()), waits)
		}
		time.Sleep(time.Minute)
		cancel()
		err = <-errc
		if !errors.Is(err, context.Canceled) || !errors.Is(err, llm.ErrRateLimit) {
			t.Errorf("err = %v, want cancellation wrapping the rate limit", err)
		}
		if d := time.Since(start); d != time.Minute {
			t.Errorf("the call ended %v after it began, want at its cancellation (1m)", d)
		}
	})
}

func TestErrorClassification(t *testing.T) {
	tests := []struct {
		status  int
		code    string
		message string
		want    error
	}{
		{400, "context_length_exceeded", "This model's maximum context length is 128000 tokens.", llm.ErrContextWindowExceeded},
		{400, "invalid_request_error", "prompt is too long: 208310 tokens > 200000 maximum", llm.ErrContextWindowExceeded},
		{400, "INVALID_ARGUMENT", "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).", llm.ErrContextWindowExceeded},
		{400, "", "Your input exceeds the context window of this model.", llm.ErrContextWindowExceeded},
		{413, "", "Request too large for model gpt-4o", llm.ErrContextWindowExceeded},
		{400, "", "messages.3: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1", llm.ErrMalformedHistory},
		{401, "invalid_api_key", "Incorrect API key provided", llm.ErrAuthentication},
		{400, "", "API key not valid. Please pass a valid API key.", llm.ErrAuthentication},
		{429, "rate_limit_exceeded", "slow down", llm.ErrRateLimit},
		{529, "overloaded_error", "Overloaded", llm.ErrServer},
		{500, "", "oops", llm.ErrServer},
		{504, "", "gateway timeout", llm.ErrTimeout},
		{400, "", "Output blocked by content filtering policy", llm.ErrContentPolicy},
		{422, "", "bad field", llm.ErrBadRequest},
	}
	for _, tt := range tests {
		err := llm.NewAPIError(tt.status, tt.code, tt.message, nil, nil)
		if !errors.Is(err, tt.want) {
			t.Errorf("%d %q: kind %v, want %v", tt.status, tt.message, err.Kind, tt.want)
		}
	}
	h := http.Header{"Retry-After": {"7"}}
	if d, ok := llm.RetryAfter(llm.NewAPIError(429, "", "", h, nil)); !ok || d != 7*time.Second {
		t.Errorf("Retry-After = %v %v", d, ok)
	}
	h = http.Header{"Retry-After-Ms": {"250"}}
	if d, _ := llm.RetryAfter(llm.NewAPIError(429, "", "", h, nil)); d != 250*time.Millisecond {
		t.Errorf("retry-after-ms = %v", d)
	}
	h = http.Header{"Retry-After": {time.Now().Add(time.Minute).UTC().Format(http.TimeFormat)}}
	if d, _ := llm.RetryAfter(llm.NewAPIError(429, "", "", h, nil)); d < 50*time.Second || d > 61*time.Second {
		t.Errorf("Retry-After date = %v", d)
	}
}

func TestMultimodalRouter(t *testing.T) {
	vision, vp := newLLM(t, "openai/gpt-4o", llmtest.Reply{Text: "from vision"})
	cheap, cp := newLLM(t, "openai/gpt-4o-mini", llmtest.Reply{Text: "from cheap"})
	r := llm.NewMultimodalRouter(vision, cheap)
	resp, err := r.Completion(context.Background(), hi(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if event.TextOf(resp.Message.Content) != "from cheap" || r.Active() != llm.RouteSecondary {
		t.Errorf("text-only call went to %s", r.Active())
	}
	img := []event.Message{{Role: event.RoleUser, Content: event.List[event.Content]{event.Text("what is this?"), event.Image("data:image/png;base64,AAAA")}}}
	resp, err = r.Completion(context.Background(), img, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if event.TextOf(resp.Message.Content) != "from vision" || r.Active() != llm.RoutePrimary {
		t.Errorf("image call went to %s", r.Active())
	}
	if len(vp.Requests()) != 1 || len(cp.Requests()) != 1 {
		t.Errorf("requests: vision %d, cheap %d", len(vp.Requests()), len(cp.Requests()))
	}
	// Text longer than the cheap model's context window goes to primary.
	cfg := llm.DefaultConfig("openai/gpt-4o-mini")
	cfg.MaxInputTokens = 10
	if _, err := llm.New(cfg, &llm.Options{Provider: llmtest.NewProvider(t)}); !errors.Is(err, llm.ErrContextWindowTooSmall) {
		t.Errorf("10-token window: err = %v", err)
	}
	small, err := llm.New(cfg, &llm.Options{Provider: llmtest.NewProvider(t), Logger: quiet, AllowShortContextWindow: true})
	if err != nil {
		t.Fatal(err)
	}
	vp.Add(llmtest.Reply{Text: "long"})
	r = llm.NewMultimodalRouter(vision, small)
	if _, err := r.Completion(context.Background(), []event.Message{event.UserMessage(strings.Repeat("word ", 100))}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if r.Active() != llm.RoutePrimary {
		t.Errorf("long text went to %s", r.Active())
	}
}

func TestFallback(t *testing.T) {
	first, fp := newLLM(t, "openai/gpt-4o", llmtest.RateLimited(0), llmtest.RateLimited(0), llmtest.RateLimited(0), llmtest.RateLimited(0), llmtest.RateLimited(0))
	second, sp := newLLM(t, "anthropic/claude-sonnet-4-5", llmtest.Reply{Text: "from second"})
	f := llm.NewFallback(first, second)
	resp, err := f.Completion(context.Background(), hi(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if event.TextOf(resp.Message.Content) != "from second" || len(fp.Requests()) != 5 || len(sp.Requests()) != 1 {
		t.Errorf("text %q; requests %d then %d", event.TextOf(resp.Message.Content), len(fp.Requests()), len(sp.Requests()))
	}
	// Each model keeps its own metrics.
	if first.Metrics().AccumulatedTokenUsage != nil || len(second.Metrics().ResponseLatencies) != 1 {
		t.Error("metrics not per model")
	}

	// A bad request is not a provider failure: no fallback.
	bad, _ := newLLM(t, "openai/gpt-4o", llmtest.Fail(400, "invalid schema"))
	never, np := newLLM(t, "openai/gpt-4o-mini")
	_, err = llm.NewFallback(bad, never).Completion(context.Background(), hi(), nil, nil)
	if !errors.Is(err, llm.ErrBadRequest) || len(np.Requests()) != 0 {
		t.Errorf("err = %v; fallback called %d times", err, len(np.Requests()))
	}

	// All failing: every error is reported.
	a, _ := newLLM(t, "openai/gpt-4o", llmtest.Fail(500, "a"), llmtest.Fail(500, "a"), llmtest.Fail(500, "a"), llmtest.Fail(500, "a"), llmtest.Fail(500, "a"))
	b, _ := newLLM(t, "openai/gpt-4o", llmtest.Reply{Disconnect: true}, llmtest.Reply{Disconnect: true}, llmtest.Reply{Disconnect: true}, llmtest.Reply{Disconnect: true}, llmtest.Reply{Disconnect: true})
	_, err = llm.NewFallback(a, b).Completion(context.Background(), hi(), nil, nil)
	if !errors.Is(err, llm.ErrServer) || !errors.Is(err, llm.ErrConnection) {
		t.Errorf("err = %v", err)
	}
}

func TestStreamingThroughLLM(t *testing.T) {
	l, _ := newLLM(t, "openai/gpt-4o", llmtest.Reply{Text: "streamed reply text", Reasoning: "thinking"})
	var text strings.Builder
	resp, err := l.Completion(context.Background(), hi(), nil, &llm.CallOptions{OnDelta: func(d llm.Delta) error {
		text.WriteString(d.Text)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if text.String() != "streamed reply text" || event.TextOf(resp.Message.Content) != text.String() {
		t.Errorf("streamed %q, final %q", text.String(), event.TextOf(resp.Message.Content))
	}
	// NoStream turns streaming off for one call.
	l, p := newLLM(t, "openai/gpt-4o", llmtest.Reply{Text: "x"})
	if _, err := l.Completion(context.Background(), hi(), nil, &llm.CallOptions{NoStream: true, OnDelta: func(llm.Delta) error { return nil }}); err != nil {
		t.Fatal(err)
	}
	if p.Requests()[0].OnDelta != nil {
		t.Error("NoStream call was streamed")
	}
}

func TestCacheMarkersForClaude(t *testing.T) {
	msgs := []event.Message{
		{Role: event.RoleSystem, Content: event.List[event.Content]{event.Text("static"), event.Text("dynamic")}},
		event.UserMessage("one"),
		{Role: event.RoleAssistant, Content: event.List[event.Content]{event.Text("two")}},
		event.UserMessage("three"),
	}
	l, p := newLLM(t, "anthropic/claude-sonnet-4-5", llmtest.Reply{Text: "ok"})
	if _, err := l.Completion(context.Background(), msgs, nil, nil); err != nil {
		t.Fatal(err)
	}
	sent := p.Requests()[0].Messages
	var marked []string
	for _, m := range sent {
		for _, c := range m.Content {
			if c.CachePrompt {
				marked = append(marked, c.Text)
			}
		}
	}
	if strings.Join(marked, ",") != "static,three" {
		t.Errorf("cache points on %v", marked)
	}
	if msgs[0].Content[0].CachePrompt {
		t.Error("caller's messages were modified")
	}
	// Not for models without explicit caching.
	l, p = newLLM(t, "openai/gpt-4o", llmtest.Reply{Text: "ok"})
	if _, err := l.Completion(context.Background(), msgs, nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, m := range p.Requests()[0].Messages {
		for _, c := range m.Content {
			if c.CachePrompt {
				t.Error("cache marker sent to gpt-4o")
			}
		}
	}
}

func TestMetricsJSON(t *testing.T) {
	l, _ := newLLM(t, "openai/gpt-4o", llmtest.Reply{ID: "r1", Text: "x", Usage: llmtest.Usage{PromptTokens: 100, CompletionTokens: 10, CacheReadTokens: 50}})
	if _, err := l.Completion(context.Background(), hi(), nil, nil); err != nil {
		t.Fatal(err)
	}
	m := l.Metrics()
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"model_name", "accumulated_cost", "accumulated_token_usage", "costs", "response_latencies", "token_usages"} {
		if _, ok := got[k]; !ok {
			t.Errorf("metrics JSON lacks %s: %s", k, data)
		}
	}
	u := got["token_usages"].([]any)[0].(map[string]any)
	if u["response_id"] != "r1" || u["per_turn_token"] != 110.0 || u["cache_read_tokens"] != 50.0 || u["model"] != "openai/gpt-4o" {
		t.Errorf("token usage = %v", u)
	}
	if r := m.AccumulatedTokenUsage.CacheHitRate(); r != 0.5 {
		t.Errorf("cache hit rate = %v", r)
	}
	var empty llm.Metrics
	data, _ = json.Marshal(empty)
	if !strings.Contains(string(data), `"costs":[]`) {
		t.Errorf("empty metrics = %s", data)
	}
	// Merge adds, and a round trip keeps everything.
	var total llm.Metrics
	total.Merge(m)
	total.Merge(m)
	if total.AccumulatedTokenUsage.PromptTokens != 200 || len(total.TokenUsages) != 2 {
		t.Errorf("merged = %+v", total)
	}
	var back llm.Metrics
	data, _ = json.Marshal(total)
	if err := json.Unmarshal(data, &back); err != nil || back.AccumulatedTokenUsage.PromptTokens != 200 {
		t.Errorf("round trip: %v %+v", err, back)
	}
}

func TestPricing(t *testing.T) {
	for _, tc := range []struct {
		model string
		in    float64
		ok    bool
	}{
		{"openai/gpt-4o", 2.5e-6, true},
		{"gpt-4o-2024-08-06", 2.5e-6, true},
		{"gpt-4o-mini", 0.15e-6, true},
		{"openrouter/openai/gpt-4o-mini-2024-07-18", 0.15e-6, true},
		{"anthropic/claude-sonnet-4-5-20250929", 3e-6, true},
		{"gpt-5.5", 0, false},
		{"ollama/qwen3", 0, false},
	} {
		cfg := llm.DefaultConfig(tc.model)
		p, ok := llm.PriceOf(&cfg)
		if ok != tc.ok || p.Input != tc.in {
			t.Errorf("%s: price %v %v", tc.model, p.Input, ok)
		}
	}
	p := llm.Price{Input: 1, Output: 2, CacheRead: 0.1, CacheWrite: 1.25}
	if c := p.Cost(llm.TokenUsage{PromptTokens: 100, CacheReadTokens: 50, CacheWriteTokens: 10, CompletionTokens: 3}); c != 40+5+12.5+6 {
		t.Errorf("cost = %v", c)
	}
}

func TestEffectiveMaxOutputTokens(t *testing.T) {
	for _, tc := range []struct {
		model, base string
		set, want   int
	}{
		{"openai/gpt-4o", "", 0, 16384},
		{"openai/gpt-4o", "", 1000, 1000},
		{"anthropic/claude-sonnet-4-5", "", 0, 64000},
		{"openai/gpt-5", "", 0, 128000},
		{"openai/gpt-5", "http://proxy", 0, 16384},
		{"litellm_proxy/gpt-5", "http://proxy", 0, 128000},
		{"openai/o3", "", 200000, 100000},
		{"ollama/qwen3", "", 0, 0},
	} {
		cfg := llm.DefaultConfig(tc.model)
		cfg.BaseURL, cfg.MaxOutputTokens = tc.base, tc.set
		if got := llm.EffectiveMaxOutputTokens(&cfg, llm.FeaturesOf(&cfg)); got != tc.want {
			t.Errorf("%s (base %q, set %d) = %d, want %d", tc.model, tc.base, tc.set, got, tc.want)
		}
	}
}

func TestConcurrentCalls(t *testing.T) {
	replies := make([]llmtest.Reply, 20)
	for i := range replies {
		replies[i] = llmtest.Reply{Text: "x", Usage: llmtest.Usage{PromptTokens: 1, CompletionTokens: 1}}
	}
	l, _ := newLLM(t, "openai/gpt-4o", replies...)
	done := make(chan error)
	for range replies {
		go func() {
			_, err := l.Completion(context.Background(), hi(), nil, nil)
			done <- err
		}()
	}
	for range replies {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	if m := l.Metrics(); m.AccumulatedTokenUsage.PromptTokens != 20 {
		t.Errorf("prompt tokens = %d", m.AccumulatedTokenUsage.PromptTokens)
	}
}

func ExampleLLM_Completion() {
	// A scripted provider stands in for a real one; with a real provider
	// package imported, only the config would change.
	provider := llmtest.NewProvider(nil, llmtest.Reply{Text: "Hello! How can I help?"})
	model, err := llm.New(llm.DefaultConfig("openai/gpt-4o"), &llm.Options{Provider: provider})
	if err != nil {
		panic(err)
	}
	resp, err := model.Completion(context.Background(), []event.Message{event.UserMessage("hi")}, nil, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(event.TextOf(resp.Message.Content))
	// Output: Hello! How can I help?
}

func ExampleNewFallback() {
	busy := llmtest.NewProvider(nil, llmtest.Fail(503, "overloaded"))
	spare := llmtest.NewProvider(nil, llmtest.Reply{Text: "answer from the spare model"})
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.NumRetries = 1 // move on at the first failure
	first, _ := llm.New(cfg, &llm.Options{Provider: busy, Logger: quiet})
	second, _ := llm.New(llm.DefaultConfig("anthropic/claude-sonnet-4-5"), &llm.Options{Provider: spare})
	resp, err := llm.NewFallback(first, second).Completion(context.Background(), []event.Message{event.UserMessage("hi")}, nil, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(event.TextOf(resp.Message.Content))
	// Output: answer from the spare model
}

func BenchmarkCompletion(b *testing.B) {
	// The overhead of the LLM layer itself: config, retries loop, metrics
	// and pricing, around a provider that answers at once.
	reply := func(context.Context, *llm.Request) (*llm.Response, error) {
		return &llm.Response{ID: "r", Message: event.Message{Role: event.RoleAssistant, Content: event.List[event.Content]{event.Text("ok")}},
			Usage: llm.TokenUsage{PromptTokens: 100, CompletionTokens: 10}}, nil
	}
	l, err := llm.New(llm.DefaultConfig("openai/gpt-4o"), &llm.Options{Provider: llm.ProviderFunc(reply)})
	if err != nil {
		b.Fatal(err)
	}
	msgs := []event.Message{{Role: event.RoleSystem, Content: event.List[event.Content]{event.Text("sys")}}, event.UserMessage("hi")}
	for b.Loop() {
		if _, err := l.Completion(context.Background(), msgs, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func TestRegistry(t *testing.T) {
	r := llm.NewRegistry()
	var added []string
	r.Subscribe(func(l *llm.LLM) { added = append(added, l.UsageID()) })
	agent, _ := newLLM(t, "openai/gpt-4o", llmtest.Reply{Text: "x", Usage: llmtest.Usage{PromptTokens: 5, CompletionTokens: 1}})
	cfg := llm.DefaultConfig("openai/gpt-4o-mini")
	cfg.UsageID = "condenser"
	condenser, err := llm.New(cfg, &llm.Options{Provider: llmtest.NewProvider(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []*llm.LLM{agent, condenser} {
		if err := r.Add(l); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Add(agent); !errors.Is(err, llm.ErrDuplicateUsageID) {
		t.Errorf("duplicate add: %v", err)
	}
	if _, err := r.Get("nope"); !errors.Is(err, llm.ErrUnknownUsageID) {
		t.Errorf("unknown get: %v", err)
	}
	if got, _ := r.Get("condenser"); got != condenser {
		t.Error("Get returned another LLM")
	}
	if _, err := agent.Completion(context.Background(), hi(), nil, nil); err != nil {
		t.Fatal(err)
	}
	m := r.Metrics()
	if m["default"].AccumulatedTokenUsage.PromptTokens != 5 || m["condenser"].AccumulatedTokenUsage != nil {
		t.Errorf("metrics by usage id = %+v", m)
	}
	if strings.Join(added, ",") != "default,condenser" || strings.Join(r.UsageIDs(), ",") != "condenser,default" {
		t.Errorf("added %v, ids %v", added, r.UsageIDs())
	}
	r.Remove("condenser")
	if len(r.UsageIDs()) != 1 {
		t.Error("Remove did not remove")
	}
}

func TestLogCompletions(t *testing.T) {
	dir := t.TempDir()
	p := llmtest.NewProvider(t, llmtest.Reply{Text: "logged", Usage: llmtest.Usage{PromptTokens: 3, CompletionTokens: 2}}, llmtest.Fail(400, "bad"))
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.LogCompletions, cfg.LogCompletionsFolder = true, dir
	l, err := llm.New(cfg, &llm.Options{Provider: p, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Completion(context.Background(), hi(), nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Completion(context.Background(), hi(), nil, nil); err == nil {
		t.Fatal("scripted failure did not fail")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("%d log files", len(entries))
	}
	var ok, failed map[string]any
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(e.Name(), "openai__gpt-4o-") {
			t.Errorf("file name %s", e.Name())
		}
		target := &ok
		if strings.HasSuffix(e.Name(), "-error.json") {
			target = &failed
		}
		if err := json.Unmarshal(data, target); err != nil {
			t.Fatal(err)
		}
	}
	if ok == nil || failed == nil {
		t.Fatalf("want one log and one error log, got %v", entries)
	}
	if ok["usage_summary"].(map[string]any)["prompt_tokens"] != 3.0 || ok["messages"] == nil {
		t.Errorf("log = %v", ok)
	}
	if !strings.Contains(failed["error"].(map[string]any)["message"].(string), "bad") {
		t.Errorf("error log = %v", failed)
	}
}

func TestCacheTooSmallRetriedWithoutMarkers(t *testing.T) {
	p := llmtest.NewProvider(t,
		llmtest.Fail(400, "The cached content is of 1171 tokens. The minimum token count to start caching is 4096."),
		llmtest.Reply{Text: "ok"})
	var retries int
	cfg := llm.DefaultConfig("anthropic/claude-sonnet-4-5")
	l, err := llm.New(cfg, &llm.Options{Provider: p, Logger: quiet, OnRetry: func(int, time.Duration, error) { retries++ }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Completion(context.Background(), hi(), nil, nil); err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	if len(reqs) != 2 || !reqs[0].Messages[0].Content[0].CachePrompt || reqs[1].Messages[0].Content[0].CachePrompt {
		t.Errorf("requests: %d; markers %v then %v", len(reqs), reqs[0].Messages[0].Content[0].CachePrompt, reqs[len(reqs)-1].Messages[0].Content[0].CachePrompt)
	}
	if retries != 0 {
		t.Errorf("OnRetry called %d times for a non-retryable error", retries)
	}
}

func TestOnRetry(t *testing.T) {
	p := llmtest.NewProvider(t, llmtest.Fail(500, ""), llmtest.Reply{Text: "ok"})
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.RetryMinWait, cfg.RetryMaxWait = 0.001, 0.001
	var got []int
	l, err := llm.New(cfg, &llm.Options{Provider: p, Logger: quiet, OnRetry: func(n int, _ time.Duration, err error) {
		if errors.Is(err, llm.ErrServer) {
			got = append(got, n)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Completion(context.Background(), hi(), nil, nil); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != 1 {
		t.Errorf("OnRetry calls = %v", got)
	}
}

// A provider's Retry-After, like the jittered backoff, must not make a
// call wait longer than retry_max_wait: the hook sees every wait before it
// is taken, and cancels the call instead of sleeping for a day.
func TestRetryWaitCappedByMaxWait(t *testing.T) {
	p := llmtest.NewProvider(t,
		llmtest.RateLimited(100000*time.Second),
		llmtest.RateLimited(100000*time.Second),
		llmtest.RateLimited(100000*time.Second))
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.NumRetries = 3
	cfg.RetryMinWait, cfg.RetryMaxWait = 0.001, 0.001
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var waits []time.Duration
	var logs strings.Builder
	l, err := llm.New(cfg, &llm.Options{
		Provider: p,
		Logger:   slog.New(slog.NewTextHandler(&logs, nil)),
		OnRetry: func(_ int, wait time.Duration, _ error) {
			waits = append(waits, wait)
			if wait > time.Millisecond {
				cancel()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Completion(ctx, hi(), nil, nil)
	if len(waits) != 2 {
		t.Fatalf("retries = %d (%v), want 2; err %v", len(waits), waits, err)
	}
	for _, w := range waits {
		if w > time.Millisecond {
			t.Errorf("wait %v exceeds retry_max_wait 1ms", w)
		}
	}
	if !errors.Is(err, llm.ErrRateLimit) || !strings.Contains(err.Error(), "retry_max_wait") {
		t.Errorf("err = %v, want a rate limit error that names retry_max_wait", err)
	}
	if !strings.Contains(logs.String(), "retry_max_wait") {
		t.Errorf("retry log does not say the wait was capped:\n%s", logs.String())
	}
}

func TestInlineImages(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n0000")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(png)
	}))
	defer srv.Close()
	p := llmtest.NewProvider(t, llmtest.Reply{Text: "a cat"})
	cfg := llm.DefaultConfig("openai/gpt-4o")
	yes := true
	cfg.InlineImageURLs = &yes
	l, err := llm.New(cfg, &llm.Options{Provider: p, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []event.Message{{Role: event.RoleUser, Content: event.List[event.Content]{event.Text("what?"), event.Image(srv.URL+"/cat.png", "data:image/gif;base64,R0lG")}}}
	if _, err := l.Completion(context.Background(), msgs, nil, nil); err != nil {
		t.Fatal(err)
	}
	urls := p.Requests()[0].Messages[0].Content[1].ImageURLs
	want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
	if urls[0] != want || urls[1] != "data:image/gif;base64,R0lG" {
		t.Errorf("sent %v", urls)
	}
	if msgs[0].Content[1].ImageURLs[0] != srv.URL+"/cat.png" {
		t.Error("caller's message modified")
	}
}

func TestStreamIterator(t *testing.T) {
	l, _ := newLLM(t, "openai/gpt-4o", llmtest.Reply{Text: "one two three four five six seven"}, llmtest.Reply{Text: "a long enough reply to come in chunks"})
	var text strings.Builder
	var final *llm.Response
	for c, err := range llm.Stream(context.Background(), l, hi(), nil, nil) {
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(c.Delta.Text)
		if c.Response != nil {
			final = c.Response
		}
	}
	if final == nil || event.TextOf(final.Message.Content) != text.String() || text.String() != "one two three four five six seven" {
		t.Errorf("streamed %q, final %+v", text.String(), final)
	}
	// Breaking out of the loop ends the call.
	n := 0
	for range llm.Stream(context.Background(), l, hi(), nil, nil) {
		n++
		break
	}
	if n != 1 {
		t.Errorf("%d chunks after break", n)
	}
	// Errors end the stream.
	bad, _ := newLLM(t, "openai/gpt-4o", llmtest.Fail(401, "no"))
	for _, err := range llm.Stream(context.Background(), bad, hi(), nil, nil) {
		if !errors.Is(err, llm.ErrAuthentication) {
			t.Errorf("err = %v", err)
		}
	}
}

func TestRandomRouter(t *testing.T) {
	a, ap := newLLM(t, "openai/gpt-4o", make([]llmtest.Reply, 50)...)
	b, bp := newLLM(t, "openai/gpt-4o-mini", make([]llmtest.Reply, 50)...)
	r := llm.NewRandomRouter(map[string]llm.Model{"a": a, "b": b})
	for range 40 {
		if _, err := r.Completion(context.Background(), hi(), nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Each side is picked with probability 1/2; 40 calls all to one side
	// happen with probability 2^-39.
	if len(ap.Requests()) == 0 || len(bp.Requests()) == 0 {
		t.Errorf("calls: a %d, b %d", len(ap.Requests()), len(bp.Requests()))
	}
}

// Options.Retryable can refuse a retry the LLM would make.
func TestRetryableRefuses(t *testing.T) {
	p := llmtest.NewProvider(t, llmtest.Fail(501, ""), llmtest.Reply{Text: "ok"})
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.RetryMinWait, cfg.RetryMaxWait = 0.001, 0.001
	var asked int
	l, err := llm.New(cfg, &llm.Options{Provider: p, Logger: quiet, Retryable: func(err error) bool {
		asked++
		var ae *llm.APIError
		return !errors.As(err, &ae) || ae.StatusCode != 501
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Completion(context.Background(), hi(), nil, nil); !errors.Is(err, llm.ErrServer) {
		t.Fatalf("err = %v, want the 501 at once", err)
	}
	if asked != 1 || p.Remaining() != 1 {
		t.Errorf("asked %d times, %d replies left; want 1 and 1", asked, p.Remaining())
	}
}

// An endpoint where nothing listens, or whose host does not exist, fails
// the call at once: the default retries (five attempts, 8 to 64 s apart)
// would hide a wrong address for two minutes. A reset connection is still
// retried.
func TestUnreachableNotRetried(t *testing.T) {
	addr, err := freeport.Addr()
	if err != nil {
		t.Fatal(err)
	}
	var dials int
	refused := llm.ProviderFunc(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		dials++
		resp, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json", strings.NewReader("{}"))
		if err == nil {
			resp.Body.Close()
			return nil, errors.New("something listens at the closed port")
		}
		return nil, err
	})
	cfg := llm.DefaultConfig("openai/gpt-4o")
	var retries int
	l, err := llm.New(cfg, &llm.Options{Provider: refused, Logger: quiet, OnRetry: func(int, time.Duration, error) { retries++ }})
	if err != nil {
		t.Fatal(err)
	}
	// The hang guard: a retry would wait 8 s.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = l.Completion(ctx, hi(), nil, nil)
	if !errors.Is(err, llm.ErrConnection) || !llm.Unreachable(err) || ctx.Err() != nil {
		t.Fatalf("err = %v, want a connection error that is Unreachable, at once", err)
	}
	if !strings.Contains(err.Error(), "not retried: nothing listens at the model's address") {
		t.Errorf("err = %v, want it to say why it was not retried", err)
	}
	if dials != 1 || retries != 0 {
		t.Errorf("%d attempts, %d retries; want 1 and 0", dials, retries)
	}

	for _, c := range []struct {
		err  error
		want bool
	}{
		{&net.DNSError{Err: "no such host", Name: "api.example.invalid", IsNotFound: true}, true},
		{&net.DNSError{Err: "server misbehaving", Name: "api.example.com", IsTemporary: true}, false},
		{&llm.APIError{Kind: llm.ErrConnection, Err: syscall.ECONNRESET}, false},
		{fmt.Errorf("wrapped: %w", &llm.APIError{Kind: llm.ErrConnection, Err: syscall.ECONNREFUSED}), true},
		{llm.ErrServer, false},
	} {
		if got := llm.Unreachable(c.err); got != c.want {
			t.Errorf("Unreachable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
