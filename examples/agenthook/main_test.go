package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
)

// The model asks to delete the file; the hook's sub-agent (the second
// request) denies it, so the file stays and the model sees the reason;
// the hook allows the next command, which runs.
func TestRun(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // no user hooks or skills
	terminal := func(cmd string) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: llmtest.Args(map[string]any{"command": cmd})}}}
	}
	finish := func(msg string) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: llmtest.Args(map[string]any{"message": msg})}}}
	}
	srv := llmtest.NewChat(t,
		terminal("rm notes.txt"),
		finish(`{"decision": "deny", "reason": "it deletes files (guard-7e1)"}`),
		terminal("ls > listing.txt"),
		finish(`{"decision": "allow", "reason": "read only"}`),
		finish("Could not delete notes.txt: the guard refused; listed the workspace."),
	)
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.BaseURL = srv.URL + "/v1"
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run(context.Background(), config{LLM: cfg, Workspace: dir, Out: &out}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"notes.txt kept: true", "status: finished"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "listing.txt")); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
	reqs := srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d model requests, want 5", len(reqs))
	}
	if !strings.Contains(string(reqs[1].RawBody), "You review shell commands") || !strings.Contains(string(reqs[1].RawBody), "rm notes.txt") {
		t.Errorf("the hook's sub-agent was not asked about the command: %.500s", reqs[1].RawBody)
	}
	if !strings.Contains(string(reqs[2].RawBody), "guard-7e1") {
		t.Errorf("the model was not told why the command was refused")
	}
}
