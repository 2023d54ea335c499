package server_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// A start with agent_profile_id launches the stored profile: its LLM
// profile, tools and condenser make the conversation's agent, and the
// conversation records which profile (and revision) launched it.
func TestStartFromAgentProfile(t *testing.T) {
	t.Parallel()
	ts := settingsServer(t, t.TempDir())
	ts.must(201, "POST", "/api/profiles/fast", map[string]any{"llm": map[string]any{"model": "openai/gpt-4o", "api_key": "sk-secret-1"}, "include_secrets": true}, nil)
	ts.must(201, "POST", "/api/agent-profiles/p1", map[string]any{"llm_profile_ref": "fast", "revision": 3, "secret_refs": []any{"KEEP"},
		"tools": []any{map[string]any{"name": "terminal"}, map[string]any{"name": "file_editor"}}}, nil)
	ts.must(201, "POST", "/api/agent-profiles/orphan", map[string]any{"llm_profile_ref": "gone", "mcp_server_refs": []any{"nowhere"}}, nil)
	var list agentProfileList
	ts.must(200, "GET", "/api/agent-profiles", nil, &list)
	p1, orphan := list.id("p1"), list.id("orphan")
	workspace := map[string]any{"kind": "LocalWorkspace", "working_dir": t.TempDir()}

	var info struct {
		ID    string `json:"id"`
		Agent struct {
			Kind string `json:"kind"`
			LLM  struct {
				Model  string `json:"model"`
				APIKey any    `json:"api_key"`
			} `json:"llm"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			Condenser map[string]any `json:"condenser"`
		} `json:"agent"`
		Launched map[string]any `json:"launched_agent_profile"`
	}
	ts.must(201, "POST", "/api/conversations", map[string]any{"agent_profile_id": p1, "workspace": workspace,
		"secrets": map[string]any{"KEEP": map[string]any{"kind": "StaticSecret", "value": "v1"}, "DROP": map[string]any{"kind": "StaticSecret", "value": "v2"}}}, &info)
	var tools []string
	for _, tl := range info.Agent.Tools {
		tools = append(tools, tl.Name)
	}
	if info.Agent.Kind != "Agent" || info.Agent.LLM.Model != "openai/gpt-4o" || info.Agent.LLM.APIKey == nil ||
		strings.Join(tools, ",") != "terminal,file_editor" || info.Agent.Condenser == nil {
		t.Errorf("the profile's agent: %+v", info.Agent)
	}
	if info.Launched["agent_profile_id"] != p1 || info.Launched["revision"] != 3.0 || info.Launched["llm_profile_ref"] != nil {
		t.Errorf("launched_agent_profile: %v", info.Launched)
	}
	info.Launched = nil
	ts.must(200, "GET", "/api/conversations/"+info.ID, nil, &info)
	if info.Launched["agent_profile_id"] != p1 {
		t.Errorf("stored launched_agent_profile: %v", info.Launched)
	}

	// Started without a profile: none recorded.
	info.Launched = nil
	ts.must(201, "POST", "/api/conversations", map[string]any{"agent": map[string]any{"llm": map[string]any{"model": "openai/gpt-4o"}}, "workspace": workspace}, &info)
	if info.Launched != nil {
		t.Errorf("no profile, yet launched_agent_profile: %v", info.Launched)
	}

	for _, c := range []struct {
		id     string
		status int
		want   string
	}{
		{"6f1c3d2e-0000-4000-8000-000000000000", 404, `{"detail":"Agent profile with id '6f1c3d2e-0000-4000-8000-000000000000' not found"}`},
		{"not-a-uuid", 422, `"agent_profile_id"`},
		{orphan, 422, `{"detail":{"code":"unresolved_profile_references","dangling_llm_profile_ref":"gone","dangling_mcp_server_refs":["nowhere"],"dangling_meta_profile_llm_refs":[],"dangling_meta_profile_ref":null,"message":"LLM profile 'gone' not found; MCP server(s) not configured: nowhere"}}`},
	} {
		st, body := ts.do("POST", "/api/conversations", map[string]any{"agent_profile_id": c.id, "workspace": workspace})
		var got, want any
		if c.status != 422 || c.id != "not-a-uuid" {
			json.Unmarshal(body, &got)
			json.Unmarshal([]byte(c.want), &want)
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(want)
			if st != c.status || string(gb) != string(wb) {
				t.Errorf("%s: %d %s", c.id, st, body)
			}
		} else if st != 422 || !strings.Contains(string(body), c.want) {
			t.Errorf("%s: %d %s", c.id, st, body)
		}
	}
	// Mutually exclusive with agent.
	ts.must(422, "POST", "/api/conversations", map[string]any{"agent_profile_id": p1, "agent": map[string]any{"llm": map[string]any{"model": "x"}}, "workspace": workspace}, nil)
}
