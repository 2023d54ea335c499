package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server"
)

const unknownID = "6d0c6e1e-3b0c-4b5e-9d7e-1a2b3c4d5e6f"

func TestAuth(t *testing.T) {
	ts := newTestServer(t, &server.Options{SessionAPIKeys: []string{"old", "new"}})
	for _, key := range []string{"old", "new"} {
		ts.key = key
		ts.must(200, "GET", "/api/conversations/count", nil, nil)
	}
	for _, key := range []string{"", "wrong", "ol"} {
		ts.key = key
		if got, body := ts.do("GET", "/api/conversations/search", nil); got != 401 || !strings.Contains(string(body), "Unauthorized") {
			t.Errorf("key %q: %d %s, want 401", key, got, body)
		}
	}
	ts.key = ""
	for _, p := range []string{"/alive", "/health", "/ready", "/server_info", "/openapi.json", "/docs", "/redoc", "/docs/assets/swagger-ui.css"} {
		ts.must(200, "GET", p, nil, nil)
	}
}

func TestErrorStatuses(t *testing.T) {
	model := llmtest.NewChat(t)
	ts := newTestServer(t, nil)
	cases := []struct {
		method, path string
		body         any
		want         int
	}{
		{"GET", "/api/conversations/" + unknownID, nil, 404},
		{"GET", "/api/conversations/not-a-uuid", nil, 422},
		{"DELETE", "/api/conversations/" + unknownID, nil, 400},
		{"POST", "/api/conversations/" + unknownID + "/pause", nil, 400},
		{"POST", "/api/conversations/" + unknownID + "/interrupt", nil, 400},
		{"POST", "/api/conversations/" + unknownID + "/run", nil, 404},
		{"POST", "/api/conversations/" + unknownID + "/ask_agent", map[string]any{"question": "q"}, 404},
		{"GET", "/api/conversations/" + unknownID + "/events/search", nil, 404},
		{"POST", "/api/conversations", "{not json", 422},
		{"POST", "/api/conversations", "", 422},
		{"POST", "/api/conversations", map[string]any{"workspace": map[string]any{"working_dir": "/tmp"}}, 422},
		{"POST", "/api/conversations", ts.startBody(model, map[string]any{"max_iterations": 0}), 422},
		{"POST", "/api/conversations", ts.startBody(model, map[string]any{"confirmation_policy": map[string]any{"kind": "Nope"}}), 422},
		{"POST", "/api/conversations", ts.startBody(model, map[string]any{"secrets": map[string]any{"A": "plain"}}), 422},
		{"GET", "/api/conversations/search?limit=0", nil, 422},
		{"GET", "/api/conversations/search?limit=x", nil, 422},
		{"GET", "/api/conversations/search?sort_order=SIDEWAYS", nil, 422},
		{"GET", "/api/file/download?path=relative", nil, 400},
		{"GET", "/api/file/download?path=/definitely/not/here", nil, 404},
		{"GET", "/api/file/download", nil, 422},
		{"GET", "/no/such/route", nil, 404},
		// What the document declares is checked: enums, bounds, required
		// parameters, and methods (405 on a known path).
		{"GET", "/api/conversations/count?status=bogus", nil, 422},
		{"GET", "/api/conversations/search?limit=101", nil, 422},
		{"GET", "/api/git/changes", nil, 422},
		{"GET", "/api/git/diff?path=", nil, 422},
		{"TRACE", "/alive", nil, 405},
		{"PUT", "/api/conversations", nil, 405},
		{"PATCH", "/api/conversations/count", map[string]any{"title": "x"}, 405},
		{"DELETE", "/api/conversations/search", nil, 405},
	}
	for _, c := range cases {
		got, body := ts.do(c.method, c.path, c.body)
		if got != c.want {
			t.Errorf("%s %s: %d %s, want %d", c.method, c.path, got, body, c.want)
		}
		var detail map[string]any
		if err := json.Unmarshal(body, &detail); err != nil || detail["detail"] == nil {
			t.Errorf("%s %s: body %s is not {\"detail\": ...}", c.method, c.path, body)
		}
	}
	var res map[string]bool
	ts.must(200, "PATCH", "/api/conversations/"+unknownID, map[string]any{"title": "x"}, &res)
	if res["success"] {
		t.Errorf("PATCH unknown: %v, want success false", res)
	}
	// A tool the server does not know is refused at once.
	body := ts.startBody(model, nil)
	body["agent"].(map[string]any)["tools"] = []any{map[string]any{"name": "no_such_tool", "params": map[string]any{}}}
	if got, data := ts.do("POST", "/api/conversations", body); got != 422 || !strings.Contains(string(data), "no_such_tool") {
		t.Errorf("unknown tool: %d %s", got, data)
	}
	// So is a model no provider answers (no provider/ prefix, no
	// base_url), with its first message or without: the agent makes its
	// LLM only when it starts, and nothing is stored.
	var before, after any
	ts.must(200, "GET", "/api/conversations/count", nil, &before)
	for _, run := range []any{true, false, nil} {
		body := ts.startBody(model, nil)
		llmCfg := body["agent"].(map[string]any)["llm"].(map[string]any)
		llmCfg["model"] = "inherit"
		delete(llmCfg, "base_url")
		if run != nil {
			body["initial_message"] = userText("hi", run.(bool))
		}
		if got, data := ts.do("POST", "/api/conversations", body); got != 422 || !strings.Contains(string(data), "inherit") {
			t.Errorf("model without a provider (run %v): %d %s, want 422 naming it", run, got, data)
		}
	}
	ts.must(200, "GET", "/api/conversations/count", nil, &after)
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("refused starts stored conversations: count %v, then %v", before, after)
	}
}

