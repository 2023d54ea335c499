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
	"github.com/gohands/gohands/workspace/docker/dockertest"
)

// TestRun: the program of examples/local, in a container; the file the
// agent wrote there is on this machine.
func TestRun(t *testing.T) {
	o := dockertest.Options(t)
	dir := t.TempDir()
	srv := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: llmtest.Args(map[string]any{
			"command": "printf 'Hello, world!' > " + filepath.Join(dir, "hello.txt") + " && test -f /.dockerenv && echo IN-A-CONTAINER",
		})}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message": "Wrote hello.txt."}`}}},
	)
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.BaseURL = srv.URL + "/v1"
	var out bytes.Buffer
	if err := run(context.Background(), config{LLM: cfg, Dir: dir, Out: &out, Docker: *o}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"IN-A-CONTAINER", "hello.txt: Hello, world!", "status: finished", "Wrote hello.txt."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "hello.txt")); err != nil || string(b) != "Hello, world!" {
		t.Errorf("hello.txt on this machine: %q %v", b, err)
	}
}
