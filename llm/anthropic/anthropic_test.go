package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	_ "github.com/gohands/gohands/llm/anthropic"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/secret"
)

// newLLM returns an LLM for model talking to srv, retrying without waits.
func newLLM(t *testing.T, srv *llmtest.Server, model string, edit func(*llm.Config)) *llm.LLM {
	t.Helper()
	cfg := llm.DefaultConfig(model)
	cfg.BaseURL = srv.URL
	cfg.APIKey = secret.New("test-key")
	cfg.RetryMultiplier, cfg.RetryMinWait, cfg.RetryMaxWait = 0, 0, 0
	if edit != nil {
		edit(&cfg)
	}
	// Retries are expected here; their warnings would only be noise.
	l, err := llm.New(cfg, &llm.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// wireBody is the part of a Messages request the tests look at.
type wireBody struct {
	Model     string   `json:"model"`
	MaxTokens int      `json:"max_tokens"`
	Stream    bool     `json:"stream"`
	Temp      *float64 `json:"temperature"`
	System    []block  `json:"system"`
	Messages  []struct {
		Role    string  `json:"role"`
		Content []block `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		InputSchema map[string]any `json:"input_schema"`
	} `json:"tools"`
	Thinking *struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	} `json:"thinking"`
	StopSequences []string `json:"stop_sequences"`
}

type block struct {
	Type         string         `json:"type"`
	Text         string         `json:"text"`
	Thinking     string         `json:"thinking"`
	Signature    string         `json:"signature"`
	Data         string         `json:"data"`
	ID           string         `json:"id"`
	Name         string         `json:"name"`
	Input        map[string]any `json:"input"`
	ToolUseID    string         `json:"tool_use_id"`
	Content      []block        `json:"content"`
	CacheControl *struct {
		Type string `json:"type"`
	} `json:"cache_control"`
	Source *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
		URL       string `json:"url"`
	} `json:"source"`
}

func decode(t *testing.T, r llmtest.Request) wireBody {
	t.Helper()
	var b wireBody
	if err := r.Decode(&b); err != nil {
		t.Fatalf("request body: %v\n%s", err, r.RawBody)
	}
	return b
}

var terminal = llm.ToolSpec{
	Name:        "terminal",
	Description: "Run a shell command.",
	Parameters:  []byte(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false}`),
}

func conversation() []event.Message {
	return []event.Message{
		{Role: event.RoleSystem, Content: event.List[event.Content]{event.Text("You are a careful agent."), event.Text("Today is Sunday.")}},
		event.UserMessage("List the files."),
	}
}

func TestPlainText(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Reply{Text: "Nothing to list.", Usage: llmtest.Usage{PromptTokens: 50, CompletionTokens: 7}})
	l := newLLM(t, srv, "anthropic/claude-opus-4-1", func(c *llm.Config) { c.ReasoningEffort = "none" })
	r, err := l.Completion(context.Background(), conversation(), []llm.ToolSpec{terminal}, &llm.CallOptions{Stop: []string{"</done>"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := event.TextOf(r.Message.Content); got != "Nothing to list." || r.FinishReason != "stop" || r.Message.Role != event.RoleAssistant {
		t.Errorf("reply %q, finish %q", got, r.FinishReason)
	}
	if r.Usage.PromptTokens != 50 || r.Usage.CompletionTokens != 7 || r.ID == "" {
		t.Errorf("usage %+v, id %q", r.Usage, r.ID)
	}

	req := srv.LastRequest()
	if req.Path != "/v1/messages" || req.Header.Get("X-Api-Key") != "test-key" || req.Header.Get("Anthropic-Version") != "2023-06-01" {
		t.Errorf("path %s, headers %v", req.Path, req.Header)
	}
	if req.Header.Get("Authorization") != "" {
		t.Errorf("Authorization header sent: %q", req.Header.Get("Authorization"))
	}
	b := decode(t, req)
	if b.Model != "claude-opus-4-1" || b.MaxTokens <= 0 || b.Stream || b.Thinking != nil {
		t.Errorf("model %q, max_tokens %d, stream %v, thinking %+v", b.Model, b.MaxTokens, b.Stream, b.Thinking)
	}
	if len(b.System) != 2 || b.System[0].Text != "You are a careful agent." || b.System[0].CacheControl == nil || b.System[1].CacheControl != nil {
		t.Errorf("system = %+v (want a cache breakpoint on the first block only)", b.System)
	}
	if len(b.Messages) != 1 || b.Messages[0].Role != "user" || b.Messages[0].Content[0].Text != "List the files." || b.Messages[0].Content[0].CacheControl == nil {
		t.Errorf("messages = %+v", b.Messages)
	}
	if len(b.Tools) != 1 || b.Tools[0].Name != "terminal" || b.Tools[0].Description != "Run a shell command." ||
		b.Tools[0].InputSchema["type"] != "object" || b.Tools[0].InputSchema["additionalProperties"] != false {
		t.Errorf("tools = %+v", b.Tools)
	}
	if req := b.Tools[0].InputSchema["required"].([]any); len(req) != 1 || req[0] != "command" {
		t.Errorf("required = %v", req)
	}
	if len(b.StopSequences) != 1 || b.StopSequences[0] != "</done>" {
		t.Errorf("stop_sequences = %v", b.StopSequences)
	}
}

func TestToolCallsAndResults(t *testing.T) {
	srv := llmtest.NewAnthropic(t,
		llmtest.Reply{Text: "Two at once.", ToolCalls: []llmtest.ToolCall{
			{Name: "terminal", Arguments: `{"command":"ls"}`},
			{Name: "terminal", Arguments: `{"command":"pwd"}`},
		}},
		llmtest.Reply{Text: "Done."},
	)
	l := newLLM(t, srv, "anthropic/claude-opus-4-1", func(c *llm.Config) { c.ReasoningEffort = "none" })
	ctx := context.Background()
	msgs := conversation()
	r, err := l.Completion(ctx, msgs, []llm.ToolSpec{terminal}, nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := r.Message.ToolCalls
	if len(calls) != 2 || calls[0].Arguments != `{"command":"ls"}` || calls[1].Arguments != `{"command":"pwd"}` ||
		calls[0].ID == "" || calls[0].ID == calls[1].ID || calls[0].Origin != event.OriginCompletion || r.FinishReason != "tool_calls" {
		t.Fatalf("tool calls %+v, finish %q", calls, r.FinishReason)
	}

	msgs = append(msgs, r.Message,
		event.Message{Role: event.RoleTool, ToolCallID: calls[0].ID, Name: "terminal", Content: event.List[event.Content]{event.Text("a.txt")}},
		event.Message{Role: event.RoleTool, ToolCallID: calls[1].ID, Name: "terminal", Content: event.List[event.Content]{event.Text("/work")}},
	)
	if _, err := l.Completion(ctx, msgs, []llm.ToolSpec{terminal}, nil); err != nil {
		t.Fatal(err)
	}
	b := decode(t, srv.LastRequest())
	if len(b.Messages) != 3 {
		t.Fatalf("%d messages sent, want user, assistant, user(tool results): %+v", len(b.Messages), b.Messages)
	}
	asst := b.Messages[1]
	if asst.Role != "assistant" || len(asst.Content) != 3 || asst.Content[0].Text != "Two at once." ||
		asst.Content[1].Type != "tool_use" || asst.Content[1].ID != calls[0].ID || asst.Content[2].Input["command"] != "pwd" {
		t.Errorf("assistant turn = %+v", asst)
	}
	res := b.Messages[2]
	if res.Role != "user" || len(res.Content) != 2 || res.Content[0].Type != "tool_result" || res.Content[0].ToolUseID != calls[0].ID ||
		res.Content[1].ToolUseID != calls[1].ID || res.Content[1].Content[0].Text != "/work" {
		t.Errorf("tool results turn = %+v", res)
	}
	if res.Content[0].CacheControl != nil || res.Content[1].CacheControl == nil {
		t.Errorf("cache breakpoint should be on the last tool_result only: %+v", res.Content)
	}
}

func TestToolResultsComeFirstInTheirTurn(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Reply{Text: "ok"})
	l := newLLM(t, srv, "anthropic/claude-opus-4-1", nil)
	msgs := append(conversation(),
		event.Message{Role: event.RoleAssistant, ToolCalls: []event.ToolCall{{ID: "toolu_1", Name: "terminal", Arguments: `{"command":"ls"}`}}},
		event.UserMessage("Also check the tests."),
		event.Message{Role: event.RoleTool, ToolCallID: "toolu_1", Name: "terminal", Content: event.List[event.Content]{event.Text("a.txt")}})
	if _, err := l.Completion(context.Background(), msgs, nil, nil); err != nil {
		t.Fatal(err)
	}
	turn := decode(t, srv.LastRequest()).Messages[2]
	if len(turn.Content) != 2 || turn.Content[0].Type != "tool_result" || turn.Content[1].Text != "Also check the tests." {
		t.Errorf("turn after the tool call = %+v", turn.Content)
	}
}

func TestStreaming(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Reply{
		Reasoning: "Think first.", Signature: "sig", Text: "Here you go.",
		ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"echo hello world"}`}, {Name: "terminal", Arguments: `{"command":"ls"}`}},
		Usage:     llmtest.Usage{PromptTokens: 30, CompletionTokens: 12, CacheReadTokens: 10},
	})
	l := newLLM(t, srv, "anthropic/claude-opus-4-1", func(c *llm.Config) { c.Stream = true })
	var text, reasoning strings.Builder
	args := map[int]string{}
	names := map[int]string{}
	r, err := l.Completion(context.Background(), conversation(), []llm.ToolSpec{terminal}, &llm.CallOptions{OnDelta: func(d llm.Delta) error {
		text.WriteString(d.Text)
		reasoning.WriteString(d.Reasoning)
		if tc := d.ToolCall; tc != nil {
			args[tc.Index] += tc.Arguments
			if tc.Name != "" {
				names[tc.Index] = tc.Name
			}
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !srv.LastRequest().Stream {
		t.Error("request did not ask for a stream")
	}
	if text.String() != "Here you go." || reasoning.String() != "Think first." {
		t.Errorf("streamed text %q, reasoning %q", text.String(), reasoning.String())
	}
	if args[0] != `{"command":"echo hello world"}` || args[1] != `{"command":"ls"}` || names[1] != "terminal" {
		t.Errorf("streamed calls %v %v", args, names)
	}
	m := r.Message
	if event.TextOf(m.Content) != "Here you go." || len(m.ToolCalls) != 2 || m.ToolCalls[0].Arguments != args[0] {
		t.Errorf("final message %+v", m)
	}
	if len(m.ThinkingBlocks) != 1 || *m.ThinkingBlocks[0].Signature != "sig" || m.ReasoningContent != "Think first." {
		t.Errorf("reasoning %+v %q", m.ThinkingBlocks, m.ReasoningContent)
	}
	if r.Usage.PromptTokens != 30 || r.Usage.CacheReadTokens != 10 || r.Usage.CompletionTokens != 12 {
		t.Errorf("usage %+v", r.Usage)
	}
}

func TestStreamOnDeltaErrorAborts(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Reply{Text: "a b c d e f"})
	l := newLLM(t, srv, "anthropic/claude-opus-4-1", nil)
	stop := errors.New("stop here")
	_, err := l.Completion(context.Background(), conversation(), nil, &llm.CallOptions{OnDelta: func(llm.Delta) error { return stop }})
	if !errors.Is(err, stop) {
		t.Errorf("err = %v, want the callback's error", err)
	}
}

// TestThinkingRoundTrip checks extended thinking is asked for as the
// reference does for manual-thinking models, and that thinking blocks come
// back unchanged, in order, ahead of the tool calls on the next turn.
func TestThinkingRoundTrip(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := llmtest.NewAnthropic(t,
			llmtest.Reply{
				Reasoning: "I should look at the files.", Signature: "EqQBCkYIBxgCKkD+sig==",
				RedactedThinking: []string{"EmwKAhgBEgy3va3pzix/LafPsn4a"},
				ToolCalls:        []llmtest.ToolCall{{ID: "toolu_01", Name: "terminal", Arguments: `{"command":"ls"}`}},
			},
			llmtest.Reply{Text: "Found a.txt."},
		)
		l := newLLM(t, srv, "anthropic/claude-sonnet-4-5", func(c *llm.Config) {
			temp := 0.3
			c.Temperature = &temp
			c.Stream = stream
		})
		ctx := context.Background()
		opts := &llm.CallOptions{OnDelta: func(llm.Delta) error { return nil }}
		msgs := conversation()
		r, err := l.Completion(ctx, msgs, []llm.ToolSpec{terminal}, opts)
		if err != nil {
			t.Fatal(err)
		}
		first := srv.LastRequest()
		b := decode(t, first)
		if b.Thinking == nil || b.Thinking.Type != "enabled" || b.Thinking.BudgetTokens != 63999 || b.MaxTokens != 64000 {
			t.Errorf("thinking %+v with max_tokens %d, want enabled with budget min(200000, 64000-1)", b.Thinking, b.MaxTokens)
		}
		if b.Temp != nil {
			t.Errorf("temperature %v sent with thinking on", *b.Temp)
		}
		if got := first.Header.Get("Anthropic-Beta"); got != "interleaved-thinking-2025-05-14" {
			t.Errorf("anthropic-beta = %q", got)
		}
		tb := r.Message.ThinkingBlocks
		if len(tb) != 2 || tb[0].Thinking != "I should look at the files." || *tb[0].Signature != "EqQBCkYIBxgCKkD+sig==" ||
			!tb[1].Redacted || tb[1].Data != "EmwKAhgBEgy3va3pzix/LafPsn4a" {
			t.Fatalf("stream=%v: thinking blocks %+v", stream, tb)
		}

		msgs = append(msgs, r.Message, event.Message{Role: event.RoleTool, ToolCallID: "toolu_01", Name: "terminal", Content: event.List[event.Content]{event.Text("a.txt")}})
		if _, err := l.Completion(ctx, msgs, []llm.ToolSpec{terminal}, opts); err != nil {
			t.Fatal(err)
		}
		asst := decode(t, srv.LastRequest()).Messages[1]
		want := []block{
			{Type: "thinking", Thinking: "I should look at the files.", Signature: "EqQBCkYIBxgCKkD+sig=="},
			{Type: "redacted_thinking", Data: "EmwKAhgBEgy3va3pzix/LafPsn4a"},
			{Type: "tool_use", ID: "toolu_01", Name: "terminal"},
		}
		if len(asst.Content) != len(want) {
			t.Fatalf("stream=%v: assistant turn sent back as %+v", stream, asst.Content)
		}
		for i, w := range want {
			g := asst.Content[i]
			if g.Type != w.Type || g.Thinking != w.Thinking || g.Signature != w.Signature || g.Data != w.Data || g.ID != w.ID || g.Name != w.Name {
				t.Errorf("stream=%v: block %d = %+v, want %+v", stream, i, g, w)
			}
		}
	}
}

func TestUnsignedThinkingIsNotSentBack(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Reply{Text: "ok"})
	l := newLLM(t, srv, "anthropic/claude-opus-4-1", nil)
	msgs := append(conversation(),
		event.Message{Role: event.RoleAssistant, Content: event.List[event.Content]{event.Text("Earlier.")},
			ReasoningContent: "from another provider", ThinkingBlocks: event.List[event.ThinkingBlock]{{Thinking: "unsigned"}}},
		event.UserMessage("Go on."))
	if _, err := l.Completion(context.Background(), msgs, nil, nil); err != nil {
		t.Fatal(err)
	}
	asst := decode(t, srv.LastRequest()).Messages[1]
	if len(asst.Content) != 1 || asst.Content[0].Type != "text" {
		t.Errorf("assistant turn = %+v, want the text only", asst.Content)
	}
}

func TestGeminiThoughtSignaturesCutFromIDs(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Reply{Text: "ok"})
	l := newLLM(t, srv, "anthropic/claude-opus-4-1", nil)
	id := "call_9f2c__thought__CiQBjz1rX+/sig=="
	msgs := append(conversation(),
		event.Message{Role: event.RoleAssistant, Content: event.List[event.Content]{},
			ToolCalls: []event.ToolCall{{ID: id, Name: "terminal", Arguments: `{"command":"ls"}`, Origin: event.OriginCompletion}}},
		event.Message{Role: event.RoleTool, ToolCallID: id, Name: "terminal", Content: event.List[event.Content]{event.Text("a.txt")}})
	if _, err := l.Completion(context.Background(), msgs, nil, nil); err != nil {
		t.Fatal(err)
	}
	b := decode(t, srv.LastRequest())
	if got := b.Messages[1].Content[0].ID; got != "call_9f2c" {
		t.Errorf("tool_use id %q", got)
	}
	if got := b.Messages[2].Content[0].ToolUseID; got != "call_9f2c" {
		t.Errorf("tool_result tool_use_id %q", got)
	}
}

func TestReasoningEffortBudget(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Reply{Text: "ok"})
	l := newLLM(t, srv, "anthropic/claude-opus-4-1", func(c *llm.Config) { c.ReasoningEffort = "medium" })
	if _, err := l.Completion(context.Background(), conversation(), nil, nil); err != nil {
		t.Fatal(err)
	}
	b := decode(t, srv.LastRequest())
	if b.Thinking == nil || b.Thinking.Type != "enabled" || b.Thinking.BudgetTokens != 2048 {
		t.Errorf("thinking = %+v, want enabled with 2048", b.Thinking)
	}
	if srv.LastRequest().Header.Get("Anthropic-Beta") != "" {
		t.Errorf("beta header sent without manual thinking")
	}
}

func TestAdaptiveThinking(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Reply{Text: "ok"}, llmtest.Reply{Text: "ok"})
	l := newLLM(t, srv, "anthropic/claude-opus-4-6", func(c *llm.Config) { c.ReasoningEffort = "low" })
	if _, err := l.Completion(context.Background(), conversation(), nil, nil); err != nil {
		t.Fatal(err)
	}
	r := srv.LastRequest()
	oc, _ := r.Body["output_config"].(map[string]any)
	if b := decode(t, r); b.Thinking == nil || b.Thinking.Type != "adaptive" || b.Thinking.BudgetTokens != 0 || oc["effort"] != "low" {
		t.Errorf("thinking = %+v, output_config = %v", b.Thinking, r.Body["output_config"])
	}

	off := newLLM(t, srv, "anthropic/claude-opus-4-6", func(c *llm.Config) { c.ReasoningEffort = "none" })
	if _, err := off.Completion(context.Background(), conversation(), nil, nil); err != nil {
		t.Fatal(err)
	}
	if b := decode(t, srv.LastRequest()); b.Thinking != nil {
		t.Errorf("thinking %+v sent with reasoning effort none", b.Thinking)
	}
}

func TestImages(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Reply{Text: "A cat."})
	l := newLLM(t, srv, "anthropic/claude-opus-4-1", nil)
	msgs := []event.Message{{Role: event.RoleUser, Content: event.List[event.Content]{
		event.Text("What is this?"),
		event.Image("data:image/png;base64,iVBORw0KGgo=", "https://example.com/cat.jpg"),
	}}}
	if _, err := l.Completion(context.Background(), msgs, nil, nil); err != nil {
		t.Fatal(err)
	}
	c := decode(t, srv.LastRequest()).Messages[0].Content
	if len(c) != 3 || c[1].Type != "image" || c[1].Source.Type != "base64" || c[1].Source.MediaType != "image/png" || c[1].Source.Data != "iVBORw0KGgo=" ||
		c[2].Source.Type != "url" || c[2].Source.URL != "https://example.com/cat.jpg" {
		t.Errorf("content = %+v", c)
	}
	if c[1].CacheControl != nil || c[2].CacheControl == nil {
		t.Errorf("cache breakpoint should follow the last image: %+v", c)
	}

	bad := []event.Message{{Role: event.RoleUser, Content: event.List[event.Content]{event.Image("ftp://x/y.png")}}}
	if _, err := l.Completion(context.Background(), bad, nil, nil); err == nil || !strings.Contains(err.Error(), "http(s) or data URL") {
		t.Errorf("bad image URL: err = %v", err)
	}
	if len(srv.Requests()) != 1 {
		t.Errorf("a request was sent for a message that cannot be converted")
	}
}

func TestRateLimitErrorKind(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.RateLimited(7*time.Second))
	l := newLLM(t, srv, "anthropic/claude-opus-4-1", func(c *llm.Config) { c.NumRetries = 1 })
	_, err := l.Completion(context.Background(), conversation(), nil, nil)
	var apiErr *llm.APIError
	if !errors.Is(err, llm.ErrRateLimit) || !errors.As(err, &apiErr) || apiErr.RetryAfter != 7*time.Second || apiErr.Code != "rate_limit_error" {
		t.Errorf("err = %v (%+v)", err, apiErr)
	}
}

func TestCostAccounting(t *testing.T) {
	srv := llmtest.NewAnthropic(t,
		llmtest.Reply{Text: "one", Usage: llmtest.Usage{PromptTokens: 10000, CompletionTokens: 500, CacheReadTokens: 6000, CacheWriteTokens: 3000}},
		llmtest.Reply{Text: "two", Usage: llmtest.Usage{PromptTokens: 12000, CompletionTokens: 100, CacheReadTokens: 9000}},
	)
	l := newLLM(t, srv, "anthropic/claude-sonnet-4-5", nil)
	for range 2 {
		if _, err := l.Completion(context.Background(), conversation(), nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	m := l.Metrics()
	// claude-sonnet-4-5: $3/M input, $15/M output, $0.30/M cache read,
	// $3.75/M cache write.
	want := (1000*3+6000*0.3+3000*3.75+500*15)/1e6 + (3000*3+9000*0.3+100*15)/1e6
	if math.Abs(m.AccumulatedCost-want) > 1e-12 {
		t.Errorf("accumulated cost %.8f, want %.8f", m.AccumulatedCost, want)
	}
	u := m.AccumulatedTokenUsage
	if u == nil || u.PromptTokens != 22000 || u.CompletionTokens != 600 || u.CacheReadTokens != 15000 || u.CacheWriteTokens != 3000 {
		t.Errorf("accumulated usage %+v", u)
	}
	if len(m.Costs) != 2 || len(m.TokenUsages) != 2 || len(m.ResponseLatencies) != 2 {
		t.Errorf("costs %d, usages %d, latencies %d", len(m.Costs), len(m.TokenUsages), len(m.ResponseLatencies))
	}
}

func TestNoEnvironmentLeakage(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "junk-env-key")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "junk-env-token")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/junk")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Junk: 1")
	t.Setenv("ANTHROPIC_PROFILE", "junk-profile")
	t.Setenv("ANTHROPIC_CONFIG_DIR", t.TempDir())

	srv := llmtest.NewAnthropic(t, llmtest.Reply{Text: "mine"}, llmtest.Reply{Text: "keyless"})
	l := newLLM(t, srv, "anthropic/claude-opus-4-1", nil)
	if _, err := l.Completion(context.Background(), conversation(), nil, nil); err != nil {
		t.Fatal(err)
	}
	h := srv.LastRequest().Header
	if h.Get("X-Api-Key") != "test-key" || h.Get("Authorization") != "" || h.Get("X-Junk") != "" {
		t.Errorf("headers %v", h)
	}

	// Without a key of its own the LLM sends none, rather than the
	// environment's (a keyless proxy).
	keyless := newLLM(t, srv, "anthropic/claude-opus-4-1", func(c *llm.Config) { c.APIKey = secret.String{} })
	if _, err := keyless.Completion(context.Background(), conversation(), nil, nil); err != nil {
		t.Fatal(err)
	}
	h = srv.LastRequest().Header
	if h.Get("X-Api-Key") != "" || h.Get("Authorization") != "" {
		t.Errorf("keyless call sent credentials: %v", h)
	}
}

func TestBareClaudeNameAndBaseURLForms(t *testing.T) {
	for _, suffix := range []string{"", "/", "/v1", "/v1/messages"} {
		srv := llmtest.NewAnthropic(t, llmtest.Reply{Text: "hi"})
		l := newLLM(t, srv, "claude-haiku-4-5", func(c *llm.Config) { c.BaseURL = srv.URL + suffix })
		if _, err := l.Completion(context.Background(), conversation(), nil, nil); err != nil {
			t.Fatalf("base URL %q: %v", suffix, err)
		}
		if b := decode(t, srv.LastRequest()); b.Model != "claude-haiku-4-5" {
			t.Errorf("model sent as %q", b.Model)
		}
	}
}

func TestExtraHeadersAndBody(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Reply{Text: "hi"})
	l := newLLM(t, srv, "anthropic/claude-sonnet-4-5", func(c *llm.Config) {
		c.ExtraHeaders = map[string]string{"anthropic-beta": "context-1m-2025-08-07", "X-Trace": "t1"}
		c.ExtraBody = map[string]any{"metadata": map[string]any{"user_id": "u1"}}
	})
	if _, err := l.Completion(context.Background(), conversation(), nil, nil); err != nil {
		t.Fatal(err)
	}
	r := srv.LastRequest()
	if got := r.Header.Get("Anthropic-Beta"); got != "interleaved-thinking-2025-05-14,context-1m-2025-08-07" {
		t.Errorf("anthropic-beta = %q", got)
	}
	if r.Header.Get("X-Trace") != "t1" {
		t.Errorf("X-Trace missing")
	}
	if md, _ := r.Body["metadata"].(map[string]any); md["user_id"] != "u1" {
		t.Errorf("metadata = %v", r.Body["metadata"])
	}
}

func TestMidStreamError(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Reply{Text: "partial", Fail: &llmtest.Failure{Status: 529, Message: "Overloaded", MidStream: true}})
	l := newLLM(t, srv, "anthropic/claude-opus-4-1", nil)
	var got strings.Builder
	_, err := l.Completion(context.Background(), conversation(), nil, &llm.CallOptions{OnDelta: func(d llm.Delta) error {
		got.WriteString(d.Text)
		return nil
	}})
	var apiErr *llm.APIError
	if !errors.Is(err, llm.ErrServer) || !errors.As(err, &apiErr) || apiErr.Code != "overloaded_error" || apiErr.Message != "Overloaded" {
		t.Errorf("err = %v (%+v), want the overloaded error", err, apiErr)
	}
	if got.String() != "partial" || len(srv.Requests()) != 1 {
		t.Errorf("streamed %q in %d requests", got.String(), len(srv.Requests()))
	}
}

// TestReferenceRequests compares our request bodies and headers with those
// the Python reference sent for the same conversation, captured into
// testdata/reference_requests.json by testdata/capture_reference.py.
func TestReferenceRequests(t *testing.T) {
	data, err := os.ReadFile("testdata/reference_requests.json")
	if err != nil {
		t.Fatal(err)
	}
	var captured []struct {
		Path    string            `json:"path"`
		Headers map[string]string `json:"headers"`
		Body    map[string]any    `json:"body"`
	}
	if err := json.Unmarshal(data, &captured); err != nil {
		t.Fatal(err)
	}
	sig := "S1"
	msgs := []event.Message{
		{Role: event.RoleSystem, Content: event.List[event.Content]{event.Text("SYS static"), event.Text("SYS dynamic")}},
		{Role: event.RoleUser, Content: event.List[event.Content]{event.Text("do it"), event.Image("https://x/y.png")}},
		{Role: event.RoleAssistant, Content: event.List[event.Content]{event.Text("ok")},
			ThinkingBlocks: event.List[event.ThinkingBlock]{{Thinking: "t1", Signature: &sig}, {Redacted: true, Data: "R1"}},
			ToolCalls: []event.ToolCall{
				{ID: "toolu_a", Name: "think", Arguments: `{"thought":"ls"}`, Origin: event.OriginCompletion},
				{ID: "toolu_b", Name: "think", Arguments: `{"thought":"pwd"}`, Origin: event.OriginCompletion},
			}},
		{Role: event.RoleTool, ToolCallID: "toolu_a", Name: "think", Content: event.List[event.Content]{event.Text("file1")}},
		{Role: event.RoleTool, ToolCallID: "toolu_b", Name: "think", Content: event.List[event.Content]{event.Text("/root")}},
	}
	models := []string{"anthropic/claude-sonnet-4-5", "anthropic/claude-opus-4-1", "anthropic/claude-opus-4-6"}
	if len(captured) != len(models) {
		t.Fatalf("fixture has %d requests, want %d", len(captured), len(models))
	}
	for i, model := range models {
		t.Run(model, func(t *testing.T) {
			ref := captured[i]
			var tools []llm.ToolSpec
			for _, raw := range ref.Body["tools"].([]any) {
				tm := raw.(map[string]any)
				params, _ := json.Marshal(tm["input_schema"])
				tools = append(tools, llm.ToolSpec{Name: tm["name"].(string), Description: tm["description"].(string), Parameters: params})
			}
			srv := llmtest.NewAnthropic(t, llmtest.Reply{Text: "ok"})
			l := newLLM(t, srv, model, nil)
			if _, err := l.Completion(context.Background(), msgs, tools, nil); err != nil {
				t.Fatal(err)
			}
			got := srv.LastRequest()
			if got.Path != ref.Path {
				t.Errorf("path %s, reference %s", got.Path, ref.Path)
			}
			for k, v := range ref.Headers {
				if got.Header.Get(k) != v {
					t.Errorf("header %s = %q, reference %q", k, got.Header.Get(k), v)
				}
			}
			// The reference sends a call of max_tokens 64000 unstreamed,
			// which Anthropic refuses (TestLongCallStreams); we stream it.
			if mt, _ := ref.Body["max_tokens"].(float64); mt > 21333 && ref.Body["stream"] == nil {
				ref.Body["stream"] = true
			}
			if d := cmp.Diff(ref.Body, got.Body); d != "" {
				t.Errorf("request differs from the reference's (-reference +ours):\n%s", d)
			}
		})
	}
}

func TestConformance(t *testing.T) {
	llmtest.Conformance(t, llmtest.ProviderCase{
		Server: llmtest.NewAnthropic,
		LLM: func(t *testing.T, srv *llmtest.Server, edit func(*llm.Config)) *llm.LLM {
			return newLLM(t, srv, "anthropic/claude-opus-4-1", edit)
		},
		NotRetried: []llmtest.Refusal{
			{Reply: llmtest.Fail(401, "invalid x-api-key"), Kind: llm.ErrAuthentication},
			{Reply: llmtest.Fail(400, "messages: roles must alternate"), Kind: llm.ErrBadRequest},
			{Reply: llmtest.Fail(400, "messages.2: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01. Each `tool_use` block must have a corresponding `tool_result` block in the next message."), Kind: llm.ErrMalformedHistory},
		},
	})
}

// TestLongCallStreams: a call whose max_tokens may take longer than the
// ten minutes Anthropic allows a call not streamed is streamed (the caller
// asked for no deltas and gets the whole reply); a shorter one is not.
func TestLongCallStreams(t *testing.T) {
	for _, c := range []struct {
		maxTokens int
		stream    bool
	}{{64000, true}, {21333, false}} {
		srv := llmtest.NewAnthropic(t, llmtest.Reply{Text: "long answer"})
		l := newLLM(t, srv, "anthropic/claude-sonnet-4-5", func(cfg *llm.Config) { cfg.MaxOutputTokens = c.maxTokens })
		r, err := l.Completion(context.Background(), []event.Message{event.UserMessage("Write a book.")}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var b wireBody
		if err := srv.LastRequest().Decode(&b); err != nil {
			t.Fatal(err)
		}
		if b.Stream != c.stream || event.TextOf(r.Message.Content) != "long answer" {
			t.Errorf("max_tokens %d: stream = %v, reply %q; want stream %v", c.maxTokens, b.Stream, event.TextOf(r.Message.Content), c.stream)
		}
	}
}

// TestTemperatureWithoutTopP: temperature and top_p are not sent together
// (recent Claude models refuse both); temperature is kept.
func TestTemperatureWithoutTopP(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Reply{Text: "ok"})
	l := newLLM(t, srv, "anthropic/claude-3-5-haiku-20241022", func(cfg *llm.Config) {
		cfg.Temperature, cfg.TopP = new(0.2), new(0.9)
	})
	if _, err := l.Completion(context.Background(), []event.Message{event.UserMessage("hi")}, nil, nil); err != nil {
		t.Fatal(err)
	}
	body := srv.LastRequest().Body
	if _, ok := body["top_p"]; ok || body["temperature"] != 0.2 {
		t.Errorf("temperature %v, top_p %v: want 0.2 and none", body["temperature"], body["top_p"])
	}
}

// TestStreamIdleTimeout: a stream that stops sending is cut after
// stream_idle_timeout, and retried when nothing of it reached the caller
// (here message_start alone came); with no retry left the error says so.
func TestStreamIdleTimeout(t *testing.T) {
	msgs := []event.Message{event.UserMessage("hi")}
	opts := &llm.CallOptions{OnDelta: func(llm.Delta) error { return nil }}
	// 1 s, not less: the retry streams at once, but a starved reader on a
	// loaded machine can see a gap of a few hundred milliseconds.
	edit := func(retries int) func(*llm.Config) {
		return func(c *llm.Config) { c.StreamIdleTimeout, c.Timeout, c.NumRetries = new(1.0), 60, retries }
	}
	stalled := llmtest.Reply{Text: "never sent", ChunkDelay: time.Hour}

	srv := llmtest.NewAnthropic(t, stalled, llmtest.Reply{Text: "second try"})
	r, err := newLLM(t, srv, "anthropic/claude-3-5-haiku-20241022", edit(2)).Completion(context.Background(), msgs, nil, opts)
	if err != nil || event.TextOf(r.Message.Content) != "second try" || len(srv.Requests()) != 2 {
		t.Fatalf("after an idle stream: %v, %+v, %d requests; want the retry's reply", err, r, len(srv.Requests()))
	}

	srv = llmtest.NewAnthropic(t, stalled)
	_, err = newLLM(t, srv, "anthropic/claude-3-5-haiku-20241022", edit(1)).Completion(context.Background(), msgs, nil, opts)
	if !errors.Is(err, llm.ErrTimeout) || !strings.Contains(err.Error(), "stream_idle_timeout") {
		t.Errorf("err = %v, want ErrTimeout naming stream_idle_timeout", err)
	}
}

// TestStreamIdleAfterText: a stream that stalls after text has reached the
// caller is retried too, as the reference retries it: the caller gets a
// Restart delta that voids the text so far, then the retry's fragments,
// and the reply returned is the retry's alone. An error the server sends
// after text is still not retried (TestMidStreamError).
func TestStreamIdleAfterText(t *testing.T) {
	var text strings.Builder
	var restarts []string // the text held when each Restart came
	opts := &llm.CallOptions{OnDelta: func(d llm.Delta) error {
		if d.Restart {
			if d != (llm.Delta{Restart: true}) {
				t.Errorf("restart delta %+v carries more", d)
			}
			restarts = append(restarts, text.String())
			text.Reset()
		}
		text.WriteString(d.Text)
		return nil
	}}
	var retried []error
	srv := llmtest.NewAnthropic(t,
		llmtest.Reply{Text: "half of an answer that never ends", StallAfter: 4},
		llmtest.Reply{Text: "the whole answer"})
	cfg := llm.DefaultConfig("anthropic/claude-3-5-haiku-20241022")
	cfg.BaseURL, cfg.APIKey = srv.URL, secret.New("k")
	// 1 s, not less: the retry streams at once, but a starved reader on a
	// loaded machine can see a gap of a few hundred milliseconds.
	cfg.StreamIdleTimeout, cfg.NumRetries, cfg.RetryMinWait, cfg.RetryMaxWait, cfg.RetryMultiplier = new(1.0), 2, 0, 0, 0
	l, err := llm.New(cfg, &llm.Options{Logger: slog.New(slog.DiscardHandler), OnRetry: func(_ int, _ time.Duration, err error) { retried = append(retried, err) }})
	if err != nil {
		t.Fatal(err)
	}
	r, err := l.Completion(context.Background(), []event.Message{event.UserMessage("hi")}, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := event.TextOf(r.Message.Content); got != "the whole answer" || text.String() != got || len(srv.Requests()) != 2 {
		t.Errorf("reply %q, streamed after the restart %q, %d requests; want the retry's alone, 2 requests", got, text.String(), len(srv.Requests()))
	}
	if len(restarts) != 1 || restarts[0] == "" || !strings.HasPrefix("half of an answer that never ends", restarts[0]) {
		t.Errorf("restarts after %q; want one, after part of the first answer", restarts)
	}
	if len(retried) != 1 || !errors.Is(retried[0], llm.ErrTimeout) || !strings.Contains(retried[0].Error(), "stream_idle_timeout") {
		t.Errorf("OnRetry saw %v; want one stream_idle_timeout", retried)
	}
}

// TestToolResultImage: a tool result's image (a browser screenshot) is an
// image block inside the tool_result, which the Messages API takes.
func TestToolResultImage(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Reply{Text: "I see it."})
	msgs := []event.Message{
		event.UserMessage("Take a screenshot."),
		{Role: event.RoleAssistant, ToolCalls: []event.ToolCall{{ID: "toolu_1", Name: "browser", Arguments: `{}`}}},
		{Role: event.RoleTool, ToolCallID: "toolu_1", Name: "browser", Content: event.List[event.Content]{event.Text("loaded"), event.Image(llmtest.TinyPNG)}},
	}
	if _, err := newLLM(t, srv, "anthropic/claude-opus-4-1", nil).Completion(context.Background(), msgs, nil, nil); err != nil {
		t.Fatal(err)
	}
	var b struct {
		Messages []struct {
			Content []struct {
				Type    string `json:"type"`
				Content []struct {
					Type   string `json:"type"`
					Source *struct {
						MediaType string `json:"media_type"`
					} `json:"source"`
				} `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := srv.LastRequest().Decode(&b); err != nil {
		t.Fatal(err)
	}
	res := b.Messages[len(b.Messages)-1].Content[0]
	if res.Type != "tool_result" || len(res.Content) != 2 || res.Content[1].Type != "image" || res.Content[1].Source == nil || res.Content[1].Source.MediaType != "image/png" {
		t.Errorf("tool result sent as %+v, want its text and the image inside", res)
	}
}
