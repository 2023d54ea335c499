package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server"
	"github.com/gohands/gohands/workspace"
)

// TestLsServer lists an agent server's conversations, with its key from
// $SESSION_API_KEY; a wrong key and an unreachable server are errors.
func TestLsServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, err := server.New(&server.Options{
		ConversationsPath: dir + "/c", WorkspacePath: dir + "/w", BashEventsDir: dir + "/b",
		SessionAPIKeys: []string{"k"},
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		hs.CloseClientConnections()
		srv.Close(ctx)
		hs.Close()
	}()
	agent, err := os.ReadFile("../../server/testdata/python_agent.json")
	if err != nil {
		t.Fatal(err)
	}
	ws := &workspace.Remote{Host: hs.URL, APIKey: "k"}
	var created struct {
		ID string `json:"id"`
	}
	body := map[string]any{"agent": json.RawMessage(agent), "workspace": map[string]string{"working_dir": dir + "/w", "kind": "LocalWorkspace"}}
	if err := ws.Request(t.Context(), "POST", "/api/conversations", nil, body, &created); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := inProcess(t, map[string]string{"HOME": t.TempDir(), "SESSION_API_KEY": "k"}, "ls", "--server", hs.URL)
	if code != 0 || !strings.Contains(out, created.ID) || !strings.Contains(out, "idle") {
		t.Errorf("ls --server: exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = inProcess(t, map[string]string{"HOME": t.TempDir()}, "ls", "--server", hs.URL, "--session-key", "bad")
	if code != exitError || !strings.Contains(errOut, "401") || !strings.Contains(errOut, "refused the session key from --session-key") {
		t.Errorf("wrong key: exit %d: %s", code, errOut)
	}
	// A 401 says which key to give (issue 32 item 9).
	code, _, errOut = inProcess(t, map[string]string{"HOME": t.TempDir()}, "ls", "--server", hs.URL)
	if code != exitError || !strings.Contains(errOut, "set $SESSION_API_KEY or pass --session-key") {
		t.Errorf("no key: exit %d: %s", code, errOut)
	}
	code, _, errOut = inProcess(t, map[string]string{"HOME": t.TempDir(), "SESSION_API_KEY": "stale", "LLM_MODEL": "openai/gpt-4o", "LLM_API_KEY": "sk-x"},
		"run", "--server", hs.URL, "--workspace", dir+"/w", "hello")
	if code != exitError || !strings.Contains(errOut, "refused the session key from $SESSION_API_KEY") {
		t.Errorf("run --server with a wrong key: exit %d: %s", code, errOut)
	}
	code, _, errOut = inProcess(t, map[string]string{"HOME": t.TempDir()}, "ls", "--server", "http://127.0.0.1:1")
	if code != exitError || !strings.Contains(errOut, "unreachable") {
		t.Errorf("unreachable: exit %d: %s", code, errOut)
	}
}

// TestRunServer runs a task on an agent server: shown as a local run is,
// the same exit status and result line.
func TestRunServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, err := server.New(&server.Options{
		ConversationsPath: dir + "/c", WorkspacePath: dir + "/w", BashEventsDir: dir + "/b",
		SessionAPIKeys: []string{"k"},
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		hs.CloseClientConnections()
		srv.Close(ctx)
		hs.Close()
	}()
	model := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"echo remote-hello"}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"Said hello remotely."}`}}},
	)
	env := map[string]string{"HOME": t.TempDir(), "LLM_MODEL": "openai/gpt-4o", "LLM_API_KEY": "x", "LLM_BASE_URL": model.URL + "/v1", "SESSION_API_KEY": "k"}
	code, out, errOut := inProcess(t, env, "run", "--server", hs.URL, "--workspace", t.TempDir(), "--json", "say hello")
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.Contains(lines[len(lines)-1], `"status":"finished"`) || !strings.Contains(out, "remote-hello") || !strings.Contains(out, "Said hello remotely.") {
		t.Errorf("output:\n%s", out)
	}
	code, _, errOut = inProcess(t, map[string]string{"HOME": t.TempDir(), "LLM_MODEL": "openai/gpt-4o", "LLM_API_KEY": "x"}, "run", "--server", hs.URL, "--session-key", "bad", "hi")
	if code != exitError || !strings.Contains(errOut, "401") {
		t.Errorf("wrong key: exit %d: %s", code, errOut)
	}
}

// startAgentServer starts gohands' agent server in this process, with
// session key "k", and returns its URL.
func startAgentServer(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	srv, err := server.New(&server.Options{
		ConversationsPath: dir + "/c", WorkspacePath: dir + "/w", BashEventsDir: dir + "/b",
		SessionAPIKeys: []string{"k"},
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		hs.CloseClientConnections()
		srv.Close(ctx)
		hs.Close()
	})
	return hs.URL
}

// TestE2ERemoteInterrupt: Ctrl-C during `gohands run --server` pauses the
// conversation on the server, as in a local run: exit 130 with a hint
// naming the server, and running it again there finishes it.
func TestE2ERemoteInterrupt(t *testing.T) {
	url := startAgentServer(t)
	e := newE2E(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_sleep", "terminal", map[string]any{
		"command": "touch started && sleep 30 && touch slept", "timeout": 60,
	})}})
	args := func(extra ...string) []string {
		return append([]string{"run", "--server", url, "--session-key", "k", "--workspace", e.work,
			"--conversation-id", e.id, "--llm-config", e.config}, extra...)
	}
	status := func() string {
		ws := &workspace.Remote{Host: url, APIKey: "k"}
		var info struct {
			Status string `json:"execution_status"`
		}
		if err := ws.Request(t.Context(), "GET", "/api/conversations/"+e.id, nil, nil, &info); err != nil {
			t.Fatal(err)
		}
		return info.Status
	}
	p := e.start(args("--json", "wait a while")...)
	p.waitFile(filepath.Join(e.work, "started"), time.Minute)
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	r := p.wait(2 * time.Minute)
	if r.code != exitPaused {
		t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, exitPaused, r.stderr)
	}
	want := "gohands: paused by interrupt; continue with: gohands run --conversation-id " + e.id + " --server " + url
	if last := lastLine(r.stderr); !strings.HasPrefix(last, want) {
		t.Errorf("last stderr line = %q, want %q", last, want)
	}
	if st := status(); st != "paused" {
		t.Errorf("status on the server %s, want paused", st)
	}
	e.srv.Add(finishReply("Resumed and done."))
	r = e.mustRun(0, args("--json")...)
	if !strings.Contains(r.stdout, "Resumed and done.") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	if st := status(); st != "finished" {
		t.Errorf("status on the server %s, want finished", st)
	}
}

// TestRunServerShownAsLocal: the same task, run here and on an agent
// server, prints the same transcript and --json lines (ids, times and
// paths aside).
func TestRunServerShownAsLocal(t *testing.T) {
	url := startAgentServer(t)
	replies := func() []llmtest.Reply {
		return []llmtest.Reply{
			{Text: "Looking.", ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"echo shown-the-same"}`}}},
			{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"Shown."}`}}},
		}
	}
	norm := func(s, work string) string {
		s = strings.ReplaceAll(s, work, "$WORK")
		s = regexp.MustCompile(`[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}`).ReplaceAllString(s, "$$ID")
		s = regexp.MustCompile(`\d{4}-\d\d-\d\dT[0-9:.]+`).ReplaceAllString(s, "$$TIME")
		s = regexp.MustCompile(`\d+(\.\d+)?\s?(ms|s)\b`).ReplaceAllString(s, "$$DUR")
		return s
	}
	for _, mode := range [][]string{nil, {"--json"}} {
		var outs []string
		for _, server := range []string{"", url} {
			model := llmtest.NewChat(t, replies()...)
			work := t.TempDir()
			env := map[string]string{"HOME": t.TempDir(), "LLM_MODEL": "openai/gpt-4o", "LLM_API_KEY": "x",
				"LLM_BASE_URL": model.URL + "/v1", "SESSION_API_KEY": "k", "NO_COLOR": "1"}
			args := []string{"run", "--workspace", work}
			if server != "" {
				args = append(args, "--server", server)
			}
			code, out, errOut := inProcess(t, env, append(append(args, mode...), "show it")...)
			if code != 0 {
				t.Fatalf("%v (server %q): exit %d: %s%s", mode, server, code, out, errOut)
			}
			if mode != nil {
				// --json prints the events as stored, and a server stores
				// more (its state updates) with paths of its own: compare
				// what each line is, and the result line.
				var kinds []string
				for l := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
					var rec struct {
						Kind         string `json:"kind"`
						Type         string `json:"type"`
						Status       string `json:"status"`
						FinalMessage string `json:"final_message"`
						Steps        int    `json:"steps"`
					}
					if err := json.Unmarshal([]byte(l), &rec); err != nil {
						t.Fatalf("--json line %q: %v", l, err)
					}
					if rec.Kind != "ConversationStateUpdateEvent" {
						kinds = append(kinds, fmt.Sprintf("%+v", rec))
					}
				}
				out = strings.Join(kinds, "\n")
			}
			outs = append(outs, norm(out, work))
		}
		if outs[0] != outs[1] {
			t.Errorf("%v: the run on the server is shown differently:\n--- local\n%s\n--- server\n%s", mode, outs[0], outs[1])
		}
	}
}
