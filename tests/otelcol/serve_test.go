package otelcol

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/telemetry"
)

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// gohandsBinary builds cmd/gohands once for the tests that run it.
func gohandsBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gohands-otelcol-")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "gohands")
		// Built in gohands' own module: the binary users get, with its
		// dependencies, not this module's.
		build := exec.Command("go", "build", "-o", binary, "./cmd/gohands")
		build.Dir = "../.."
		if out, err := build.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("building gohands: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

// TestServeContinuesTrace runs gohands serve with OTLP export to the
// Collector's receiver, starts a conversation whose request carries a
// parent span context (observability_parent_span_context, as the
// reference's clients send it) and a traceparent header, and checks the
// receiver holds the caller's trace: the request span under the header's
// span, the conversation span under the body's, and below it the run,
// its steps, model calls and tool calls.
func TestServeContinuesTrace(t *testing.T) {
	for _, proto := range []string{"grpc", "http/protobuf"} {
		t.Run(strings.ReplaceAll(proto, "/", "_"), func(t *testing.T) {
			testServeTrace(t, proto)
		})
	}
}

func testServeTrace(t *testing.T, proto string) {
	bin := gohandsBinary(t)
	sink, grpcAddr, httpAddr := receiver(t)
	endpoint := "http://" + httpAddr
	if proto == "grpc" {
		endpoint = "http://" + grpcAddr
	}
	dir := t.TempDir()
	const key = "otelcol-session-key"
	// Without titles: a title call would take a scripted reply.
	cmd := exec.Command(bin, "serve", "--port", "0", "--autotitle=false")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"HOME="+dir,
		"OH_SESSION_API_KEYS_0="+key,
		"OTEL_EXPORTER_OTLP_ENDPOINT="+endpoint,
		"OTEL_EXPORTER_OTLP_PROTOCOL="+proto,
		"OTEL_SERVICE_NAME=gohands-serve-test",
	)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	var logMu sync.Mutex
	ready := make(chan string, 1)
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if u, ok := strings.CutPrefix(line, "gohands: serving the agent API on "); ok {
				ready <- strings.Fields(u)[0]
			}
			logMu.Lock()
			log.WriteString(line + "\n")
			logMu.Unlock()
		}
	}()
	exited := false
	t.Cleanup(func() {
		if !exited {
			cmd.Process.Kill()
			cmd.Wait()
		}
		if t.Failed() {
			logMu.Lock()
			t.Logf("serve log:\n%s", log.String())
			logMu.Unlock()
		}
	})
	var base string
	select {
	case base = <-ready:
	case <-time.After(60 * time.Second):
		t.Fatal("gohands serve did not start")
	}

	model := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("c1", "terminal", map[string]any{"command": "echo " + argMarker})}, Usage: llmtest.Usage{PromptTokens: 10, CompletionTokens: 2}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("c2", "finish", map[string]any{"message": "done"})}},
	)
	agentJSON, err := os.ReadFile("../../server/testdata/python_agent.json")
	if err != nil {
		t.Fatal(err)
	}
	var agent map[string]any
	if err := json.Unmarshal(agentJSON, &agent); err != nil {
		t.Fatal(err)
	}
	agent["llm"].(map[string]any)["base_url"] = model.URL + "/v1"
	agent["llm"].(map[string]any)["num_retries"] = 0

	const (
		traceID     = "4bf92f3577b34da6a3ce929d0e0e4736"
		parentSpan  = "00f067aa0ba902b7" // the caller's span the conversation continues
		requestSpan = "b7ad6b7169203331" // the caller's span of the HTTP call
	)
	body, _ := json.Marshal(map[string]any{
		"agent":     agent,
		"workspace": map[string]any{"working_dir": filepath.Join(dir, "project"), "kind": "LocalWorkspace"},
		"initial_message": map[string]any{"role": "user", "run": true,
			"content": []any{map[string]any{"type": "text", "text": "Do the job."}}},
		"observability_parent_span_context": "00-" + traceID + "-" + parentSpan + "-01",
		"observability_span_name":           "otelcol.job",
		"observability_tags":                []string{"nightly", "otelcol"},
		"observability_metadata":            map[string]any{"team": "infra", "attempt": 2},
	})
	do := func(method, path string, body []byte, header map[string]string) (int, []byte) {
		req, _ := http.NewRequest(method, base+path, bytes.NewReader(body))
		req.Header.Set("X-Session-API-Key", key)
		req.Header.Set("Content-Type", "application/json")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.Bytes()
	}
	code, out := do("POST", "/api/conversations", body, map[string]string{"traceparent": "00-" + traceID + "-" + requestSpan + "-01"})
	if code != 201 {
		t.Fatalf("start: %d %s", code, out)
	}
	var info struct {
		ID string `json:"id"`
	}
	json.Unmarshal(out, &info)
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, out := do("GET", "/api/conversations/"+info.ID, nil, nil)
		var st struct {
			Status string `json:"execution_status"`
		}
		json.Unmarshal(out, &st)
		if code == 200 && st.Status == "finished" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("conversation: %d %s", code, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// SIGTERM drains the server; the process exports what it holds
	// before it exits.
	cmd.Process.Signal(syscall.SIGTERM)
	<-logDone
	if err := cmd.Wait(); err != nil {
		t.Fatalf("gohands serve: %v", err)
	}
	exited = true

	got, raw := spans(t, sink)
	byID := map[string]span{}
	for _, s := range got {
		byID[s.id] = s
	}
	path := func(s span) string {
		var names []string
		for ok := true; ok; s, ok = byID[s.parent] {
			n := s.name
			if i := strings.IndexByte(n, ' '); i > 0 && !strings.HasPrefix(n, "POST ") && !strings.HasPrefix(n, "GET ") {
				n = n[:i]
			}
			names = append([]string{n}, names...)
		}
		return strings.Join(names, "/")
	}
	count := map[string]int{}
	var conv, start span
	for _, s := range got {
		if s.trace != traceID {
			continue
		}
		count[path(s)]++
		switch s.name {
		case "otelcol.job":
			conv = s
		case "POST /api/conversations":
			start = s
		}
	}
	want := map[string]int{
		"POST /api/conversations":                              1,
		"otelcol.job":                                          1,
		"otelcol.job/conversation.run":                         1,
		"otelcol.job/conversation.run/agent.step":              2,
		"otelcol.job/conversation.run/agent.step/chat":         2,
		"otelcol.job/conversation.run/agent.step/execute_tool": 2, // terminal, finish
	}
	for k, n := range want {
		if count[k] != n {
			t.Errorf("%d spans at %s in the caller's trace, want %d (all: %v)", count[k], k, n, count)
		}
	}
	if conv.parent != parentSpan {
		t.Errorf("conversation span's parent %q, want the caller's %s", conv.parent, parentSpan)
	}
	if conv.attrs[telemetry.AttrTags] != "nightly,otelcol" || conv.attrs["team"] != "infra" || conv.attrs["attempt"] != int64(2) ||
		conv.attrs[telemetry.AttrConversationID] == nil || conv.attrs[telemetry.AttrStatus] != "finished" {
		t.Errorf("conversation span attributes %v", conv.attrs)
	}
	if start.parent != requestSpan || start.attrs[telemetry.AttrHTTPRoute] != "/api/conversations" || start.attrs[telemetry.AttrHTTPStatus] != int64(201) {
		t.Errorf("start request span: parent %q attributes %v", start.parent, start.attrs)
	}
	// The later requests are spans of their own, named by route template.
	var polled bool
	for _, s := range got {
		if s.name == "GET /api/conversations/{conversation_id}" && s.attrs[telemetry.AttrHTTPRoute] == "/api/conversations/{conversation_id}" {
			polled = true
		}
		if strings.Contains(s.name, info.ID) {
			t.Errorf("span name %q holds the conversation id", s.name)
		}
	}
	if !polled {
		t.Error("no span for the status requests")
	}
	for _, leak := range []string{argMarker, key, "Do the job"} {
		if strings.Contains(raw, leak) {
			t.Errorf("the receiver's copy contains %q", leak)
		}
	}
}
