package task_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
)

// mcpPeer serves one tool, peer_hello, over streamable HTTP on loopback.
func mcpPeer(t *testing.T) *httptest.Server {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "peer", Version: "1"}, nil)
	type noArgs struct{}
	sdk.AddTool(s, &sdk.Tool{Name: "peer_hello", Description: "Greets."}, func(context.Context, *sdk.CallToolRequest, noArgs) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "HELLO-FROM-PEER"}}}, nil, nil
	})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(srv.Close)
	return srv
}

// TestSubAgentInheritsMCPServers: a sub-agent runs with its caller's MCP
// servers, and the servers its own definition declares are not started
// (1.58.2's inherit_mcp_config), so the web-researcher's fetch and tavily
// never need uvx, npx or a key.
func TestSubAgentInheritsMCPServers(t *testing.T) {
	peer := mcpPeer(t)
	var ownHits atomic.Int32
	own := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ownHits.Add(1)
		http.Error(w, "not for sub-agents", http.StatusTeapot)
	}))
	t.Cleanup(own.Close)

	r := newRouter(t, nil)
	pa := parentAgent(r)
	pa.MCPConfig = map[string]json.RawMessage{"peer": json.RawMessage(`{"url": "` + peer.URL + `", "transport": "http"}`)}
	parent, ws := newParent(t, pa)
	writeFile(t, filepath.Join(ws, ".openhands/agents/reviewer.md"),
		"---\nname: reviewer\ndescription: Reviews.\nmcp_servers:\n  own: {url: \""+own.URL+"\", transport: http}\n---\nReview.\n")
	r.models = map[string]*llm.LLM{
		"": scripted(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("t1", "task", map[string]any{"prompt": "TASK-A review", "subagent_type": "reviewer"})}}, llmtest.Reply{Text: "ok"}),
		"TASK-A": scripted(t,
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("c1", "peer_hello", map[string]any{})}},
			llmtest.Reply{Text: "reviewed"}),
	}
	runTurn(t, parent, "review")
	if o := observations(t, parent)["t1"]; o == nil || o.IsError || text(o) != "reviewed" {
		t.Fatalf("%+v", o)
	}
	reqs := r.requests("TASK-A")
	if len(reqs) < 2 {
		t.Fatalf("the sub-agent called its model %d times", len(reqs))
	}
	var seen []string
	for _, m := range reqs[1] {
		seen = append(seen, event.TextOf(m.Content))
	}
	if h := strings.Join(seen, "\n"); !strings.Contains(h, "HELLO-FROM-PEER") {
		t.Errorf("the sub-agent did not reach its caller's MCP server:\n%s", h)
	}
	if n := ownHits.Load(); n != 0 {
		t.Errorf("the definition's own MCP server was contacted %d times", n)
	}
}
