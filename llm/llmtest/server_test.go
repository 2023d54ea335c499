package llmtest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/llm/llmtest"

	"github.com/gohands/gohands/internal/golden"
)

// script exercises every part of a Reply.
var script = []llmtest.Reply{
	{
		Text:               "Hello there, world.",
		Reasoning:          "The user greets me.",
		Signature:          "sig-1",
		EncryptedReasoning: "gAAAAenc1",
		RedactedThinking:   []string{"opaque-1"},
		Usage:              llmtest.Usage{PromptTokens: 100, CompletionTokens: 20, CacheReadTokens: 30, CacheWriteTokens: 10, ReasoningTokens: 8},
	},
	{
		Text: "Running two commands.",
		ToolCalls: []llmtest.ToolCall{
			{Name: "terminal", Arguments: `{"command":"ls -la /tmp"}`},
			{ID: "call_given", Name: "file_editor", Arguments: `{"command":"view","path":"/tmp/ünï"}`},
		},
		Usage: llmtest.Usage{PromptTokens: 200, CompletionTokens: 40},
	},
}

// post sends body to srv at path and returns the response.
func post(t *testing.T, srv *llmtest.Server, path string, body any) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Post(srv.URL+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// wireCase says how to call one wire format.
type wireCase struct {
	wire  llmtest.Wire
	start func(testing.TB, ...llmtest.Reply) *llmtest.Server
	path  func(stream bool) string
	body  func(stream bool) map[string]any
}

var wires = []wireCase{
	{
		llmtest.WireChat, llmtest.NewChat,
		func(bool) string { return "/v1/chat/completions" },
		func(stream bool) map[string]any {
			return map[string]any{"model": "gpt-4o", "stream": stream, "stream_options": map[string]any{"include_usage": true},
				"messages": []any{map[string]any{"role": "user", "content": "hi"}}}
		},
	},
	{
		llmtest.WireResponses, llmtest.NewResponses,
		func(bool) string { return "/v1/responses" },
		func(stream bool) map[string]any {
			return map[string]any{"model": "gpt-5", "stream": stream, "input": "hi", "store": false}
		},
	},
	{
		llmtest.WireAnthropic, llmtest.NewAnthropic,
		func(bool) string { return "/v1/messages" },
		func(stream bool) map[string]any {
			return map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 1024, "stream": stream,
				"messages": []any{map[string]any{"role": "user", "content": "hi"}}}
		},
	},
	{
		llmtest.WireGemini, llmtest.NewGemini,
		func(stream bool) string {
			if stream {
				return "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
			}
			return "/v1beta/models/gemini-2.5-pro:generateContent"
		},
		func(bool) map[string]any {
			return map[string]any{"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "hi"}}}}}
		},
	},
}

// TestGolden pins each wire format, plain and streamed, byte for byte.
// Run with -update to rewrite testdata after a deliberate change.
func TestGolden(t *testing.T) {
	for _, wc := range wires {
		for _, stream := range []bool{false, true} {
			name := fmt.Sprintf("%s-%s", wc.wire, map[bool]string{false: "plain", true: "stream"}[stream])
			t.Run(name, func(t *testing.T) {
				srv := wc.start(t, script...)
				var got bytes.Buffer
				for range script {
					resp := post(t, srv, wc.path(stream), wc.body(stream))
					body, err := io.ReadAll(resp.Body)
					if err != nil {
						t.Fatal(err)
					}
					fmt.Fprintf(&got, "HTTP %d %s\n%s\n", resp.StatusCode, resp.Header.Get("Content-Type"), body)
					if resp.StatusCode != http.StatusOK {
						t.Fatalf("status %d: %s", resp.StatusCode, body)
					}
					checkFraming(t, wc.wire, stream, body)
				}
				if n := srv.Remaining(); n != 0 {
					t.Errorf("Remaining = %d, want 0", n)
				}
				golden.Check(t, filepath.Join("testdata", name+".golden"), got.Bytes())
			})
		}
	}
}

type sseEvent struct {
	name string
	data string
}

// parseSSE splits an event stream into events, checking each is
// terminated by sep.
func parseSSE(t *testing.T, body []byte, sep string) []sseEvent {
	t.Helper()
	if !bytes.HasSuffix(body, []byte(sep)) {
		t.Fatalf("stream does not end with %q", sep)
	}
	var out []sseEvent
	for block := range strings.SplitSeq(strings.TrimSuffix(string(body), sep), sep) {
		var ev sseEvent
		sc := bufio.NewScanner(strings.NewReader(block))
		for sc.Scan() {
			line := strings.TrimSuffix(sc.Text(), "\r")
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			default:
				t.Fatalf("unexpected line %q in event %q", line, block)
			}
		}
		out = append(out, ev)
	}
	return out
}

