package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
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
	if code != exitError || !strings.Contains(errOut, "401") {
		t.Errorf("wrong key: exit %d: %s", code, errOut)
	}
	code, _, errOut = inProcess(t, map[string]string{"HOME": t.TempDir()}, "ls", "--server", "http://127.0.0.1:1")
	if code != exitError || !strings.Contains(errOut, "unreachable") {
		t.Errorf("unreachable: exit %d: %s", code, errOut)
	}
}

// TestRunServer runs a task on an agent server: shown as a local run is,
// the same exit status and result line.
func TestRunServer(t *testing.T) {
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
