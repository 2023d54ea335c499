package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm/llmtest"
)

// systemText is the system message of the last request model received.
func systemText(t *testing.T, model *llmtest.Server) string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := model.LastRequest().Decode(&req); err != nil {
		t.Fatal(err)
	}
	if len(req.Messages) == 0 || req.Messages[0].Role != "system" {
		t.Fatalf("no system message: %+v", req.Messages)
	}
	return string(req.Messages[0].Content)
}

// storedContext is the agent context of conversation id as the server
// answers it.
type storedContext struct {
	Agent struct {
		LLM struct {
			Model string `json:"model"`
		} `json:"llm"`
		AgentContext struct {
			SystemMessageSuffix string `json:"system_message_suffix"`
			Skills              []struct {
				Name    string `json:"name"`
				Content string `json:"content"`
			} `json:"skills"`
		} `json:"agent_context"`
	} `json:"agent"`
	Launched  map[string]any `json:"launched_agent_profile"`
	Additions any            `json:"agent_launch_additions"`
}

// A start request's agent_launch_additions, as the reference 1.58.2 takes
// them: an agent profile launches on the LLM profile llm_profile_ref names
// (recorded in launched_agent_profile), with the suffix appended to the
// profile's and the added skill in the system prompt, while a skill the
// profile's disabled_skills names stays out; a raw agent gets the suffix
// and skills too, its own same-named skill winning. The additions are not
// stored. Each malformed addition is a 422.
func TestLaunchAdditions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ts := settingsServer(t, dir)
	finish := llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message": "done"}`}}}
	alpha := llmtest.NewChat(t) // any request to it fails the test
	beta := llmtest.NewChat(t, finish)
	for name, m := range map[string]*llmtest.Server{"alpha": alpha, "beta": beta} {
		ts.must(201, "POST", "/api/profiles/"+name, map[string]any{"llm": map[string]any{
			"model": "openai/" + name, "base_url": m.URL + "/v1", "api_key": "sk-" + name, "num_retries": 0}, "include_secrets": true}, nil)
	}
	ts.must(201, "POST", "/api/agent-profiles/p1", map[string]any{"llm_profile_ref": "alpha", "revision": 5,
		"system_message_suffix": "PROFILE-SUFFIX", "disabled_skills": []any{"banned"},
		"tools": []any{map[string]any{"name": "terminal"}}}, nil)
	ts.must(201, "POST", "/api/agent-profiles/peer", map[string]any{"agent_kind": "acp", "acp_server": "custom"}, nil)
	var list agentProfileList
	ts.must(200, "GET", "/api/agent-profiles", nil, &list)
	p1, peer := list.id("p1"), list.id("peer")
	workspace := map[string]any{"kind": "LocalWorkspace", "working_dir": t.TempDir()}
	run := map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "go"}}, "run": true}
	additions := map[string]any{
		"system_message_suffix_append": "  DEPLOY-SUFFIX \n",
		"skills": []any{
			map[string]any{"name": "added", "content": "ADDED-SKILL-BODY"},
			map[string]any{"name": "banned", "content": "BANNED-SKILL-BODY"},
			map[string]any{"name": "shared", "content": "ADDED-SHARED-BODY"},
		},
		"llm_profile_ref": "beta",
	}

	var info struct {
		ID string `json:"id"`
	}
	ts.must(201, "POST", "/api/conversations", map[string]any{"agent_profile_id": p1, "workspace": workspace,
		"agent_launch_additions": additions, "initial_message": run}, &info)
	ts.waitStatus(info.ID, "finished")
	sys := systemText(t, beta)
	if !strings.Contains(sys, `PROFILE-SUFFIX\n\nDEPLOY-SUFFIX`) || !strings.Contains(sys, "ADDED-SKILL-BODY") || strings.Contains(sys, "BANNED-SKILL-BODY") {
		t.Errorf("the profile's system message: %s", sys)
	}
	var got storedContext
	ts.must(200, "GET", "/api/conversations/"+info.ID+"?include_skills=true", nil, &got)
	var names []string
	for _, s := range got.Agent.AgentContext.Skills {
		names = append(names, s.Name)
	}
	if got.Agent.LLM.Model != "openai/beta" || got.Agent.AgentContext.SystemMessageSuffix != "PROFILE-SUFFIX\n\nDEPLOY-SUFFIX" ||
		strings.Join(names, ",") != "added,shared" || got.Additions != nil {
		t.Errorf("the stored agent: %+v", got)
	}
	if got.Launched["agent_profile_id"] != p1 || got.Launched["revision"] != 5.0 || got.Launched["llm_profile_ref"] != "beta" {
		t.Errorf("launched_agent_profile: %v", got.Launched)
	}
	meta, err := os.ReadFile(filepath.Join(ts.opts.ConversationsPath, strings.ReplaceAll(info.ID, "-", ""), "meta.json"))
	if err != nil || !strings.Contains(string(meta), `"agent_launch_additions":null`) {
		t.Errorf("meta.json stores the additions: %s", meta)
	}

	// A raw agent: its own skill of the same name wins.
	own := llmtest.NewChat(t, finish)
	ag := pythonAgent(t, own.URL+"/v1")
	ag["agent_context"] = map[string]any{"system_message_suffix": "OWN-SUFFIX",
		"skills": []any{map[string]any{"name": "shared", "content": "OWN-SHARED-BODY"}}}
	delete(additions, "llm_profile_ref")
	ts.must(201, "POST", "/api/conversations", map[string]any{"agent": ag, "workspace": workspace,
		"agent_launch_additions": additions, "initial_message": run}, &info)
	ts.waitStatus(info.ID, "finished")
	sys = systemText(t, own)
	if !strings.Contains(sys, `OWN-SUFFIX\n\nDEPLOY-SUFFIX`) || !strings.Contains(sys, "OWN-SHARED-BODY") || strings.Contains(sys, "ADDED-SHARED-BODY") ||
		!strings.Contains(sys, "BANNED-SKILL-BODY") {
		t.Errorf("the raw agent's system message: %s", sys)
	}

	for _, c := range []struct {
		name string
		body map[string]any
		want string
	}{
		{"llm_profile_ref without a profile", map[string]any{"agent": ag, "agent_launch_additions": map[string]any{"llm_profile_ref": "beta"}},
			`"loc":["body"]`},
		{"extra field", map[string]any{"agent_profile_id": p1, "agent_launch_additions": map[string]any{"x": 1}},
			`"type":"extra_forbidden","loc":["body","agent_launch_additions","x"]`},
		{"suffix too long", map[string]any{"agent_profile_id": p1, "agent_launch_additions": map[string]any{"system_message_suffix_append": strings.Repeat("é", 32769)}},
			`"type":"string_too_long"`},
		{"empty llm_profile_ref", map[string]any{"agent_profile_id": p1, "agent_launch_additions": map[string]any{"llm_profile_ref": ""}},
			`"type":"string_too_short"`},
		{"skill without content", map[string]any{"agent_profile_id": p1, "agent_launch_additions": map[string]any{"skills": []any{map[string]any{"name": "x"}}}},
			`"loc":["body","agent_launch_additions","skills",0]`},
		{"ACP profile", map[string]any{"agent_profile_id": peer, "agent_launch_additions": map[string]any{"llm_profile_ref": "beta"}},
			`{"detail":{"code":"invalid_agent_launch","message":"agent_launch_additions.llm_profile_ref applies only to an OpenHands Agent Profile"}}`},
		{"unknown LLM profile", map[string]any{"agent_profile_id": p1, "agent_launch_additions": map[string]any{"llm_profile_ref": "gone"}},
			`"code":"unresolved_profile_references","dangling_llm_profile_ref":"gone"`},
	} {
		c.body["workspace"] = workspace
		st, body := ts.do("POST", "/api/conversations", c.body)
		if st != 422 || !strings.Contains(string(body), c.want) {
			t.Errorf("%s: %d %s, want 422 with %s", c.name, st, body, c.want)
		}
	}
	// A suffix of exactly the limit is taken.
	ts.must(201, "POST", "/api/conversations", map[string]any{"agent_profile_id": p1, "workspace": workspace,
		"agent_launch_additions": map[string]any{"system_message_suffix_append": strings.Repeat("é", 32768)}}, nil)
}
