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

// The plugin given at the start answers the first turn with its skill;
// the one loaded between the turns answers the second with its skill,
// and its hook runs on the second message.
func TestRun(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // the plugin cache; no user skills
	finish := func(msg string) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: llmtest.Args(map[string]any{"message": msg})}}}
	}
	srv := llmtest.NewChat(t, finish("Bonjour !"), finish("Tag vMAJOR.MINOR.PATCH from main after make check."))
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.BaseURL = srv.URL + "/v1"
	market, err := filepath.Abs("team") // a bare name is no source ("./team" or a full path is)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), config{LLM: cfg, Marketplace: market, Workspace: t.TempDir(), Out: &out}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"Bonjour !", "the release plugin's hook ran: true", "status: finished"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	const greet, release = "Answer greetings in French", "Releases are tagged vMAJOR.MINOR.PATCH"
	if b := string(reqs[0].RawBody); !strings.Contains(b, greet) || strings.Contains(b, release) {
		t.Errorf("first turn: the start plugin's skill %v, the not yet loaded one's %v", strings.Contains(b, greet), strings.Contains(b, release))
	}
	if b := string(reqs[1].RawBody); !strings.Contains(b, release) {
		t.Error("second turn: the loaded plugin's skill did not reach the model")
	}
}