// checkFraming checks the SSE framing rules each SDK depends on.
func checkFraming(t *testing.T, wire llmtest.Wire, stream bool, body []byte) {
	t.Helper()
	if !stream {
		if !json.Valid(body) {
			t.Fatalf("body is not JSON: %s", body)
		}
		return
	}
	sep := "\n\n"
	if wire == llmtest.WireGemini {
		sep = "\r\n\r\n"
	}
	events := parseSSE(t, body, sep)
	for i, ev := range events {
		if wire == llmtest.WireChat && i == len(events)-1 {
			if ev.data != "[DONE]" {
				t.Errorf("last chat event = %q, want [DONE]", ev.data)
			}
			continue
		}
		var data struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(ev.data), &data); err != nil {
			t.Fatalf("event %d data is not JSON: %q", i, ev.data)
		}
		switch wire {
		case llmtest.WireAnthropic, llmtest.WireResponses:
			if ev.name == "" || ev.name != data.Type {
				t.Errorf("event %d: event line %q does not match data type %q", i, ev.name, data.Type)
			}
		default:
			if ev.name != "" {
				t.Errorf("event %d: unexpected event line %q", i, ev.name)
			}
		}
	}
	last := events[len(events)-1]
	switch wire {
	case llmtest.WireAnthropic:
		if last.name != "message_stop" {
			t.Errorf("last anthropic event = %q, want message_stop", last.name)
		}
	case llmtest.WireResponses:
		if last.name != "response.completed" {
			t.Errorf("last responses event = %q, want response.completed", last.name)
		}
	}
}

