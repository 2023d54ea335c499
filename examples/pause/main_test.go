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
	srv := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_sleep", Name: "terminal", Arguments: `{"command": "sleep 60 && touch slept", "timeout": 120}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message": "Stopped waiting."}`}}},
	)
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.BaseURL = srv.URL + "/v1"
	var out bytes.Buffer
	dir := t.TempDir()
	if err := run(context.Background(), config{LLM: cfg, Workspace: dir, Out: &out}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "slept")); err == nil {
		t.Error("the pause did not interrupt the command")
	}
	for _, want := range []string{"status paused", "resumed: status finished"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// The model learnt that its command was interrupted.
	last := string(srv.LastRequest().RawBody)
	lower := strings.ToLower(last)
	if !strings.Contains(lower, "interrupted") && !strings.Contains(lower, "cancelled") || !strings.Contains(last, "call_sleep") {
		t.Errorf("the model was not told of the interruption: %s", last)
	}
}
