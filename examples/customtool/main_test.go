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

func TestRun(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n\nfunc A() {}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.go"), []byte("package a\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "c.txt"), []byte("not go\n"), 0o644)
	srv := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "count_lines", Arguments: `{"pattern": "*.go"}`}}},
		llmtest.Reply{Text: "There are 4 lines of Go."},
	)
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.BaseURL = srv.URL + "/v1"
	var out bytes.Buffer
	if err := run(context.Background(), config{LLM: cfg, Workspace: dir, Out: &out}); err != nil {
		t.Fatal(err)
	}
	// The model was offered the tool, with the schema of CountLines.
	first := string(srv.Requests()[0].RawBody)
	if !strings.Contains(first, `"count_lines"`) || !strings.Contains(first, "A glob pattern relative to the workspace") {
		t.Errorf("the tool is not offered to the model: %s", first)
	}
	// And got its result.
	second := string(srv.Requests()[1].RawBody)
	if !strings.Contains(second, "4 total (2 files)") {
		t.Errorf("the model did not get the count: %s", second)
	}
	if !strings.Contains(out.String(), "There are 4 lines of Go.") {
		t.Errorf("transcript:\n%s", out.String())
	}
}
