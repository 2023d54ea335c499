package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
)

// The first conversation's agent writes MEMORY.md; the second's system
// prompt holds it, and the first's did not.
func TestRun(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // no user memory or skills
	t.Setenv("OH_PERSISTENCE_DIR", "")
	dir := t.TempDir()
	const fact = "Releases are tagged vMAJOR.MINOR.PATCH."
	srv := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: llmtest.Args(map[string]any{
			"command": "mkdir -p .openhands/memory && echo '" + fact + "' >> .openhands/memory/MEMORY.md",
		})}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message": "Noted in MEMORY.md."}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message": "As vMAJOR.MINOR.PATCH."}`}}},
	)
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.BaseURL = srv.URL + "/v1"
	var out bytes.Buffer
	if err := run(context.Background(), config{LLM: cfg, Workspace: dir, Out: &out}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"Noted in MEMORY.md.", "As vMAJOR.MINOR.PATCH.", "MEMORY.md:\n" + fact} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	if system(reqs[0]) == "" || strings.Contains(system(reqs[0]), fact) {
		t.Errorf("the first conversation's system prompt: %.300q", system(reqs[0]))
	}
	if s := system(reqs[2]); !strings.Contains(s, "<MEMORY_CONTEXT>") || !strings.Contains(s, fact) {
		t.Errorf("the second conversation's system prompt lacks the memory:\n%s", s)
	}
}

// system is the system message of a Chat Completions request.
func system(r llmtest.Request) string {
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(r.RawBody, &body) != nil || len(body.Messages) == 0 || body.Messages[0].Role != "system" {
		return ""
	}
	var parts []struct {
		Text string `json:"text"`
	}
	var text string
	if json.Unmarshal(body.Messages[0].Content, &text) == nil {
		return text
	}
	json.Unmarshal(body.Messages[0].Content, &parts)
	for _, p := range parts {
		text += p.Text
	}
	return text
}
