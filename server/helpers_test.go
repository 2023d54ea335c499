package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server"
	_ "github.com/gohands/gohands/tools/preset"
)

// testServer is a server over a temporary directory, served over HTTP.
type testServer struct {
	t    testing.TB
	srv  *server.Server
	http *httptest.Server
	opts *server.Options
	key  string
}

func newTestServer(t testing.TB, opts *server.Options) *testServer {
	t.Helper()
	if opts == nil {
		opts = &server.Options{}
	}
	dir := t.TempDir()
	if opts.ConversationsPath == "" {
		opts.ConversationsPath = dir + "/conversations"
	}
	if opts.WorkspacePath == "" {
		opts.WorkspacePath = dir + "/project"
	}
	if opts.BashEventsDir == "" {
		opts.BashEventsDir = dir + "/bash_events"
	}
	srv, err := server.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{t: t, srv: srv, http: httptest.NewServer(srv), opts: opts}
	if len(opts.SessionAPIKeys) > 0 {
		ts.key = opts.SessionAPIKeys[0]
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ts.http.CloseClientConnections()
		if err := srv.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		ts.http.Close()
	})
	return ts
}

// on returns ts reporting to t (a subtest).
func (ts *testServer) on(t testing.TB) *testServer {
	c := *ts
	c.t = t
	return &c
}

// do sends a request and returns the status and body.
func (ts *testServer) do(method, path string, body any) (int, []byte) {
	ts.t.Helper()
	status, _, data := ts.send(method, path, body)
	return status, data
}

// send sends a request and returns the status, headers and body.
func (ts *testServer) send(method, path string, body any) (int, http.Header, []byte) {
	ts.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			ts.t.Fatal(err)
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, ts.http.URL+path, r)
	if err != nil {
		ts.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if ts.key != "" {
		req.Header.Set("X-Session-API-Key", ts.key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		ts.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, data
}

// must is do that fails the test unless the status is want, and decodes
// the body into out (if not nil).
func (ts *testServer) must(want int, method, path string, body, out any) []byte {
	ts.t.Helper()
	got, data := ts.do(method, path, body)
	if got != want {
		ts.t.Fatalf("%s %s: status %d, want %d: %s", method, path, got, want, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			ts.t.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
	}
	return data
}

// pythonAgent returns the agent JSON the reference's Python client sends
// (testdata/python_agent.json), using the scripted model at baseURL.
func pythonAgent(t testing.TB, baseURL string) map[string]any {
	t.Helper()
	data, err := os.ReadFile("testdata/python_agent.json")
	if err != nil {
		t.Fatal(err)
	}
	var a map[string]any
	if err := json.Unmarshal(data, &a); err != nil {
		t.Fatal(err)
	}
	a["llm"].(map[string]any)["base_url"] = baseURL
	a["llm"].(map[string]any)["num_retries"] = 0
	return a
}

// startBody is a StartConversationRequest for a scripted model.
func (ts *testServer) startBody(model *llmtest.Server, extra map[string]any) map[string]any {
	b := map[string]any{
		"agent":     pythonAgent(ts.t, model.URL+"/v1"),
		"workspace": map[string]any{"working_dir": ts.t.TempDir(), "kind": "LocalWorkspace"},
	}
	maps.Copy(b, extra)
	return b
}

// waitStatus polls the conversation until its execution status is one of
// want.
func (ts *testServer) waitStatus(id string, want ...string) map[string]any {
	ts.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var info map[string]any
		ts.must(200, "GET", "/api/conversations/"+id, nil, &info)
		for _, w := range want {
			if info["execution_status"] == w {
				return info
			}
		}
		if time.Now().After(deadline) {
			ts.t.Fatalf("conversation %s: status %v, want one of %v", id, info["execution_status"], want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// newHookServer serves h on loopback and returns its URL.
func newHookServer(t testing.TB, h http.HandlerFunc) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