func TestConversationRoutes(t *testing.T) {
	model := llmtest.NewChat(t, llmtest.Reply{Text: "first answer"}, llmtest.Reply{Text: "side answer"})
	ts := newTestServer(t, nil)
	var ids []string
	for i := range 3 {
		var info map[string]any
		ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{"tags": map[string]string{"n": fmt.Sprint(i)}}), &info)
		ids = append(ids, info["id"].(string))
		if info["execution_status"] != "idle" || info["agent"] == nil || info["title"] != nil {
			t.Errorf("info %v", info)
		}
		time.Sleep(2 * time.Millisecond) // distinct created_at
	}
	var n int
	ts.must(200, "GET", "/api/conversations/count", nil, &n)
	if n != 3 {
		t.Errorf("count %d", n)
	}
	var page struct {
		Items      []map[string]any `json:"items"`
		NextPageID *string          `json:"next_page_id"`
	}
	ts.must(200, "GET", "/api/conversations/search?limit=2", nil, &page)
	if len(page.Items) != 2 || page.Items[0]["id"] != ids[2] || page.NextPageID == nil {
		t.Fatalf("page 1: %d items, first %v, next %v", len(page.Items), page.Items[0]["id"], page.NextPageID)
	}
	ts.must(200, "GET", "/api/conversations/search?limit=2&page_id="+*page.NextPageID, nil, &page)
	if len(page.Items) != 1 || page.Items[0]["id"] != ids[0] || page.NextPageID != nil {
		t.Errorf("page 2: %v", page)
	}
	ts.must(200, "GET", "/api/conversations/search?sort_order=CREATED_AT&status=idle", nil, &page)
	if len(page.Items) != 3 || page.Items[0]["id"] != ids[0] {
		t.Errorf("ascending: %v", page.Items)
	}
	var batch []map[string]any
	ts.must(200, "GET", "/api/conversations?ids="+ids[1]+"&ids="+unknownID, nil, &batch)
	if len(batch) != 2 || batch[0]["id"] != ids[1] || batch[1] != nil {
		t.Errorf("batch %v", batch)
	}
	var ok map[string]bool
	ts.must(200, "PATCH", "/api/conversations/"+ids[0], map[string]any{"title": "Renamed", "tags": map[string]string{"team": "x"}}, &ok)
	var info map[string]any
	ts.must(200, "GET", "/api/conversations/"+ids[0], nil, &info)
	if info["title"] != "Renamed" || info["tags"].(map[string]any)["team"] != "x" {
		t.Errorf("after PATCH: title %v tags %v", info["title"], info["tags"])
	}
	ts.must(422, "PATCH", "/api/conversations/"+ids[0], map[string]any{"tags": map[string]string{"Bad Key": "x"}}, nil)

	// Message, run, final response, ask_agent.
	ts.must(200, "POST", "/api/conversations/"+ids[0]+"/events", map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "hello"}}, "run": true}, nil)
	ts.waitStatus(ids[0], "finished")
	var resp map[string]string
	ts.must(200, "GET", "/api/conversations/"+ids[0]+"/agent_final_response", nil, &resp)
	if resp["response"] != "first answer" {
		t.Errorf("final response %v", resp)
	}
	// A question missing, blank or not a string is refused before the
	// model is asked (the script has one reply left, for the real one).
	for _, body := range []any{"", map[string]any{}, map[string]any{"question": "  "}, map[string]any{"question": 3}} {
		if status, data := ts.do("POST", "/api/conversations/"+ids[0]+"/ask_agent", body); status != 422 || !strings.Contains(string(data), "question") && body != "" {
			t.Errorf("ask_agent %v: %d %s, want 422", body, status, data)
		}
	}
	ts.must(200, "POST", "/api/conversations/"+ids[0]+"/ask_agent", map[string]any{"question": "why?"}, &resp)
	if resp["response"] != "side answer" {
		t.Errorf("ask_agent %v", resp)
	}
	ts.must(200, "POST", "/api/conversations/"+ids[0]+"/secrets", map[string]any{"secrets": map[string]any{"A": "plain", "B": map[string]any{"value": "v"}, "C": map[string]any{"kind": "StaticSecret", "value": "w"}}}, nil)
	ts.must(200, "GET", "/api/conversations/"+ids[0], nil, &info)
	if strings.Contains(fmt.Sprint(info), "plain") {
		t.Errorf("a secret value is in the response: %v", info["secret_registry"])
	}
	ts.must(200, "POST", "/api/conversations/"+ids[0]+"/confirmation_policy", map[string]any{"policy": map[string]any{"kind": "AlwaysConfirm"}}, nil)
	ts.must(200, "POST", "/api/conversations/"+ids[0]+"/security_analyzer", map[string]any{"security_analyzer": nil}, nil)
	ts.must(200, "GET", "/api/conversations/"+ids[0], nil, &info)
	if info["confirmation_policy"].(map[string]any)["kind"] != "AlwaysConfirm" {
		t.Errorf("policy %v", info["confirmation_policy"])
	}
	ts.must(200, "POST", "/api/conversations/"+ids[1]+"/pause", nil, nil)
	ts.waitStatus(ids[1], "paused")

	// Events.
	var evs struct {
		Items []map[string]any `json:"items"`
	}
	ts.must(200, "GET", "/api/conversations/"+ids[0]+"/events/search?kind=openhands.sdk.event.llm_convertible.message.MessageEvent", nil, &evs)
	if len(evs.Items) != 2 {
		t.Fatalf("MessageEvents: %d", len(evs.Items))
	}
	ts.must(200, "GET", "/api/conversations/"+ids[0]+"/events/search?body=HELLO&source=user", nil, &evs)
	if len(evs.Items) != 1 {
		t.Errorf("body filter: %d", len(evs.Items))
	}
	ts.must(200, "GET", "/api/conversations/"+ids[0]+"/events/count?kind=MessageEvent", nil, &n)
	if n != 2 {
		t.Errorf("event count %d", n)
	}
	id := evs.Items[0]["id"].(string)
	ts.must(200, "GET", "/api/conversations/"+ids[0]+"/events/"+id, nil, nil)
	ts.must(404, "GET", "/api/conversations/"+ids[0]+"/events/nope", nil, nil)
	var got []any
	ts.must(200, "GET", "/api/conversations/"+ids[0]+"/events", []string{id, "nope"}, &got)
	if len(got) != 2 || got[1] != nil {
		t.Errorf("batch events %v", got)
	}
	ts.must(200, "GET", "/api/conversations/"+ids[0]+"/events/search?sort_order=TIMESTAMP_DESC&limit=1&timestamp__gte=2000-01-01T00:00:00Z", nil, &evs)
	if len(evs.Items) != 1 {
		t.Errorf("desc page: %v", evs.Items)
	}

	// Delete.
	ts.must(200, "DELETE", "/api/conversations/"+ids[2], nil, nil)
	ts.must(404, "GET", "/api/conversations/"+ids[2], nil, nil)
	ts.must(400, "DELETE", "/api/conversations/"+ids[2], nil, nil)
	if _, err := os.Stat(filepath.Join(ts.opts.ConversationsPath, strings.ReplaceAll(ids[2], "-", ""))); !os.IsNotExist(err) {
		t.Errorf("deleted conversation's directory: %v", err)
	}
}

