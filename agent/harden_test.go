package agent_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/terminal"
)

// TestModelKeyMasked: the model's key and an MCP server's header are
// masked in what a command prints, although they are no named secrets.
func TestModelKeyMasked(t *testing.T) {
	const key = "sk-model-key-5f4e3d2c1b0a"
	const header = "Bearer mcp-header-token-77aa"
	a, p := newAgent(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "terminal", Arguments: `{"command":"cat creds.txt"}`}}},
		llmtest.Reply{Text: "done"},
	)
	a.LLM.APIKey = secret.New(key)
	a.MCPConfig = map[string]json.RawMessage{"mcpServers": json.RawMessage(`{"x":{"url":"http://127.0.0.1:1/mcp","headers":{"Authorization":"` + header + `"},"enabled":false}}`)}
	a.Tools = append(a.Tools, tool.Spec{Name: terminal.Name})
	c, _ := newConv(t, a, nil)
	if err := os.WriteFile(filepath.Join(c.WorkingDir(), "creds.txt"), []byte(key+"\n"+header+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.SendMessage(ctx, event.UserMessage("show the creds"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	b, _ := json.Marshal(reqs[1].Messages)
	for _, e := range logEvents(t, c) {
		eb, _ := event.Marshal(e)
		b = append(b, eb...)
	}
	if strings.Contains(string(b), key) || strings.Contains(string(b), "mcp-header-token-77aa") {
		t.Errorf("a credential reached the model or the log:\n%s", b)
	}
	if !strings.Contains(string(b), secret.Hidden) {
		t.Errorf("no masked output:\n%s", b)
	}
}