// TestStreamMatchesPlain checks that the streamed pieces of each format
// add up to the plain reply.
func TestStreamMatchesPlain(t *testing.T) {
	srv := llmtest.NewChat(t, script[1], script[1])
	plain := post(t, srv, "/v1/chat/completions", wires[0].body(false))
	var p struct {
		Choices []struct {
			Message struct {
				Content   string `json:"content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(plain.Body).Decode(&p); err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(post(t, srv, "/v1/chat/completions", wires[0].body(true)).Body)
	var text strings.Builder
	args := map[int]string{}
	ids := map[int]string{}
	for _, ev := range parseSSE(t, body, "\n\n") {
		if ev.data == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						Index    int    `json:"index"`
						ID       string `json:"id"`
						Function struct{ Arguments string }
					} `json:"tool_calls"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(ev.data), &c); err != nil {
			t.Fatal(err)
		}
		for _, ch := range c.Choices {
			text.WriteString(ch.Delta.Content)
			for _, tc := range ch.Delta.ToolCalls {
				args[tc.Index] += tc.Function.Arguments
				if tc.ID != "" {
					ids[tc.Index] = tc.ID
				}
			}
		}
	}
	m := p.Choices[0].Message
	if text.String() != m.Content {
		t.Errorf("streamed text %q, plain %q", text.String(), m.Content)
	}
	for i, tc := range m.ToolCalls {
		if args[i] != tc.Function.Arguments {
			t.Errorf("call %d: streamed arguments %q, plain %q", i, args[i], tc.Function.Arguments)
		}
	}
	if ids[1] != "call_given" {
		t.Errorf("call 1 id = %q, want the scripted call_given", ids[1])
	}
}

func TestFailures(t *testing.T) {
	// Where each format keeps its error message, and a word of the
	// context-window message the core's classifier keys on.
	type errShape struct {
		message func(map[string]any) any
		ctxWord string
	}
	errField := func(m map[string]any, k string) any {
		e, _ := m["error"].(map[string]any)
		return e[k]
	}
	shapes := map[llmtest.Wire]errShape{
		llmtest.WireChat:      {func(m map[string]any) any { return errField(m, "message") }, "maximum context length"},
		llmtest.WireResponses: {func(m map[string]any) any { return errField(m, "message") }, "exceeds the context window"},
		llmtest.WireAnthropic: {func(m map[string]any) any { return errField(m, "message") }, "prompt is too long"},
		llmtest.WireGemini:    {func(m map[string]any) any { return errField(m, "message") }, "exceeds the maximum number of tokens"},
	}
	for _, wc := range wires {
		t.Run(string(wc.wire), func(t *testing.T) {
			srv := wc.start(t,
				llmtest.RateLimited(3*time.Second),
				llmtest.ContextWindowExceeded(),
				llmtest.Fail(http.StatusServiceUnavailable, "down for maintenance"),
				llmtest.Reply{Fail: &llmtest.Failure{Status: 500, Body: `{"custom":true}`}},
				llmtest.Reply{Text: "ok"},
			)
			decode := func(resp *http.Response) map[string]any {
				t.Helper()
				var m map[string]any
				if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
					t.Fatal(err)
				}
				return m
			}
			shape := shapes[wc.wire]

			resp := post(t, srv, wc.path(false), wc.body(false))
			if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3" {
				t.Errorf("rate limit: status %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
			}
			if msg, _ := shape.message(decode(resp)).(string); msg == "" {
				t.Errorf("rate limit: no error message in body")
			}

			resp = post(t, srv, wc.path(false), wc.body(false))
			msg, _ := shape.message(decode(resp)).(string)
			if resp.StatusCode != 400 || !strings.Contains(msg, shape.ctxWord) {
				t.Errorf("context window: status %d, message %q, want 400 and %q", resp.StatusCode, msg, shape.ctxWord)
			}

			resp = post(t, srv, wc.path(true), wc.body(true))
			if msg, _ := shape.message(decode(resp)).(string); resp.StatusCode != 503 || msg != "down for maintenance" {
				t.Errorf("503 on a streamed call: status %d, message %q", resp.StatusCode, msg)
			}

			resp = post(t, srv, wc.path(false), wc.body(false))
			if m := decode(resp); resp.StatusCode != 500 || m["custom"] != true {
				t.Errorf("raw body: status %d, body %v", resp.StatusCode, m)
			}

			if resp := post(t, srv, wc.path(false), wc.body(false)); resp.StatusCode != 200 {
				t.Errorf("after the failures: status %d", resp.StatusCode)
			}
		})
	}
}

func TestAnthropicErrorShape(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Fail(529, ""))
	resp := post(t, srv, "/v1/messages", wires[2].body(false))
	var m struct {
		Type  string `json:"type"`
		Error struct{ Type, Message string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 529 || m.Type != "error" || m.Error.Type != "overloaded_error" || m.Error.Message == "" {
		t.Errorf("got %d %+v", resp.StatusCode, m)
	}
}

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) failures() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