// gatedModel answers every request with text once release is closed, and
// tells started of each request it holds: a run that stays running for
// as long as the test needs, whatever the machine's load.
func gatedModel(t *testing.T) (model *llmtest.Server, started <-chan struct{}, release func()) {
	gate := make(chan struct{})
	seen := make(chan struct{}, 16)
	model = llmtest.NewResponder(t, func(llmtest.Request) (llmtest.Reply, error) {
		select {
		case seen <- struct{}{}:
		default:
		}
		<-gate
		return llmtest.Reply{Text: "done"}, nil
	}, nil)
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	return model, seen, release
}

func TestRunConflictsAndLimit(t *testing.T) {
	model, started, release := gatedModel(t)
	ts := newTestServer(t, &server.Options{MaxConcurrentRuns: 1})
	msg := map[string]any{"initial_message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "go"}}, "run": true}}
	var a, b map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, msg), &a)
	<-started
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, nil), &b)
	ts.must(409, "POST", "/api/conversations/"+a["id"].(string)+"/run", nil, nil)
	ts.must(429, "POST", "/api/conversations/"+b["id"].(string)+"/run", nil, nil)
	resp, err := http.Post(ts.http.URL+"/api/conversations/"+b["id"].(string)+"/run", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("a run beyond MaxConcurrentRuns: %d, Retry-After %q; want 429, 1", resp.StatusCode, resp.Header.Get("Retry-After"))
	}

	// A create with run refused for lack of a slot stores nothing: a
	// client retrying it gets no duplicates.
	var before []any
	ts.must(200, "GET", "/api/conversations/search", nil, &struct {
		Items *[]any `json:"items"`
	}{&before})
	for range 3 {
		ts.must(429, "POST", "/api/conversations", ts.startBody(model, msg), nil)
	}
	var after []any
	ts.must(200, "GET", "/api/conversations/search", nil, &struct {
		Items *[]any `json:"items"`
	}{&after})
	if len(after) != len(before) || len(before) != 2 {
		t.Errorf("conversations: %d before the refused creates, %d after; want 2 and 2", len(before), len(after))
	}
	entries, err := os.ReadDir(ts.opts.ConversationsPath)
	if err != nil || len(entries) != 2 {
		t.Errorf("conversation directories: %d (%v), want 2", len(entries), err)
	}
	release()
	ts.waitStatus(a["id"].(string), "finished")
	// The slot is freed when the run's goroutine ends, just after the
	// status reads finished: the same create is refused until then, then
	// runs. The deadline is a hang guard.
	var c map[string]any
	for deadline := time.Now().Add(time.Minute); ; {
		status, data := ts.do("POST", "/api/conversations", ts.startBody(model, msg))
		if status == 201 {
			if err := json.Unmarshal(data, &c); err != nil {
				t.Fatal(err)
			}
			break
		}
		if status != 429 || time.Now().After(deadline) {
			t.Fatalf("create after the run: %d %s", status, data)
		}
		time.Sleep(10 * time.Millisecond)
	}
	ts.waitStatus(c["id"].(string), "finished")
}

