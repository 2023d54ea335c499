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
	srv := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command": "printf '%s' \"$DB_PASSWORD\" | wc -c"}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command": "cat service.env"}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message": "Shown."}`}}},
	)
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.BaseURL = srv.URL + "/v1"
	var out bytes.Buffer
	tmp := t.TempDir()
	err := run(context.Background(), config{LLM: cfg, Workspace: filepath.Join(tmp, "w"), PersistenceDir: filepath.Join(tmp, "p"), Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	// The late-bound password reached the command that named it: 28
	// characters.
	for _, want := range []string{"terminal output, as everyone but the command sees it:\n28\n", "API_TOKEN=<secret-hidden>", "DB_PASSWORD=<secret-hidden>", "stored files holding a secret value: 0"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	for _, v := range []string{apiToken, dbPassword} {
		if strings.Contains(got, v) {
			t.Errorf("the output shows %q", v)
		}
		for i, r := range srv.Requests() {
			if strings.Contains(string(r.RawBody), v) {
				t.Errorf("request %d sent the model %q", i, v)
			}
		}
	}
	// The model is told which secrets exist.
	if first := string(srv.Requests()[0].RawBody); !strings.Contains(first, "API_TOKEN") || !strings.Contains(first, "DB_PASSWORD") {
		t.Errorf("the model is not told the secrets' names")
	}
}
