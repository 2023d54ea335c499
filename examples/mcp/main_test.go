package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/secret"
)

func TestRun(t *testing.T) {
	mcpCfg, err := defaultConfig()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	srv := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "get-sum", Arguments: `{"a": 19, "b": 23}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message": "19 + 23 = 42"}`}}},
	)
	c := llm.DefaultConfig("openai/gpt-4o")
	c.APIKey = secret.New("test-key")
	c.BaseURL = srv.URL + "/v1"
	var out bytes.Buffer
	if err := run(context.Background(), config{MCP: mcpCfg, LLM: &c, Out: &out}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tools from [everything]", "Echo: hello from gohands", "19 + 23 = 42"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if reqs := srv.Requests(); len(reqs) != 2 || !strings.Contains(string(reqs[1].RawBody), "The sum of 19 and 23 is 42") {
		t.Errorf("the MCP result did not reach the model")
	}
}