func TestConfirmation(t *testing.T) {
	model := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"echo one"}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"echo two"}`}}},
		llmtest.Reply{Text: "ok"},
	)
	ts := newTestServer(t, nil)
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{
		"confirmation_policy": map[string]any{"kind": "AlwaysConfirm"},
		"initial_message":     map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "go"}}, "run": true},
	}), &info)
	id := info["id"].(string)
	ts.waitStatus(id, "waiting_for_confirmation")
	ts.must(200, "POST", "/api/conversations/"+id+"/events/respond_to_confirmation", map[string]any{"accept": true}, nil)
	// The accepted action runs and the next one waits.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var n int
		ts.must(200, "GET", "/api/conversations/"+id+"/events/count?kind=ActionEvent", nil, &n)
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d actions", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	ts.waitStatus(id, "waiting_for_confirmation")
	ts.must(200, "POST", "/api/conversations/"+id+"/events/respond_to_confirmation", map[string]any{"accept": false, "reason": "not this one"}, nil)
	ts.waitStatus(id, "idle")
	var evs struct {
		Items []map[string]any `json:"items"`
	}
	ts.must(200, "GET", "/api/conversations/"+id+"/events/search?kind=UserRejectObservation", nil, &evs)
	if len(evs.Items) != 1 || evs.Items[0]["rejection_reason"] != "not this one" {
		t.Errorf("rejections %v", evs.Items)
	}
}

func TestBashRoutes(t *testing.T) {
	ts := newTestServer(t, nil)
	var out map[string]any
	ts.must(200, "POST", "/api/bash/execute_bash_command", map[string]any{"command": "echo out; echo err >&2; exit 3"}, &out)
	if out["exit_code"] != 3.0 || out["stdout"] != "out\n" || out["stderr"] != "err\n" || out["kind"] != "BashOutput" {
		t.Errorf("execute: %v", out)
	}
	var cmd map[string]any
	ts.must(200, "POST", "/api/bash/start_bash_command", map[string]any{"command": "sleep 5", "timeout": 1}, &cmd)
	if cmd["kind"] != "BashCommand" {
		t.Fatalf("start: %v", cmd)
	}
	deadline := time.Now().Add(2 * time.Minute)
	var page struct {
		Items []map[string]any `json:"items"`
	}
	for {
		ts.must(200, "GET", "/api/bash/bash_events/search?kind__eq=BashOutput&command_id__eq="+cmd["id"].(string)+"&order__gt=-1", nil, &page)
		if len(page.Items) > 0 && page.Items[len(page.Items)-1]["exit_code"] != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed-out command never ended: %v", page.Items)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code := page.Items[len(page.Items)-1]["exit_code"]; code != -1.0 {
		t.Errorf("timeout exit code %v, want -1", code)
	}
	ts.must(200, "GET", "/api/bash/bash_events/"+cmd["id"].(string), nil, nil)
	ts.must(404, "GET", "/api/bash/bash_events/nope", nil, nil)
	var cleared map[string]int
	ts.must(200, "DELETE", "/api/bash/bash_events", nil, &cleared)
	if cleared["cleared_count"] < 4 {
		t.Errorf("cleared %v", cleared)
	}
}

func TestFileAndGitRoutes(t *testing.T) {
	ts := newTestServer(t, nil)
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "f.bin")
	content := []byte("hello\x00world")
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", "f.bin")
	fw.Write(content)
	mw.Close()
	req, _ := http.NewRequest("POST", ts.http.URL+"/api/file/upload?path="+path, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("upload: %v %v", resp.Status, err)
	}
	resp.Body.Close()
	resp, err = http.Get(ts.http.URL + "/api/file/download?path=" + path)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(got, content) || resp.Header.Get("Content-Type") != "application/octet-stream" {
		t.Errorf("download %q %s", got, resp.Header.Get("Content-Type"))
	}

	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed: ", err)
	}
	repo := t.TempDir()
	run := func(args ...string) {
		c := exec.Command("git", args...)
		c.Dir = repo
		c.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	run("init", "-q")
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("one\ntwo\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "b.txt"), []byte("b\n"), 0o644)
	run("add", ".")
	run("commit", "-qm", "init")
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("one\nTWO\n"), 0o644)
	os.Remove(filepath.Join(repo, "b.txt"))
	os.WriteFile(filepath.Join(repo, "c.txt"), []byte("c\n"), 0o644)
	var changes []map[string]string
	ts.must(200, "GET", "/api/git/changes?path="+repo, nil, &changes)
	want := map[string]string{"a.txt": "UPDATED", "b.txt": "DELETED", "c.txt": "ADDED"}
	if len(changes) != 3 {
		t.Errorf("changes %v", changes)
	}
	for _, c := range changes {
		if want[c["path"]] != c["status"] {
			t.Errorf("change %v, want %s", c, want[c["path"]])
		}
	}
	var diff map[string]*string
	ts.must(200, "GET", "/api/git/diff?path="+filepath.Join(repo, "a.txt"), nil, &diff)
	if diff["original"] == nil || *diff["original"] != "one\ntwo" || *diff["modified"] != "one\nTWO" {
		t.Errorf("diff %v", diff)
	}
	ts.must(200, "GET", "/api/git/changes?path="+t.TempDir(), nil, &changes)
	if len(changes) != 0 {
		t.Errorf("not a repository: %v", changes)
	}
}

func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	ts := newTestServer(t, nil)
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	ts.must(200, "GET", "/openapi.json", nil, &doc)
	for _, p := range []string{"/api/conversations", "/api/conversations/{conversation_id}/events/search", "/api/bash/bash_events/search", "/api/file/upload", "/api/git/diff", "/alive"} {
		if doc.Paths[p] == nil {
			t.Errorf("%s missing from /openapi.json", p)
		}
	}
	if len(doc.Paths) < 25 || !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi %s with %d paths", doc.OpenAPI, len(doc.Paths))
	}
}

func TestIdleReleaseAndRestart(t *testing.T) {
	model := llmtest.NewChat(t, llmtest.Reply{Text: "one"}, llmtest.Reply{Text: "two"})
	dir := t.TempDir()
	opts := &server.Options{ConversationsPath: dir, IdleTTL: 20 * time.Millisecond, SessionAPIKeys: []string{"k"}}
	ts := newTestServer(t, opts)
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{
		"initial_message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "go"}}, "run": true},
		"secrets":         map[string]any{"TOKEN": map[string]any{"kind": "StaticSecret", "value": "s3cret"}},
	}), &info)
	id := info["id"].(string)
	ts.waitStatus(id, "finished")
	time.Sleep(100 * time.Millisecond) // released by now
	meta, err := os.ReadFile(filepath.Join(dir, strings.ReplaceAll(id, "-", ""), "meta.json"))
	if err != nil || !bytes.Contains(meta, []byte(`"id":"`+strings.ReplaceAll(id, "-", "")+`"`)) || bytes.Contains(meta, []byte("s3cret")) {
		t.Errorf("meta.json %s (%v)", meta, err)
	}
	ts.must(200, "GET", "/api/conversations/"+id, nil, nil)

	// A new server on the same directory lists the conversation and runs it.
	ts2 := newTestServer(t, &server.Options{ConversationsPath: dir, SessionAPIKeys: []string{"k"}})
	var n int
	ts2.must(200, "GET", "/api/conversations/count", nil, &n)
	if n != 1 {
		t.Fatalf("restart lists %d conversations", n)
	}
	ts2.must(200, "POST", "/api/conversations/"+id+"/events", map[string]any{"content": []any{map[string]any{"type": "text", "text": "again"}}, "run": true}, nil)
	ts2.waitStatus(id, "finished")
	var resp map[string]string
	ts2.must(200, "GET", "/api/conversations/"+id+"/agent_final_response", nil, &resp)
	if resp["response"] != "two" {
		t.Errorf("after restart: %v", resp)
	}
}

func TestWebhooks(t *testing.T) {
	var mu sync.Mutex
	var events []map[string]any
	var infos int
	keys := map[string]int{}
	fails := 1
	hook := newHookServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		keys[r.Header.Get("X-Session-API-Key")]++
		if fails > 0 {
			fails--
			w.WriteHeader(503)
			return
		}
		body, _ := io.ReadAll(r.Body)
		switch {
		case strings.HasPrefix(r.URL.Path, "/hook/events/"):
			var batch []map[string]any
			json.Unmarshal(body, &batch)
			events = append(events, batch...)
		case r.URL.Path == "/hook/conversations":
			infos++
		}
	})
	zero := 0
	model := llmtest.NewChat(t, llmtest.Reply{Text: "hi"})
	// The receiver (the OpenHands app) tells servers apart by the first
	// session key, sent with every post.
	ts := newTestServer(t, &server.Options{SessionAPIKeys: []string{"key-1", "key-2"},
		Webhooks: []server.WebhookSpec{{BaseURL: hook + "/hook", EventBufferSize: 2, FlushDelay: 0.05, RetryDelay: &zero}}})
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{
		"initial_message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "go"}}, "run": true},
	}), &info)
	ts.waitStatus(info["id"].(string), "finished")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		mu.Lock()
		n, i := len(events), infos
		mu.Unlock()
		if n >= 5 && i >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhook got %d events, %d infos", n, i)
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 1 || keys["key-1"] == 0 {
		t.Errorf("X-Session-API-Key of the posts: %v, want key-1 on each", keys)
	}
}

// TestWebhookBeforeCreateAnswer: a create is answered after its
// conversation's info has reached the webhooks (the OpenHands app records
// the conversation on both, and its start task failed when the two
// overlapped). The receiver holds the first post for up to 2 s, watching
// for the create's answer: it must not come while the post is held.
func TestWebhookBeforeCreateAnswer(t *testing.T) {
	answered := make(chan struct{})
	var once sync.Once
	early := make(chan bool, 1)
	hook := newHookServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/hook/conversations" {
			return
		}
		once.Do(func() {
			select {
			case <-answered:
				early <- true
			case <-time.After(2 * time.Second):
				early <- false
			}
		})
	})
	model := llmtest.NewChat(t)
	ts := newTestServer(t, &server.Options{Webhooks: []server.WebhookSpec{{BaseURL: hook + "/hook", FlushDelay: 0.05}}})
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, nil), nil)
	close(answered)
	select {
	case e := <-early:
		if e {
			t.Fatal("the create was answered while its webhook post was still being received")
		}
	case <-time.After(2 * time.Minute): // a hang guard
		t.Fatal("no conversation info reached the webhook")
	}
}

// The idle evictor never closes a conversation a request is using: a
// create that sends an initial message, or a message sent to a released
// conversation, is not answered "conversation: closed" however short
// IdleTTL is (TestIdleReleaseAndRestart met it at load 20).
func TestIdleReleaseSparesRequests(t *testing.T) {
	model := llmtest.NewChat(t)
	ts := newTestServer(t, &server.Options{IdleTTL: time.Nanosecond})
	msg := map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "hi"}}}
	for range 100 {
		var info map[string]any
		ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{"initial_message": msg}), &info)
		ts.must(200, "POST", "/api/conversations/"+info["id"].(string)+"/events", msg, nil)
	}
}

// A conversation that has not run since it was loaded holds nothing a
// reload cannot rebuild, and is released within a second or so of its last
// use, whatever IdleTTL is; one that ran (its shell may hold a directory
// and variables) stays loaded for IdleTTL. Either answers as before.
func TestIdleColdRelease(t *testing.T) {
	finish := llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}}
	model := llmtest.NewChat(t, finish, finish)
	ts := newTestServer(t, &server.Options{IdleTTL: time.Hour})
	var cold, warm map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, nil), &cold)
	msg := map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "hi"}}, "run": true}
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{"initial_message": msg}), &warm)
	ts.waitStatus(warm["id"].(string), "finished")
	deadline := time.Now().Add(time.Minute) // a hang guard
	for server.Loaded(ts.srv, cold["id"].(string)) {
		if time.Now().After(deadline) {
			t.Fatal("the conversation that never ran is still loaded after a minute")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !server.Loaded(ts.srv, warm["id"].(string)) {
		t.Error("the conversation that ran was released before IdleTTL")
	}
	var got map[string]any
	ts.must(200, "GET", "/api/conversations/"+cold["id"].(string), nil, &got)
	if got["execution_status"] != "idle" {
		t.Errorf("the released conversation: %v, want idle", got["execution_status"])
	}
	var n int
	ts.must(200, "POST", "/api/conversations/"+cold["id"].(string)+"/events", msg, nil)
	ts.waitStatus(cold["id"].(string), "finished")
	ts.must(200, "GET", "/api/conversations/"+cold["id"].(string)+"/events/count?kind=MessageEvent", nil, &n)
	if n != 1 {
		t.Errorf("the released conversation, run: %d messages, want 1", n)
	}
}

// The search's creation order is kept as conversations come and go; its
// pages (served from that order) list what a filtered search (which looks
// at every conversation) lists, in the same order, each once.
func TestSearchPagesInCreationOrder(t *testing.T) {
	model := llmtest.NewChat(t)
	ts := newTestServer(t, nil)
	var made []string
	for range 7 {
		var info struct {
			ID string `json:"id"`
		}
		ts.must(201, "POST", "/api/conversations", ts.startBody(model, nil), &info)
		made = append(made, strings.ReplaceAll(info.ID, "-", ""))
	}
	ts.must(200, "DELETE", "/api/conversations/"+made[3], nil, nil)
	made = slices.Delete(made, 3, 4)
	list := func(query string) []string {
		var ids []string
		q := query
		for range 10 {
			var page struct {
				Items []struct {
					ID string `json:"id"`
				} `json:"items"`
				Next *string `json:"next_page_id"`
			}
			ts.must(200, "GET", "/api/conversations/search?limit=4&"+q, nil, &page)
			for _, it := range page.Items {
				ids = append(ids, strings.ReplaceAll(it.ID, "-", ""))
			}
			if page.Next == nil {
				return ids
			}
			q = query + "&page_id=" + *page.Next
		}
		t.Fatalf("%s: more than 10 pages", query)
		return nil
	}
	asc := list("sort_order=CREATED_AT")
	if !slices.Equal(asc, made) {
		t.Errorf("creation order: %v, want %v", asc, made)
	}
	desc := slices.Clone(made)
	slices.Reverse(desc)
	for _, q := range []string{"", "sort_order=CREATED_AT_DESC", "status=idle"} {
		if got := list(q); !slices.Equal(got, desc) {
			t.Errorf("%q: %v, want %v", q, got, desc)
		}
	}
	var n int
	ts.must(200, "GET", "/api/conversations/count", nil, &n)
	if n != len(made) {
		t.Errorf("count: %d, want %d", n, len(made))
	}
	var page struct {
		Items []any `json:"items"`
	}
	ts.must(200, "GET", "/api/conversations/search?page_id="+strings.Repeat("ab", 16), nil, &page)
	if len(page.Items) != 0 {
		t.Errorf("an unknown page: %d items", len(page.Items))
	}
}

// A title in the making keeps its conversation loaded: a message sent
// without a run leaves a conversation that has not run, released a second
// after its last use, but not while its title is being asked for.
func TestIdleColdReleaseSparesTitle(t *testing.T) {
	asked := make(chan struct{}, 1)
	gate := make(chan struct{})
	model := llmtest.NewResponder(t, func(r llmtest.Request) (llmtest.Reply, error) {
		select {
		case asked <- struct{}{}:
		default:
		}
		<-gate
		return llmtest.Reply{Text: "Held title"}, nil
	}, nil)
	var once sync.Once
	release := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	ts := newTestServer(t, &server.Options{AutoTitle: true, IdleTTL: time.Hour})
	var titled, later map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{"autotitle": true}), &titled)
	id := titled["id"].(string)
	msg := map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "name me"}}}
	ts.must(200, "POST", "/api/conversations/"+id+"/events", msg, nil)
	<-asked
	// A conversation used after it is released no earlier: once it is,
	// the titled one would have been too.
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, nil), &later)
	for deadline := time.Now().Add(time.Minute); server.Loaded(ts.srv, later["id"].(string)); {
		if time.Now().After(deadline) {
			t.Fatal("a conversation that never ran is still loaded after a minute")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !server.Loaded(ts.srv, id) {
		t.Fatal("the conversation was released while its title was being made")
	}
	release()
	for deadline := time.Now().Add(time.Minute); ; {
		var info map[string]any
		ts.must(200, "GET", "/api/conversations/"+id, nil, &info)
		if info["title"] == "Held title" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("title %v", info["title"])
		}
		time.Sleep(20 * time.Millisecond)
	}
}
