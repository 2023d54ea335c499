package mcp_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	_ "github.com/gohands/gohands/llm/providers"
	"github.com/gohands/gohands/mcp"
	"github.com/gohands/gohands/secret"
)

// everythingScript is the path of the pinned server-everything that
// scripts/deps.sh installs; a missing server fails the test in CI.
func everythingScript(t *testing.T) string {
	t.Helper()
	p, _ := filepath.Abs("testdata/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	_, err := os.Stat(p)
	if _, lerr := exec.LookPath("node"); lerr != nil {
		err = lerr
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("server-everything not installed (%v); run scripts/deps.sh", err)
		}
		t.Skipf("server-everything not installed (%v); run scripts/deps.sh", err)
	}
	return p
}

// A scripted model calls an MCP tool through the default agent, which
// starts the server from its own mcp_config (the reference's
// {"mcpServers": ...} form); the tool's result reaches the model's next
// request, the log holds the reference's action and observation kinds,
// and closing the conversation stops the server (TestMain checks that no
// process is left).
func TestAgentCallsMCPTool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "get-sum", Arguments: `{"a": 19, "b": 23}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_2", Name: "finish", Arguments: `{"message": "The sum is 42."}`}}},
	)
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.APIKey = secret.New("test-key")
	cfg.BaseURL = srv.URL + "/v1"
	a := agent.New(cfg, nil, nil)

	servers, err := json.Marshal(map[string]any{"everything": map[string]any{
		"command": "node", "args": []string{everythingScript(t), "stdio"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	a.MCPConfig = map[string]json.RawMessage{"mcpServers": servers}

	c, err := conversation.New(ctx, a, t.TempDir(), &conversation.LocalOptions{Backend: filestore.NewBackend(t.TempDir(), nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SendMessage(ctx, event.UserMessage("Add 19 and 23 with the MCP tool.")); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	// The first request offers the MCP tools by their MCP names.
	if !strings.Contains(string(reqs[0].RawBody), `"name":"get-sum"`) {
		t.Errorf("first request does not offer get-sum")
	}
	// The second carries the tool result.
	body := string(reqs[1].RawBody)
	if !strings.Contains(body, `"tool_call_id":"call_1"`) || !strings.Contains(body, "The sum of 19 and 23 is 42") {
		t.Errorf("second request lacks the MCP result:\n%s", body)
	}
	var sawAction, sawObs bool
	store := c.State().Events()
	for i := range store.Len() {
		raw, err := store.Raw(t.Context(), i)
		if err != nil {
			t.Fatal(err)
		}
		e, err := event.Unmarshal(raw) // as a resumed conversation reads it
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		switch e := e.(type) {
		case *event.ActionEvent:
			if act, ok := e.Action.(*mcp.Action); ok && strings.Contains(string(raw), `"action":{"data":{"a":19,"b":23},"kind":"MCPToolAction"}`) {
				sawAction = string(act.Data) == `{"a":19,"b":23}`
			}
		case *event.ObservationEvent:
			if o, ok := e.Observation.(*mcp.Observation); ok && o.ToolName == "get-sum" && !o.IsError && strings.Contains(string(raw), `"kind":"MCPToolObservation"`) {
				sawObs = true
			}
		}
	}
	if !sawAction || !sawObs {
		t.Errorf("log: MCPToolAction %v, MCPToolObservation %v", sawAction, sawObs)
	}
}
