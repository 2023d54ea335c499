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
	srv := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "file_editor", Arguments: llmtest.Args(map[string]any{
			"command": "create", "path": filepath.Join(dir, "hello.txt"), "file_text": "Hello, world!",
		})}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message": "Wrote hello.txt."}`}}},
	)
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.BaseURL = srv.URL + "/v1"
	var out bytes.Buffer
	if err := run(context.Background(), config{LLM: cfg, Dir: dir, Out: &out}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"hello.txt: Hello, world!", "status: finished", "Wrote hello.txt."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
