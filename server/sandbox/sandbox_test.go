package sandbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server/sandbox"
	"github.com/gohands/gohands/workspace/docker/dockertest"
)

type front struct {
	t    *testing.T
	srv  *sandbox.Server
	http *httptest.Server
	dir  string
	key  string
}

// newFront starts a per-conversation server whose containers share the
// host's network, so they reach the scripted model on 127.0.0.1.
func newFront(t *testing.T, idle time.Duration) *front {
	t.Helper()
	o := dockertest.Options(t)
	o.Network = "host"
	dir := t.TempDir()
	f := &front{t: t, dir: dir, key: "front-key"}
	srv, err := sandbox.New(&sandbox.Options{Dir: dir, Container: o, SessionAPIKeys: []string{f.key}, IdleStop: idle})
	if err != nil {
		t.Fatal(err)
	}
	f.srv, f.http = srv, httptest.NewServer(srv)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		f.http.CloseClientConnections()
		if err := srv.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		f.http.Close()
	})
	return f
}

func (f *front) do(method, path string, body any) (int, []byte) {
	f.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, f.http.URL+path, r)
	req.Header.Set("X-Session-API-Key", f.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 3 * time.Minute}).Do(req)
	if err != nil {
		f.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func (f *front) must(want int, method, path string, body, out any) {
	f.t.Helper()
	got, b := f.do(method, path, body)
	if got != want {
		f.t.Fatalf("%s %s: %d, want %d: %s", method, path, got, want, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			f.t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
}

func (f *front) waitStatus(id string, want string) {
	f.t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		var info map[string]any
		f.must(200, "GET", "/api/conversations/"+id, nil, &info)
		if info["execution_status"] == want {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("conversation %s: status %v, want %s", id, info["execution_status"], want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// observations returns the text of the conversation's observations.
func (f *front) observations(id string) string {
	f.t.Helper()
	var page struct {
		Items []map[string]any `json:"items"`
	}
	f.must(200, "GET", "/api/conversations/"+id+"/events/search?limit=100", nil, &page)
	var sb strings.Builder
	for _, e := range page.Items {
		if e["kind"] == "ObservationEvent" {
			b, _ := json.Marshal(e["observation"])
			sb.Write(b)
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

func agent(t *testing.T, model *llmtest.Server) map[string]any {
	t.Helper()
	data, err := os.ReadFile("../testdata/python_agent.json")
	if err != nil {
		t.Fatal(err)
	}
	var a map[string]any
	if err := json.Unmarshal(data, &a); err != nil {
		t.Fatal(err)
	}
	a["llm"].(map[string]any)["base_url"] = model.URL + "/v1"
	a["llm"].(map[string]any)["num_retries"] = 0
	return a
}

func start(f *front, model *llmtest.Server, task string) string {
	f.t.Helper()
	var info map[string]any
	f.must(201, "POST", "/api/conversations", map[string]any{
		"agent":           agent(f.t, model),
		"workspace":       map[string]any{"working_dir": "/workspace", "kind": "LocalWorkspace"},
		"initial_message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": task}}, "run": true},
	}, &info)
	return info["id"].(string)
}

func call(cmd string) llmtest.Reply {
	args, _ := json.Marshal(map[string]string{"command": cmd})
	return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: string(args)}}}
}

var finish = llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}}

func TestConversationsIsolated(t *testing.T) {
	t.Parallel()
	book, err := llmtest.NewPlaybook(
		llmtest.Rule{Name: "A", FirstUser: "^task A$", Replies: []llmtest.Reply{
			call("echo from-A > /workspace/a.txt; (sleep 1000 >/dev/null 2>&1 &); sleep 0.5; echo sleepers=$(cat /proc/[0-9]*/comm 2>/dev/null | grep -c '^sleep$')"), finish}},
		llmtest.Rule{Name: "B", FirstUser: "^task B$", Replies: []llmtest.Reply{
			call("ls -a /workspace; echo sleepers=$(cat /proc/[0-9]*/comm 2>/dev/null | grep -c '^sleep$')"), finish}},
	)
	if err != nil {
		t.Fatal(err)
	}
	model := llmtest.NewResponder(t, book.Respond, nil)
	f := newFront(t, -1)

	a := start(f, model, "task A")
	f.waitStatus(a, "finished")
	b := start(f, model, "task B")
	f.waitStatus(b, "finished")

	if got, err := os.ReadFile(filepath.Join(f.dir, a, "workspace", "a.txt")); err != nil || string(got) != "from-A\n" {
		t.Errorf("A's file on the host: %q, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(f.dir, b, "workspace", "a.txt")); err == nil {
		t.Error("A's file is in B's workspace")
	}
	// The check sees processes: A sees its own sleep.
	if obs := f.observations(a); !strings.Contains(obs, "sleepers=1") {
		t.Errorf("A does not see its own sleep (want sleepers=1): %s", obs)
	}
	obs := f.observations(b)
	if strings.Contains(obs, "a.txt") {
		t.Errorf("B sees A's file: %s", obs)
	}
	if !strings.Contains(obs, "sleepers=0") {
		t.Errorf("B sees A's processes (want sleepers=0): %s", obs)
	}

	var n int
	f.must(200, "GET", "/api/conversations/count", nil, &n)
	if n != 2 {
		t.Errorf("count %d, want 2", n)
	}
	var page struct {
		Items []map[string]any `json:"items"`
	}
	f.must(200, "GET", "/api/conversations/search", nil, &page)
	if len(page.Items) != 2 {
		t.Errorf("search: %d items, want 2", len(page.Items))
	}

	// Killing A's container fails A, clearly, and leaves B running.
	api := dockertest.Engine(t)
	ctx := context.Background()
	cs, err := api.ContainerList(ctx, false, "org.gohands.conversation="+a)
	if err != nil || len(cs) != 1 {
		t.Fatalf("A's container: %v %v", cs, err)
	}
	if err := api.ContainerKill(ctx, cs[0].ID, ""); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		code, body := f.do("GET", "/api/conversations/"+a, nil)
		if code == http.StatusBadGateway {
			if !strings.Contains(string(body), "ended unexpectedly") {
				t.Errorf("A after its container was killed: %s", body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("A still answers %d after its container was killed: %s", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	f.must(200, "GET", "/api/conversations/"+b, nil, nil)
	f.must(200, "GET", "/api/conversations/count", nil, &n)
	if n != 2 {
		t.Errorf("count after the kill: %d, want 2", n)
	}
}

func TestIdleStopAndRestart(t *testing.T) {
	t.Parallel()
	model := llmtest.NewResponder(t, func(llmtest.Request) (llmtest.Reply, error) { return finish, nil }, nil)
	f := newFront(t, 300*time.Millisecond)
	id := start(f, model, "anything")
	f.waitStatus(id, "finished")
	api := dockertest.Engine(t)
	ctx := context.Background()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		cs, err := api.ContainerList(ctx, true, "org.gohands.conversation="+id)
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the idle container was not stopped")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Listed while stopped, then started again on demand with its history.
	var n int
	f.must(200, "GET", "/api/conversations/count", nil, &n)
	if n != 1 {
		t.Errorf("count while stopped: %d", n)
	}
	var info map[string]any
	f.must(200, "GET", "/api/conversations/"+id, nil, &info)
	if info["execution_status"] != "finished" {
		t.Errorf("after the restart: %v", info["execution_status"])
	}
	var resp map[string]string
	f.must(200, "GET", "/api/conversations/"+id+"/agent_final_response", nil, &resp)
	if resp["response"] != "done" {
		t.Errorf("final response after the restart: %q", resp["response"])
	}
}

func TestAuthAndUnknown(t *testing.T) {
	t.Parallel()
	f := newFront(t, -1)
	req, _ := http.NewRequest("POST", f.http.URL+"/api/conversations", strings.NewReader("{}"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("create without a key: %d", resp.StatusCode)
	}
	if code, _ := f.do("GET", "/api/conversations/00000000-0000-4000-8000-000000000000", nil); code != 404 {
		t.Errorf("unknown conversation: %d", code)
	}
	if code, _ := f.do("POST", "/api/bash/execute_bash_command", map[string]any{"command": "id"}); code != 400 {
		t.Errorf("bash without a conversation: %d", code)
	}
	if code, b := f.do("POST", "/api/conversations", map[string]any{"agent": "nonsense"}); code != 422 {
		t.Errorf("bad agent: %d %s", code, b)
	}
	if ents, _ := os.ReadDir(f.dir); len(ents) != 0 {
		t.Errorf("a refused conversation left %d entries in the sandbox dir", len(ents))
	}
}
