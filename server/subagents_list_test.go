package server_test

import (
	"encoding/json"
	"testing"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/server"
	"github.com/gohands/gohands/tools/browser"
)

// TestSubAgentsListsWebResearcher: where a browser can run, POST
// /api/sub-agents lists the web-researcher built-in with the browser
// tool set and the MCP servers it declares, under mcp_servers, as 1.58.2
// lists it (fetch through uvx, tavily through npx). The route is POST
// only, as in 1.58.2.
func TestSubAgentsListsWebResearcher(t *testing.T) {
	t.Parallel()
	if _, err := browser.FindChromium(""); err != nil {
		testenv.Missing(t, "%v", err)
	}
	ts := newTestServer(t, &server.Options{})
	var got struct {
		Agents []struct {
			Name       string   `json:"name"`
			IsBuiltin  bool     `json:"is_builtin"`
			Tools      []string `json:"tools"`
			MCPServers map[string]struct {
				Command string   `json:"command"`
				Args    []string `json:"args"`
			} `json:"mcp_servers"`
			MCPConfig json.RawMessage `json:"mcp_config"`
		} `json:"agents"`
	}
	ts.must(200, "POST", "/api/sub-agents", map[string]any{"load_user": false, "load_project": false}, &got)
	found := false
	for _, a := range got.Agents {
		if a.Name != "web-researcher" {
			continue
		}
		found = true
		if !a.IsBuiltin || len(a.Tools) != 1 || a.Tools[0] != "browser_tool_set" {
			t.Errorf("web-researcher: builtin %v, tools %v", a.IsBuiltin, a.Tools)
		}
		if f := a.MCPServers["fetch"]; f.Command != "uvx" || len(f.Args) == 0 {
			t.Errorf("web-researcher's fetch server: %+v", f)
		}
		if tv := a.MCPServers["tavily"]; tv.Command != "npx" || len(tv.Args) == 0 {
			t.Errorf("web-researcher's tavily server: %+v", tv)
		}
		if len(a.MCPServers) != 2 {
			t.Errorf("web-researcher's mcp_servers %v, want fetch and tavily", a.MCPServers)
		}
	}
	if !found {
		t.Fatalf("web-researcher is not listed: %+v", got.Agents)
	}
	if st, body := ts.do("GET", "/api/sub-agents", nil); st != 405 {
		t.Errorf("GET /api/sub-agents: %d %s, want 405 (POST only)", st, body)
	}
}