func TestExhaustedScriptFailsTheTest(t *testing.T) {
	rec := &recorder{TB: t}
	srv := llmtest.NewChat(rec, llmtest.Reply{Text: "only one"})
	if resp := post(t, srv, "/v1/chat/completions", wires[0].body(false)); resp.StatusCode != 200 {
		t.Fatalf("first call: status %d", resp.StatusCode)
	}
	if f := rec.failures(); len(f) != 0 {
		t.Fatalf("failures after a scripted call: %v", f)
	}
	resp := post(t, srv, "/v1/chat/completions", wires[0].body(false))
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(body), "script exhausted") {
		t.Errorf("second call: status %d, body %s", resp.StatusCode, body)
	}
	f := rec.failures()
	if len(f) != 1 || !strings.Contains(f[0], "script exhausted: request #2") {
		t.Errorf("failures = %q, want one naming request #2", f)
	}
}

func TestWrongEndpointFailsTheTest(t *testing.T) {
	rec := &recorder{TB: t}
	srv := llmtest.NewChat(rec, llmtest.Reply{Text: "unused"})
	resp := post(t, srv, "/v1/messages", wires[2].body(false))
	if resp.StatusCode != 404 {
		t.Errorf("status %d, want 404", resp.StatusCode)
	}
	if f := rec.failures(); len(f) != 1 || !strings.Contains(f[0], "no such endpoint") {
		t.Errorf("failures = %q", f)
	}
	if srv.Remaining() != 1 {
		t.Errorf("a request to a wrong endpoint used a reply")
	}
}

func TestBadBodyFailsTheTest(t *testing.T) {
	rec := &recorder{TB: t}
	srv := llmtest.NewAnthropic(rec, llmtest.Reply{Text: "unused"})
	resp, err := srv.Client().Post(srv.URL+"/v1/messages", "application/json", strings.NewReader("not json"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("status %d, want 400", resp.StatusCode)
	}
	if f := rec.failures(); len(f) != 1 || !strings.Contains(f[0], "not a JSON object") {
		t.Errorf("failures = %q", f)
	}
}

func TestRequestsAreRecorded(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply{Text: "a"}, llmtest.Reply{Text: "b"})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/messages", strings.NewReader(`{"model":"claude-x","stream":false,"max_tokens":5}`))
	req.Header.Set("x-api-key", "k1")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	post(t, srv, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", wires[3].body(true))

	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests recorded, want 2", len(reqs))
	}
	a, g := reqs[0], reqs[1]
	if a.Wire != llmtest.WireAnthropic || a.Header.Get("X-Api-Key") != "k1" || a.Body["model"] != "claude-x" || a.Stream {
		t.Errorf("anthropic request recorded as %+v", a)
	}
	var typed struct {
		MaxTokens int `json:"max_tokens"`
	}
	if err := a.Decode(&typed); err != nil || typed.MaxTokens != 5 {
		t.Errorf("Decode: %v, max_tokens %d", err, typed.MaxTokens)
	}
	if g.Wire != llmtest.WireGemini || !g.Stream || g.Query.Get("alt") != "sse" || g.Path != "/v1beta/models/gemini-2.5-flash:streamGenerateContent" {
		t.Errorf("gemini request recorded as %+v", g)
	}
	if last := srv.LastRequest(); last.Path != g.Path {
		t.Errorf("LastRequest().Path = %q", last.Path)
	}
}

func TestDelayEndsWithTheClient(t *testing.T) {
	srv := llmtest.NewChat(t, llmtest.Reply{Text: "late", Delay: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(`{"model":"m"}`))
	_, err := srv.Client().Do(req)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a deadline error", err)
	}
	// Close must not wait an hour for the handler.
	srv.Close()
}

func TestDisconnect(t *testing.T) {
	srv := llmtest.NewGemini(t, llmtest.Reply{Disconnect: true}, llmtest.Reply{Text: "back"})
	b, _ := json.Marshal(wires[3].body(false))
	_, err := srv.Client().Post(srv.URL+"/v1beta/models/g:generateContent", "application/json", bytes.NewReader(b))
	if err == nil {
		t.Fatal("no error from a dropped connection")
	}
	if resp := post(t, srv, "/v1beta/models/g:generateContent", wires[3].body(false)); resp.StatusCode != 200 {
		t.Errorf("after the disconnect: status %d", resp.StatusCode)
	}
}

