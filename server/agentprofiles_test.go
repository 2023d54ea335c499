package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

type agentProfileList struct {
	Profiles []struct {
		ID            string  `json:"id"`
		Name          string  `json:"name"`
		AgentKind     string  `json:"agent_kind"`
		Revision      int     `json:"revision"`
		LLMProfileRef *string `json:"llm_profile_ref"`
	} `json:"profiles"`
	Active *string `json:"active_agent_profile_id"`
}

func (l agentProfileList) id(name string) string {
	for _, p := range l.Profiles {
		if p.Name == name {
			return p.ID
		}
	}
	return ""
}

func TestAgentProfiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ts := settingsServer(t, dir)

	// With none stored, default is made from the settings and active.
	var list agentProfileList
	ts.must(200, "GET", "/api/agent-profiles", nil, &list)
	if len(list.Profiles) != 1 || list.Profiles[0].Name != "default" || list.Active == nil || *list.Active != list.Profiles[0].ID ||
		list.Profiles[0].LLMProfileRef == nil || *list.Profiles[0].LLMProfileRef != "default" {
		t.Fatalf("seeded list: %+v", list)
	}
	seeded := list.Profiles[0].ID
	var onDisk map[string]any
	b, err := os.ReadFile(filepath.Join(dir, "agent-profiles", "default.json"))
	if err != nil || json.Unmarshal(b, &onDisk) != nil {
		t.Fatalf("the reference's layout: %v %s", err, b)
	}
	if onDisk["schema_version"] != 4.0 || onDisk["id"] != seeded || onDisk["agent"] != "CodeActAgent" || onDisk["tools"] != nil {
		t.Errorf("stored default: %s", b)
	}
	// The settings' LLM is only defaults (no key): no ghost LLM profile.
	ts.must(404, "GET", "/api/profiles/default", nil, nil)

	// Saving: the path's name wins, a new profile gets a fresh id and
	// keeps its revision, an overwrite keeps the id and bumps it.
	ts.must(201, "POST", "/api/agent-profiles/p1", map[string]any{"llm_profile_ref": "fast", "name": "other", "id": seeded, "revision": 7}, nil)
	var det struct {
		Name    string         `json:"name"`
		Profile map[string]any `json:"profile"`
	}
	det.Profile = nil // Unmarshal merges into a map it is given
	ts.must(200, "GET", "/api/agent-profiles/p1", nil, &det)
	id := det.Profile["id"]
	if det.Name != "p1" || det.Profile["name"] != "p1" || id == seeded || det.Profile["revision"] != 7.0 {
		t.Errorf("created: %+v", det)
	}
	ts.must(201, "POST", "/api/agent-profiles/p1", map[string]any{"llm_profile_ref": "fast", "tools": []any{map[string]any{"name": "terminal"}, map[string]any{"name": "terminal"}}}, nil)
	det.Profile = nil // Unmarshal merges into a map it is given
	ts.must(200, "GET", "/api/agent-profiles/p1", nil, &det)
	if det.Profile["id"] != id || det.Profile["revision"] != 8.0 || len(det.Profile["tools"].([]any)) != 1 {
		t.Errorf("overwritten: %+v", det)
	}
	ts.must(201, "POST", "/api/agent-profiles/a1", map[string]any{"agent_kind": "acp", "acp_server": "codex", "acp_command": "codex-acp"}, nil)
	det.Profile = nil // Unmarshal merges into a map it is given
	ts.must(200, "GET", "/api/agent-profiles/a1", nil, &det)
	if det.Profile["acp_prompt_timeout"] != 1800.0 || det.Profile["llm_profile_ref"] != nil {
		t.Errorf("acp profile: %+v", det)
	}

	for _, c := range []struct {
		body any
		loc  string
	}{
		{map[string]any{}, `["openhands","llm_profile_ref"]`},
		{map[string]any{"llm_profile_ref": "x", "bogus": 1}, `["openhands","bogus"]`},
		{map[string]any{"agent_kind": "acp", "llm_profile_ref": "x"}, `["acp","llm_profile_ref"]`},
		{map[string]any{"agent_kind": "acp", "acp_server": "nope"}, `["acp","acp_server"]`},
		{map[string]any{"agent_kind": "robot"}, `[]`},
		{map[string]any{"llm_profile_ref": "x", "tool_concurrency_limit": 0}, `["openhands","tool_concurrency_limit"]`},
		{map[string]any{"llm_profile_ref": "x", "id": "not-a-uuid"}, `["openhands","id"]`},
		{map[string]any{"llm_profile_ref": "x", "schema_version": 9}, ``},
		{[]any{}, `["body"]`},
		{"{", ``},
	} {
		st, body := ts.do("POST", "/api/agent-profiles/bad", c.body)
		if st != 422 || !strings.Contains(string(body), c.loc) {
			t.Errorf("%v: %d %s", c.body, st, body)
		}
	}
	ts.must(404, "GET", "/api/agent-profiles/bad", nil, nil)
	ts.must(422, "GET", "/api/agent-profiles/.bad", nil, nil)

	// Materialize: dangling references are reported, not raised.
	var diag struct {
		Valid            bool           `json:"valid"`
		Errors           []string       `json:"errors"`
		LLMResolved      bool           `json:"llm_profile_resolved"`
		KeySet           bool           `json:"llm_api_key_set"`
		DanglingMCP      []string       `json:"dangling_mcp_server_refs"`
		DanglingMeta     *string        `json:"dangling_meta_profile_ref"`
		UnusableTools    []string       `json:"unusable_tools"`
		ACPKey           *string        `json:"acp_api_key_secret_name"`
		ACPFiles         []string       `json:"acp_file_secret_names"`
		ResolvedSettings map[string]any `json:"resolved_settings"`
	}
	ts.must(200, "POST", "/api/agent-profiles/p1/materialize", nil, &diag)
	if diag.Valid || !slices.Equal(diag.Errors, []string{"LLM profile 'fast' not found"}) || diag.ResolvedSettings != nil {
		t.Errorf("dangling LLM profile: %+v", diag)
	}
	ts.must(201, "POST", "/api/profiles/fast", map[string]any{"llm": map[string]any{"model": "openai/gpt-4o", "api_key": "sk-secret-1"}, "include_secrets": true}, nil)
	st, body := ts.do("POST", "/api/agent-profiles/p1/materialize", map[string]any{})
	if st != 200 || strings.Contains(string(body), "sk-secret-1") {
		t.Fatalf("materialize: %d %s", st, body)
	}
	if err := json.Unmarshal(body, &diag); err != nil || !diag.Valid || !diag.LLMResolved || !diag.KeySet || diag.ResolvedSettings["llm"].(map[string]any)["model"] != "openai/gpt-4o" {
		t.Errorf("resolved: %v %s", err, body)
	}
	draft := map[string]any{"profile": map[string]any{"llm_profile_ref": "fast", "mcp_server_refs": []any{"nowhere"},
		"enable_classify_and_switch_llm_tool": true, "meta_profile_ref": "router", "tools": []any{map[string]any{"name": "no_such_tool"}}}}
	diag.ResolvedSettings = nil
	ts.must(200, "POST", "/api/agent-profiles/unsaved/materialize", draft, &diag)
	if diag.Valid || !slices.Equal(diag.DanglingMCP, []string{"nowhere"}) || diag.DanglingMeta == nil || !slices.Equal(diag.UnusableTools, []string{"no_such_tool"}) || len(diag.Errors) != 3 {
		t.Errorf("draft with dangling references: %+v", diag)
	}
	ts.must(200, "POST", "/api/agent-profiles/a1/materialize", nil, &diag)
	if !diag.Valid || diag.ACPKey == nil || *diag.ACPKey != "OPENAI_API_KEY" || !slices.Equal(diag.ACPFiles, []string{"CODEX_AUTH_JSON"}) {
		t.Errorf("acp: %+v", diag)
	}
	ts.must(404, "POST", "/api/agent-profiles/unsaved/materialize", map[string]any{}, nil)
	ts.must(422, "POST", "/api/agent-profiles/p1/materialize", map[string]any{"profile": 5}, nil)
	ts.must(422, "POST", "/api/agent-profiles/p1/materialize", map[string]any{"other": 1}, nil)

	// Rename keeps the id; activation moves the pointer only; deleting
	// the active profile makes default active again.
	ts.must(409, "POST", "/api/agent-profiles/p1/rename", map[string]any{"new_name": "a1"}, nil)
	ts.must(404, "POST", "/api/agent-profiles/gone/rename", map[string]any{"new_name": "x"}, nil)
	ts.must(422, "POST", "/api/agent-profiles/p1/rename", map[string]any{}, nil)
	ts.must(200, "POST", "/api/agent-profiles/p1/rename", map[string]any{"new_name": "p2"}, nil)
	det.Profile = nil // Unmarshal merges into a map it is given
	ts.must(200, "GET", "/api/agent-profiles/p2", nil, &det)
	if det.Profile["id"] != id || det.Profile["name"] != "p2" {
		t.Errorf("renamed: %+v", det)
	}
	ts.must(404, "POST", "/api/agent-profiles/00000000-0000-4000-8000-000000000000/activate", nil, nil)
	var act struct {
		ID      string `json:"id"`
		Applied bool   `json:"agent_settings_applied"`
	}
	ts.must(200, "POST", "/api/agent-profiles/"+id.(string)+"/activate", nil, &act)
	ts.must(200, "GET", "/api/agent-profiles", nil, &list)
	if act.ID != id || act.Applied || list.Active == nil || *list.Active != id {
		t.Errorf("activated: %+v, %+v", act, list)
	}
	ts.must(200, "DELETE", "/api/agent-profiles/p2", nil, nil)
	ts.must(200, "DELETE", "/api/agent-profiles/p2", nil, nil)
	ts.must(200, "GET", "/api/agent-profiles", nil, &list)
	if list.Active == nil || *list.Active != seeded || list.id("p2") != "" {
		t.Errorf("after deleting the active profile: %+v", list)
	}
	// Deleting default while active seeds a new one.
	ts.must(200, "DELETE", "/api/agent-profiles/default", nil, nil)
	ts.must(200, "GET", "/api/agent-profiles", nil, &list)
	if nd := list.id("default"); nd == "" || nd == seeded || list.Active == nil || *list.Active != nd {
		t.Errorf("after deleting default: %+v", list)
	}
	ts.key = ""
	if st, body := ts.do("GET", "/api/agent-profiles", nil); st != 401 {
		t.Errorf("without the key: %d %s", st, body)
	}
}
