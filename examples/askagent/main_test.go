package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	// The question is asked while `sleep 2` runs, so it is the third
	// request, before the run's next step.
	srv := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "file_editor", Arguments: llmtest.Args(map[string]any{
			"command": "create", "path": filepath.Join(dir, "notes.md"), "file_text": "- [ ] tag\n- [ ] push\n- [ ] announce\n",
		})}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command": "sleep 2"}`}}},
		llmtest.Reply{Text: "I am waiting for a short sleep after writing notes.md."},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message": "Done."}`}}},
	)
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.BaseURL = srv.URL + "/v1"
	var out bytes.Buffer
	if err := run(context.Background(), config{LLM: cfg, Workspace: dir, Out: &out}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "asked mid-run: I am waiting for a short sleep after writing notes.md.") {
		t.Errorf("output:\n%s", out.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	ask := string(reqs[2].RawBody)
	if !strings.Contains(ask, "what are you doing right now") || !strings.Contains(ask, "notes.md") {
		t.Errorf("the question was not asked with the history: %s", ask)
	}
	// The question left no trace in the conversation.
	if last := string(reqs[3].RawBody); strings.Contains(last, "what are you doing") || strings.Contains(last, "short sleep") {
		t.Errorf("the run's next request carries the side question: %s", last)
	}
}
