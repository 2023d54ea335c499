package server_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server"
	"github.com/gohands/gohands/telemetry"
	"github.com/gohands/gohands/telemetry/prom"

	"golang.org/x/sys/unix"
)

// scrape reads /metrics with Prometheus's own text parser.
func (ts *testServer) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequest("GET", ts.http.URL+"/metrics", nil)
	req.Header.Set("X-Session-API-Key", ts.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics: %d %s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); expfmt.ResponseFormat(resp.Header).FormatType() != expfmt.TypeTextPlain {
		t.Fatalf("/metrics Content-Type %q is not the text format", ct)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, body)
	}
	return fams
}

// value returns the value of the series of name whose labels include
// want (label=value pairs); a histogram's is its count. Absent is 0.
func value(fams map[string]*dto.MetricFamily, name string, want ...string) float64 {
	f := fams[name]
	if f == nil {
		return 0
	}
	total := 0.0
next:
	for _, m := range f.GetMetric() {
		for _, w := range want {
			k, v, _ := strings.Cut(w, "=")
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			total += m.GetCounter().GetValue()
		case m.Gauge != nil:
			total += m.GetGauge().GetValue()
		case m.Histogram != nil:
			total += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return total
}

// TestMetrics scrapes /metrics before and after a scripted run: it parses
// with Prometheus's parser, needs the session key, and its counters move
// by what the run did. Not parallel: the registry is the process's
// tracer, and parallel tests' runs would count in it too.
func TestMetrics(t *testing.T) {
	reg := prom.New()
	prev := telemetry.SetTracer(reg)
	t.Cleanup(func() { telemetry.SetTracer(prev) })
	ts := newTestServer(t, &server.Options{SessionAPIKeys: []string{"metrics-key"}, Metrics: reg})

	resp, err := http.Get(ts.http.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("/metrics without the key: %d, want 401", resp.StatusCode)
	}

	before := ts.scrape(t)
	model := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"echo hi"}`}}, Usage: llmtest.Usage{PromptTokens: 100, CompletionTokens: 7}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"exit 2"}`}}, Usage: llmtest.Usage{PromptTokens: 120, CompletionTokens: 5}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}, Usage: llmtest.Usage{PromptTokens: 130, CompletionTokens: 3}},
	)
	body := ts.startBody(model, map[string]any{
		"initial_message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "go"}}, "run": true},
	})
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", body, &info)
	id := info["id"].(string)
	ts.waitStatus(id, "finished")
	// The run's span ends after the status is set: wait for it.
	deadline := time.Now().Add(60 * time.Second)
	for value(ts.scrape(t), "gohands_runs_in_progress") != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the run never ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var stored int
	ts.must(200, "GET", "/api/conversations/"+id+"/events/count", nil, &stored)
	ts.must(404, "GET", "/api/conversations/"+id+"/events/no-such-event", nil, nil)
	ts.do("GET", "/no/such/route", nil)
	after := ts.scrape(t)

	delta := func(name string, labels ...string) float64 {
		return value(after, name, labels...) - value(before, name, labels...)
	}
	const m = "model=openai/gpt-4o"
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"gohands_runs_total", []string{"status=finished"}, 1},
		{"gohands_runs_in_progress", nil, 0},
		{"gohands_steps_total", nil, 3},
		{"gohands_step_duration_seconds", nil, 3},
		{"gohands_model_calls_total", []string{m, "outcome=ok"}, 3},
		{"gohands_model_tokens_total", []string{m, "type=input"}, 350},
		{"gohands_model_tokens_total", []string{m, "type=output"}, 15},
		{"gohands_model_call_duration_seconds", []string{m}, 3},
		{"gohands_tool_calls_total", []string{"tool=terminal"}, 2},
		{"gohands_tool_calls_total", []string{"tool=finish"}, 1},
		{"gohands_tool_errors_total", []string{"tool=terminal"}, 1},
		{"gohands_tool_call_duration_seconds", []string{"tool=terminal"}, 2},
		{"gohands_http_requests_total", []string{"method=POST", "route=/api/conversations", "status=201"}, 1},
		{"gohands_http_requests_total", []string{"method=GET", "route=/api/conversations/{conversation_id}/events/{event_id}", "status=404"}, 1},
		{"gohands_http_requests_total", []string{"method=GET", "route=unmatched", "status=404"}, 1},
		{"gohands_http_request_duration_seconds", []string{"method=POST", "route=/api/conversations"}, 1},
		{"gohands_conversations", []string{"status=finished"}, 1},
	} {
		if got := delta(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v moved by %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// Each scrape is counted once it ends: the last sees the ones before.
	if got := delta("gohands_http_requests_total", "method=GET", "route=/metrics", "status=200"); got < 1 {
		t.Errorf("/metrics requests moved by %v, want at least 1", got)
	}
	// No id reaches a label: routes are templates.
	for _, mf := range after {
		for _, mt := range mf.GetMetric() {
			for _, l := range mt.GetLabel() {
				if strings.Contains(l.GetValue(), id) || strings.Contains(l.GetValue(), strings.ReplaceAll(id, "-", "")) {
					t.Errorf("%s has the conversation id in label %s", mf.GetName(), l.GetName())
				}
			}
		}
	}
	// Every event the conversation stored was one append to its file
	// store, measured once.
	if got := delta("gohands_event_store_append_duration_seconds", "store=file"); got != float64(stored) || stored < 8 {
		t.Errorf("file store appends measured %v times; the conversation stored %d events", got, stored)
	}
	if f := after["gohands_event_store_append_duration_seconds"]; f.GetType() != dto.MetricType_HISTOGRAM {
		t.Errorf("store append latency is a %v, want a histogram", f.GetType())
	}
	if f := after["gohands_model_call_duration_seconds"]; f.GetType() != dto.MetricType_HISTOGRAM {
		t.Errorf("model call latency is a %v, want a histogram", f.GetType())
	}
}

// TestMetricsDroppedSockets drops a real slow client from each socket
// (tiny TCP buffers, a client that stops reading while the agent writes
// large events) and checks that gohands_socket_dropped_total counts each
// drop once, under the socket's label, and nothing else.
func TestMetricsDroppedSockets(t *testing.T) {
	ts := newTestServer(t, &server.Options{SubscriberBuffer: 2, Metrics: prom.New()})
	small := httptest.NewUnstartedServer(ts.srv)
	small.Listener = smallBufferListener{small.Listener}
	small.Start()
	defer small.Close()
	for _, c := range []struct{ socket, path string }{
		{"events", "/sockets/events/"},
		{"session", "/sockets/session/"},
	} {
		before := ts.scrape(t)
		var replies []llmtest.Reply
		thought := llmtest.Args(map[string]string{"thought": strings.Repeat("x", 16_000)})
		for range 12 {
			replies = append(replies, llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "think", Arguments: thought}}})
		}
		replies = append(replies, llmtest.Reply{Text: "done"})
		model := llmtest.NewChat(t, replies...)
		var info map[string]any
		ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{"stuck_detection": false}), &info)
		id := info["id"].(string)
		d := &net.Dialer{Control: func(network, address string, rc syscall.RawConn) error {
			return setSmallBuffer(rc, unix.SO_RCVBUF)
		}}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		url := "ws" + strings.TrimPrefix(small.URL, "http") + c.path + id
		conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}})
		if err != nil {
			t.Fatal(err)
		}
		conn.SetReadLimit(-1)
		// The first frame comes once the socket is subscribed.
		if _, _, err := conn.Read(ctx); err != nil {
			t.Fatalf("%s: first frame: %v", c.socket, err)
		}
		// Stop reading while the agent runs.
		ts.must(200, "POST", "/api/conversations/"+id+"/events", map[string]any{"content": []any{map[string]any{"type": "text", "text": "go"}}, "run": true}, nil)
		ts.waitStatus(id, "finished")
		var closeErr error
		for closeErr == nil {
			_, _, closeErr = conn.Read(ctx)
		}
		cancel()
		conn.CloseNow()
		if code := websocket.CloseStatus(closeErr); code != 1013 {
			t.Fatalf("%s: the slow client ended with %v, want close 1013", c.socket, closeErr)
		}
		after := ts.scrape(t)
		for _, s := range []string{"events", "session"} {
			want := 0.0
			if s == c.socket {
				want = 1
			}
			if got := value(after, "gohands_socket_dropped_total", "socket="+s) - value(before, "gohands_socket_dropped_total", "socket="+s); got != want {
				t.Errorf("after dropping a %s client: gohands_socket_dropped_total{socket=%q} moved by %v, want %v", c.socket, s, got, want)
			}
		}
		if f := after["gohands_socket_dropped_total"]; f.GetType() != dto.MetricType_COUNTER {
			t.Errorf("gohands_socket_dropped_total is a %v, want a counter", f.GetType())
		}
	}
}