func TestAddExtendsTheScript(t *testing.T) {
	srv := llmtest.NewResponses(t)
	srv.Add(llmtest.Reply{Text: "added"})
	if srv.Remaining() != 1 {
		t.Fatalf("Remaining = %d", srv.Remaining())
	}
	var r struct {
		Output []struct {
			Content []struct{ Text string }
		}
	}
	if err := json.NewDecoder(post(t, srv, "/responses", wires[1].body(false)).Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	if len(r.Output) != 1 || r.Output[0].Content[0].Text != "added" {
		t.Errorf("output = %+v", r.Output)
	}
}

func TestArgumentsMustBeObjectsForAnthropicAndGemini(t *testing.T) {
	for _, wc := range wires[2:] {
		rec := &recorder{TB: t}
		srv := wc.start(rec, llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "x", Arguments: "[1"}}})
		if resp := post(t, srv, wc.path(false), wc.body(false)); resp.StatusCode != 500 {
			t.Errorf("%s: status %d, want 500", wc.wire, resp.StatusCode)
		}
		if f := rec.failures(); len(f) != 1 || !strings.Contains(f[0], "JSON object") {
			t.Errorf("%s: failures = %q", wc.wire, f)
		}
	}
}

func TestMidStreamFailure(t *testing.T) {
	fail := llmtest.Reply{Text: "partial answer", Fail: &llmtest.Failure{Status: 529, Message: "Overloaded", MidStream: true}}
	for _, wc := range wires {
		t.Run(string(wc.wire), func(t *testing.T) {
			srv := wc.start(t, fail, fail)
			resp := post(t, srv, wc.path(true), wc.body(true))
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d, want 200 then an error in the stream", resp.StatusCode)
			}
			sep := "\n\n"
			if wc.wire == llmtest.WireGemini {
				sep = "\r\n\r\n"
			}
			events := parseSSE(t, body, sep)
			last := events[len(events)-1]
			if !strings.Contains(string(body), "partial") || !strings.Contains(last.data, "Overloaded") {
				t.Errorf("stream does not carry the content and then the error:\n%s", body)
			}
			if (wc.wire == llmtest.WireAnthropic || wc.wire == llmtest.WireResponses) && last.name != "error" {
				t.Errorf("last event %q, want error", last.name)
			}
			if strings.Contains(string(body), "[DONE]") || strings.Contains(string(body), "message_stop") || strings.Contains(string(body), "response.completed") {
				t.Errorf("stream completed normally after the error:\n%s", body)
			}
			if resp := post(t, srv, wc.path(false), wc.body(false)); resp.StatusCode != 529 {
				t.Errorf("plain call: status %d, want 529", resp.StatusCode)
			}
		})
	}
}

func TestClientLeavingMidStreamIsNotAFailure(t *testing.T) {
	rec := &recorder{TB: t}
	srv := llmtest.NewChat(rec, llmtest.Reply{Text: strings.Repeat("word ", 200000)})
	resp := post(t, srv, "/v1/chat/completions", wires[0].body(true))
	buf := make([]byte, 512)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	srv.Close() // waits for the handler
	if f := rec.failures(); len(f) != 0 {
		t.Errorf("failures = %q", f)
	}
}

func TestChunkDelayPacesTheStream(t *testing.T) {
	rec := &recorder{TB: t}
	srv := llmtest.NewAnthropic(rec, llmtest.Reply{Text: "one two three four five six", ChunkDelay: time.Hour})
	resp := post(t, srv, "/v1/messages", wires[2].body(true))
	// The first event arrives at once; the next is an hour away, so the
	// client gives up, and the server must let go.
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != "event: message_start\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	resp.Body.Close()
	srv.Close()
	if f := rec.failures(); len(f) != 0 {
		t.Errorf("failures = %q", f)
	}
}
