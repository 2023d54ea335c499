package openai_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/secret"
)

// rawServer answers every call with body (an event stream when it starts
// with "data:" or "event:" or ":"), or aborts the connection after writing
// it when abort is set.
func rawServer(t *testing.T, status int, body string, abort bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if strings.HasPrefix(body, "data:") || strings.HasPrefix(body, "event:") || strings.HasPrefix(body, ":") {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
		if abort {
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func rawLLM(t *testing.T, model string, srv *httptest.Server) *llm.LLM {
	t.Helper()
	cfg := llm.DefaultConfig(model)
	cfg.APIKey = secret.New("sk-test")
	cfg.BaseURL = srv.URL + "/v1"
	cfg.NumRetries = 1
	l, err := llm.New(cfg, &llm.Options{HTTPClient: srv.Client(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// stream makes a streaming call, returning the reply, the streamed text and
// the error.
func stream(t *testing.T, l *llm.LLM) (*llm.Response, string, error) {
	var got strings.Builder
	r, err := l.Completion(context.Background(), userMsgs("hi"), tools, &llm.CallOptions{OnDelta: func(d llm.Delta) error {
		got.WriteString(d.Text)
		return nil
	}})
	return r, got.String(), err
}

const chunkHead = `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":`

func TestChatStreamFraming(t *testing.T) {
	// A chunk split over several data lines (joined with a newline, which
	// JSON reads as white space), comments and keep-alives, CRLF line ends,
	// and events after [DONE] that must be ignored.
	body := ": keep-alive\n\n" +
		"data: " + chunkHead + `{"role":"assistant","content":"Hel"}}]}` + "\n\n" +
		"data: " + chunkHead + "\ndata: " + `{"content":"lo"}}]}` + "\n\n" +
		": OPENROUTER PROCESSING\r\n\r\n" +
		"data: " + chunkHead + `{"content":" world"},"finish_reason":"stop"}]}` + "\r\n\r\n" +
		`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}` + "\n\n" +
		"data: [DONE]\n\n" +
		"data: " + chunkHead + `{"content":" ignored"}}]}` + "\n\n"
	r, streamed, err := stream(t, rawLLM(t, "openai/gpt-4o", rawServer(t, 200, body, false)))
	if err != nil {
		t.Fatal(err)
	}
	if text := event.TextOf(r.Message.Content); text != "Hello world" || streamed != "Hello world" {
		t.Errorf("reply %q, streamed %q", text, streamed)
	}
	if r.FinishReason != "stop" || r.Usage.PromptTokens != 7 || r.Usage.CompletionTokens != 3 || r.ID != "c1" {
		t.Errorf("reply %+v", r)
	}
}

func TestStreamCutInsideAnEvent(t *testing.T) {
	for _, tc := range []struct {
		model, body string
	}{
		{"openai/gpt-4o", "data: " + chunkHead + `{"content":"Hel"}}]}` + "\n\ndata: " + chunkHead + `{"content":"lo`},
		{"openai/gpt-5-mini", "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"m\",\"delta\":\"Hel\"}\n\nevent: response.completed\ndata: {\"type\":\"response.comp"},
	} {
		for _, abort := range []bool{false, true} {
			_, streamed, err := stream(t, rawLLM(t, tc.model, rawServer(t, 200, tc.body, abort)))
			if !errors.Is(err, llm.ErrConnection) || !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("%s abort=%v: err = %v, want ErrConnection for a cut stream", tc.model, abort, err)
			} else if !abort && !strings.Contains(err.Error(), "stream ended inside an event") {
				t.Errorf("%s: err = %v, want it to say the stream was cut", tc.model, err)
			}
			if streamed != "Hel" {
				t.Errorf("%s: streamed %q before the cut", tc.model, streamed)
			}
		}
	}
}

func TestStreamEndsWithoutCompletion(t *testing.T) {
	// Every event whole, but the Responses stream stops before
	// response.completed: no reply.
	body := "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"m\",\"delta\":\"Hel\"}\n\n"
	if _, _, err := stream(t, rawLLM(t, "openai/gpt-5-mini", rawServer(t, 200, body, false))); !errors.Is(err, llm.ErrNoResponse) {
		t.Errorf("err = %v, want ErrNoResponse", err)
	}
	// An empty Chat stream is no reply either.
	if _, _, err := stream(t, rawLLM(t, "openai/gpt-4o", rawServer(t, 200, "data: [DONE]\n\n", false))); !errors.Is(err, llm.ErrNoResponse) {
		t.Errorf("empty chat stream: err = %v, want ErrNoResponse", err)
	}
}

func TestErrorInsideStream(t *testing.T) {
	for _, tc := range []struct {
		name, model, body string
		kind              error
	}{
		{"chat server error", "openai/gpt-4o",
			"data: " + chunkHead + `{"content":"par"}}]}` + "\n\n" + `data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}` + "\n\n",
			llm.ErrServer},
		{"chat proxy overloaded", "openai/gpt-4o",
			"data: " + chunkHead + `{"content":"par"}}]}` + "\n\n" + `data: {"error":{"message":"Overloaded","type":"overloaded_error"}}` + "\n\n",
			llm.ErrServer},
		{"openrouter numeric code", "openai/gpt-4o",
			"data: " + chunkHead + `{"content":"par"}}]}` + "\n\n" + `data: {"id":"c1","object":"chat.completion.chunk","error":{"code":502,"message":"Provider returned error"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}` + "\n\n",
			llm.ErrServer},
		{"openrouter rate limit", "openai/gpt-4o",
			`data: {"error":{"code":429,"message":"Provider is busy"}}` + "\n\n",
			llm.ErrRateLimit},
		{"responses error event", "openai/gpt-5-mini",
			"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"par\"}\n\nevent: error\ndata: {\"type\":\"error\",\"code\":\"rate_limit_exceeded\",\"message\":\"Slow down.\",\"param\":null}\n\n",
			llm.ErrRateLimit},
		{"responses failed", "openai/gpt-5-mini",
			"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"par\"}\n\nevent: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"id\":\"r\",\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"Something went wrong.\"},\"output\":[]}}\n\n",
			llm.ErrServer},
		{"responses context window", "openai/gpt-5-mini",
			"event: error\ndata: {\"type\":\"error\",\"code\":\"context_length_exceeded\",\"message\":\"Your input exceeds the context window of this model.\"}\n\n",
			llm.ErrContextWindowExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := stream(t, rawLLM(t, tc.model, rawServer(t, 200, tc.body, false)))
			if !errors.Is(err, tc.kind) {
				t.Errorf("err = %v, want %v", err, tc.kind)
			}
		})
	}
}

// TestLenientReplies: shapes some compatible servers send where OpenAI
// sends strings are read, not refused.
func TestLenientReplies(t *testing.T) {
	body := `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"Listing."}],"tool_calls":[{"id":"t1","type":"function","function":{"name":"terminal","arguments":{"command":"ls"}}}]}}],"usage":{"prompt_tokens":12.0,"completion_tokens":null,"total_tokens":"12"}}`
	r, err := rawLLM(t, "openai/gpt-4o", rawServer(t, 200, body, false)).Completion(context.Background(), userMsgs("hi"), tools, nil)
	if err != nil {
		t.Fatal(err)
	}
	if event.TextOf(r.Message.Content) != "Listing." || len(r.Message.ToolCalls) != 1 || r.Message.ToolCalls[0].Arguments != `{"command":"ls"}` || r.Usage.PromptTokens != 12 {
		t.Errorf("reply %+v, usage %+v", r.Message, r.Usage)
	}
}

// TestErrorBodyWithStatus200: a proxy that answers 200 with an error body
// gets the error's kind, not "no choices".
func TestErrorBodyWithStatus200(t *testing.T) {
	body := `{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`
	_, err := rawLLM(t, "openai/gpt-4o", rawServer(t, 200, body, false)).Completion(context.Background(), userMsgs("hi"), tools, nil)
	if !errors.Is(err, llm.ErrContextWindowExceeded) {
		t.Errorf("err = %v", err)
	}
}

func TestNonJSONErrorBody(t *testing.T) {
	_, err := rawLLM(t, "openai/gpt-4o", rawServer(t, 502, "<html><body>502 Bad Gateway</body></html>", false)).Completion(context.Background(), userMsgs("hi"), tools, nil)
	var e *llm.APIError
	if !errors.Is(err, llm.ErrServer) || !errors.As(err, &e) || e.StatusCode != 502 || !strings.Contains(e.Message, "502 Bad Gateway") {
		t.Errorf("err = %v", err)
	}
}

func TestBadBaseURL(t *testing.T) {
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.BaseURL = "localhost:8000/v1"
	l, err := llm.New(cfg, &llm.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Completion(context.Background(), userMsgs("hi"), nil, nil); err == nil || !strings.Contains(err.Error(), "base url") {
		t.Errorf("err = %v, want a base url error", err)
	}
}

// TestUnknownOutputItems: output items of kinds gohands does not read are
// skipped whatever their shape; a malformed item of a kind it reads fails
// the call.
func TestUnknownOutputItems(t *testing.T) {
	msg := `{"type":"message","id":"m1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Found it."}]}`
	odd := `{"type":"web_search_call","id":"ws_1","status":"completed","content":"a string where lists go","summary":{"x":1}}`
	body := `{"id":"r1","object":"response","status":"completed","model":"gpt-5-mini","output":[` + odd + `,` + msg + `],"usage":{"input_tokens":5,"output_tokens":2}}`
	r, err := rawLLM(t, "openai/gpt-5-mini", rawServer(t, 200, body, false)).Completion(context.Background(), userMsgs("hi"), tools, nil)
	if err != nil || event.TextOf(r.Message.Content) != "Found it." {
		t.Fatalf("err %v, reply %+v", err, r)
	}
	bad := `{"id":"r1","object":"response","status":"completed","model":"gpt-5-mini","output":[{"type":"message","id":"m1","content":"not a list"}]}`
	if _, err := rawLLM(t, "openai/gpt-5-mini", rawServer(t, 200, bad, false)).Completion(context.Background(), userMsgs("hi"), tools, nil); err == nil || !strings.Contains(err.Error(), "decoding the reply") {
		t.Errorf("malformed message item: err = %v", err)
	}
}

// TestStreamReusesConnection: a finished stream leaves its connection for
// the next call, for both APIs (three calls, one connection).
func TestStreamReusesConnection(t *testing.T) {
	for _, tc := range []struct{ model, body string }{
		{"openai/gpt-4o", "data: " + chunkHead + `{"content":"hi"},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"},
		{"openai/gpt-5-mini", "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"hi\"}\n\nevent: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"status\":\"completed\",\"model\":\"m\",\"output\":[{\"type\":\"message\",\"id\":\"m\",\"content\":[{\"type\":\"output_text\",\"text\":\"hi\"}]}]}}\n\n"},
	} {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, tc.body)
			w.(http.Flusher).Flush() // chunked, as real streams are
		}))
		var conns atomic.Int32
		srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		}
		srv.Start()
		l := rawLLM(t, tc.model, srv)
		for range 3 {
			if r, text, err := stream(t, l); err != nil || text != "hi" || event.TextOf(r.Message.Content) != "hi" {
				t.Fatalf("%s: err %v, streamed %q", tc.model, err, text)
			}
		}
		srv.Close()
		if n := conns.Load(); n != 1 {
			t.Errorf("%s: %d connections for 3 streamed calls, want 1", tc.model, n)
		}
	}
}

// TestStreamHeldOpenAfterDone: a server that keeps the stream open after
// [DONE] does not hold the call.
func TestStreamHeldOpenAfterDone(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: "+chunkHead+`{"content":"hi"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	l := rawLLM(t, "openai/gpt-4o", srv)
	if r, _, err := stream(t, l); err != nil || event.TextOf(r.Message.Content) != "hi" {
		t.Fatalf("err %v", err)
	}
}

// TestProxyThinkingBlocksStreamed: the thinking blocks a LiteLLM proxy
// streams for Claude (text in pieces, then the signature; redacted blocks
// whole) make the same blocks as a plain reply, as LiteLLM's
// stream_chunk_builder assembles them.
func TestProxyThinkingBlocksStreamed(t *testing.T) {
	delta := func(d string) string { return "data: " + chunkHead + d + "}]}\n\n" }
	body := delta(`{"role":"assistant","reasoning_content":"I should ","thinking_blocks":[{"type":"thinking","thinking":"I should ","signature":null}]}`) +
		delta(`{"reasoning_content":"list.","thinking_blocks":[{"type":"thinking","thinking":"list."}]}`) +
		delta(`{"thinking_blocks":[{"type":"thinking","signature":"sig=="}]}`) +
		delta(`{"thinking_blocks":[{"type":"redacted_thinking","data":"opaque"}]}`) +
		delta(`{"thinking_blocks":[{"type":"thinking","thinking":"unsigned, dropped"}]}`) +
		delta(`{"tool_calls":[{"index":0,"id":"toolu_1","type":"function","function":{"name":"terminal","arguments":"{\"command\":\"ls\"}"}}]},"finish_reason":"tool_calls"`) +
		"data: [DONE]\n\n"
	r, _, err := stream(t, rawLLM(t, "litellm_proxy/claude-sonnet-4-5", rawServer(t, 200, body, false)))
	if err != nil {
		t.Fatal(err)
	}
	tb := r.Message.ThinkingBlocks
	if len(tb) != 2 || tb[0].Thinking != "I should list." || tb[0].Signature == nil || *tb[0].Signature != "sig==" || !tb[1].Redacted || tb[1].Data != "opaque" {
		t.Errorf("thinking blocks = %+v", tb)
	}
	if r.Message.ReasoningContent != "I should list." || len(r.Message.ToolCalls) != 1 {
		t.Errorf("message = %+v", r.Message)
	}
}
