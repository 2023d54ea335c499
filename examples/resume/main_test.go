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
	srv := llmtest.NewChat(t, llmtest.Reply{Text: "Noted: 42."}, llmtest.Reply{Text: "You asked me to remember 42."})
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.BaseURL = srv.URL + "/v1"
	var out bytes.Buffer
	if err := run(context.Background(), config{LLM: cfg, Workspace: t.TempDir(), PersistenceDir: t.TempDir(), Out: &out}); err != nil {
		t.Fatal(err)
	}
	// The resumed conversation sent the model the whole history.
	second := string(srv.Requests()[1].RawBody)
	for _, want := range []string{"Remember the number 42", "Noted: 42.", "Which number"} {
		if !strings.Contains(second, want) {
			t.Errorf("the second request lacks %q", want)
		}
	}
	for _, want := range []string{"first session:", "3 events", "resumed: 3 events, status finished", "agent: You asked me to remember 42.", "second session: 5 events, status finished"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
