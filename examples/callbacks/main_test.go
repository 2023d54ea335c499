package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
)

func TestRun(t *testing.T) {
	srv := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command": "ls"}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message": "Listed."}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "think", Arguments: `{"thought": "say goodbye"}`}}},
		llmtest.Reply{Text: "Goodbye!"},
	)
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.BaseURL = srv.URL + "/v1"
	var out bytes.Buffer
	if err := run(context.Background(), config{LLM: cfg, Workspace: t.TempDir(), Out: &out}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	// The subscription saw the first task's calls only.
	if !strings.Contains(got, "tool call: terminal") || !strings.Contains(got, "tool call: finish") || strings.Contains(got, "tool call: think") {
		t.Errorf("subscribed callback output:\n%s", got)
	}
	for _, want := range []string{
		"ActionEvent            3", "MessageEvent           3", "ObservationEvent       3", "SystemPromptEvent      1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("tally lacks %q:\n%s", want, got)
		}
	}
}
