package anthropic_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/secret"
)

// rawLLM returns an LLM talking to a server that answers every request
// with body (a stream when it starts with "event:").
func rawLLM(t *testing.T, status int, body string) *llm.LLM {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		ct := "application/json"
		if strings.HasPrefix(body, "event:") {
			ct = "text/event-stream"
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Retry-After", "4")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	cfg := llm.DefaultConfig("anthropic/claude-opus-4-1")
	cfg.BaseURL, cfg.APIKey, cfg.NumRetries = srv.URL, secret.New("k"), 1
	l, err := llm.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func ev(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }

var (
	start    = ev("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-1","content":[],"stop_reason":null,"usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":1}}}`)
	textOpen = ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`)
	tail = ev("content_block_stop", `{"type":"content_block_stop","index":0}`) +
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7,"output_tokens_details":{"thinking_tokens":3}}}`) +
		ev("message_stop", `{"type":"message_stop"}`)
)

func streamOpts() *llm.CallOptions {
	return &llm.CallOptions{OnDelta: func(llm.Delta) error { return nil }}
}

// TestStreamUsageFromMessageDelta checks message_delta's counts replace
// those of message_start that it gives, and keep the others.
func TestStreamUsageFromMessageDelta(t *testing.T) {
	r, err := rawLLM(t, 200, start+ev("ping", `{"type":"ping"}`)+textOpen+tail).Completion(context.Background(), conversation(), nil, streamOpts())
	if err != nil {
		t.Fatal(err)
	}
	if u := r.Usage; u.PromptTokens != 15 || u.CacheReadTokens != 5 || u.CompletionTokens != 7 || u.ReasoningTokens != 3 || r.ID != "msg_1" || r.FinishReason != "stop" {
		t.Errorf("response %+v", r)
	}
}

// TestDroppedStream checks a stream cut off, inside an event or between
// two, fails rather than passing for a whole reply.
func TestDroppedStream(t *testing.T) {
	for name, body := range map[string]string{
		"inside an event": start + textOpen + "event: content_block_delta\ndata: {\"type\":\"content_bl",
		"between events":  start + textOpen,
	} {
		_, err := rawLLM(t, 200, body).Completion(context.Background(), conversation(), nil, streamOpts())
		if !errors.Is(err, llm.ErrConnection) && !errors.Is(err, llm.ErrNoResponse) {
			t.Errorf("%s: err = %v, want a connection or no-response error", name, err)
		}
	}
}

// TestMalformedReply checks replies that are not the API's JSON give an
// error that says so.
func TestMalformedReply(t *testing.T) {
	cases := []struct {
		name, body string
		opts       *llm.CallOptions
	}{
		{"plain", `{"id":"msg_1","content":[`, nil},
		{"stream event", start + ev("content_block_start", `{"type":"content_block_start",`), streamOpts()},
		{"block out of order", start + ev("content_block_start", `{"type":"content_block_start","index":3,"content_block":{"type":"text","text":""}}`) + tail, streamOpts()},
		{"delta before start", ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`), streamOpts()},
	}
	for _, c := range cases {
		_, err := rawLLM(t, 200, c.body).Completion(context.Background(), conversation(), nil, c.opts)
		if err == nil || !strings.Contains(err.Error(), "malformed reply") {
			t.Errorf("%s: err = %v, want a malformed-reply error", c.name, err)
		}
	}
}

// TestErrorEventMidStream checks an error event after some content fails
// the call with its type's kind, and that the content already streamed
// was passed on.
func TestErrorEventMidStream(t *testing.T) {
	body := start + textOpen + ev("error", `{"type":"error","error":{"type":"rate_limit_error","message":"Slow down."}}`)
	var got strings.Builder
	_, err := rawLLM(t, 200, body).Completion(context.Background(), conversation(), nil, &llm.CallOptions{OnDelta: func(d llm.Delta) error {
		got.WriteString(d.Text)
		return nil
	}})
	var apiErr *llm.APIError
	if !errors.Is(err, llm.ErrRateLimit) || !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Message != "Slow down." || got.String() != "Hi" {
		t.Errorf("err = %v (%+v), streamed %q", err, apiErr, got.String())
	}
}

// TestErrorBodyNotJSON checks a proxy's HTML error page maps by status,
// with its Retry-After.
func TestErrorBodyNotJSON(t *testing.T) {
	_, err := rawLLM(t, 503, "<html>upstream unavailable</html>").Completion(context.Background(), conversation(), nil, nil)
	var apiErr *llm.APIError
	if !errors.Is(err, llm.ErrServer) || !errors.As(err, &apiErr) || apiErr.RetryAfter.Seconds() != 4 || !strings.Contains(apiErr.Message, "upstream unavailable") {
		t.Errorf("err = %v (%+v)", err, apiErr)
	}
}

// TestEmptyThinkingSentBack checks a signed thinking block whose text is
// empty (adaptive thinking with its display omitted) goes back with its
// thinking field present, as the API requires, and that a tool call
// without input streams back as {}.
func TestEmptyThinkingSentBack(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Reply{Text: "ok"})
	l := newLLM(t, srv, "anthropic/claude-opus-4-1", nil)
	sig := "EqQB"
	msgs := append(conversation(),
		event.Message{Role: event.RoleAssistant, ThinkingBlocks: event.List[event.ThinkingBlock]{{Signature: &sig}},
			ToolCalls: []event.ToolCall{{ID: "toolu_1", Name: "finish"}}},
		event.Message{Role: event.RoleTool, ToolCallID: "toolu_1", Name: "finish", Content: event.List[event.Content]{event.Text("done")}})
	if _, err := l.Completion(context.Background(), msgs, nil, nil); err != nil {
		t.Fatal(err)
	}
	asst := srv.LastRequest().Body["messages"].([]any)[1].(map[string]any)["content"].([]any)
	th, tu := asst[0].(map[string]any), asst[1].(map[string]any)
	if v, ok := th["thinking"]; !ok || v != "" || th["signature"] != sig {
		t.Errorf("thinking block sent as %v", th)
	}
	if in, ok := tu["input"].(map[string]any); !ok || len(in) != 0 {
		t.Errorf("tool_use sent as %v", tu)
	}
}
