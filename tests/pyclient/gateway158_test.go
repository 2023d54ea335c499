package pyclient_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
)

// gateway158Playbook answers the agent the gateway runs; the system
// pattern checks that the request's system message reached the agent's
// system prompt.
const gateway158Playbook = `{"rules": [
 {"name": "gateway", "system": "PIRATE-158", "first_user": "#gw158",
  "replies": [{"tool_calls": [{"name": "finish", "arguments": {"message": "Four, matey."}}]}], "loop": true}
]}`

// TestGateway158 sends the same chat completion to the OpenAI-compatible
// gateway of a reference 1.58.2 server and of gohands serve, each with the
// same LLM profile and an active agent profile that names another one,
// and compares what they answer and the conversation each ran (the
// launched agent profile, the agent's model and tools); then, with no
// agent profile that can be active (default unreadable, no other), the
// answers of both (409).
func TestGateway158(t *testing.T) {
	t.Parallel()
	py := testenv.Reference158Python(t)
	p, err := llmtest.ParsePlaybook([]byte(gateway158Playbook))
	if err != nil {
		t.Fatal(err)
	}
	model := llmtest.NewResponder(t, p.Respond, nil)
	refDir, ghDir := t.TempDir(), t.TempDir()
	ref := startReferenceServer(t, py, "OH_PERSISTENCE_DIR="+refDir)
	gh := startGohandsServer(t, "OH_PERSISTENCE_DIR="+ghDir)

	type result struct {
		status     int
		answer     map[string]any
		launched   map[string]any
		agentModel any
		tools      []any
		noProfile  string
	}
	run := func(srv *server, dir string) result {
		c := &apiClient{base: srv.URL, http: &http.Client{Timeout: 5 * time.Minute}}
		must := func(method, path string, body, out any) {
			if _, err := c.do(t.Context(), method, path, body, out); err != nil {
				t.Fatalf("%s: %v", srv.name, err)
			}
		}
		must("POST", "/api/profiles/scripted", map[string]any{"include_secrets": true, "llm": map[string]any{
			"model": "openai/scripted", "base_url": model.URL + "/v1", "api_key": "sk-scripted", "num_retries": 0}}, nil)
		must("POST", "/api/agent-profiles/p1", map[string]any{"llm_profile_ref": "other", "revision": 5,
			"tools": []any{map[string]any{"name": "terminal"}}}, nil)
		var list struct {
			Profiles []struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"profiles"`
		}
		must("GET", "/api/agent-profiles", nil, &list)
		var p1 string
		for _, p := range list.Profiles {
			if p.Name == "p1" {
				p1 = p.ID
			}
		}
		must("POST", "/api/agent-profiles/"+p1+"/activate", nil, nil)

		chat := map[string]any{"model": "openhands_scripted", "messages": []any{
			map[string]any{"role": "system", "content": "Speak PIRATE-158."},
			map[string]any{"role": "user", "content": "#gw158 what is 2+2?"},
		}}
		var r result
		var answer map[string]any
		status, err := c.do(t.Context(), "POST", "/v1/chat/completions", chat, &answer)
		if err != nil {
			t.Errorf("%s: %v", srv.name, err)
		}
		r.status = status
		choices, _ := answer["choices"].([]any)
		if len(choices) == 1 {
			r.answer = map[string]any{"object": answer["object"], "model": answer["model"], "choice": choices[0]}
		}
		var page struct {
			Items []map[string]any `json:"items"`
		}
		must("GET", "/api/conversations/search", nil, &page)
		if len(page.Items) == 1 {
			info := page.Items[0]
			r.launched, _ = info["launched_agent_profile"].(map[string]any)
			if r.launched["agent_profile_id"] == p1 {
				r.launched["agent_profile_id"] = "<p1>"
			}
			agent, _ := info["agent"].(map[string]any)
			llm, _ := agent["llm"].(map[string]any)
			r.agentModel = llm["model"]
			for _, tl := range anyList(agent["tools"]) {
				r.tools = append(r.tools, tl.(map[string]any)["name"])
			}
		} else {
			t.Errorf("%s: %d conversations, want 1", srv.name, len(page.Items))
		}

		// No agent profile can be active: p1 is gone, default unreadable.
		must("DELETE", "/api/agent-profiles/p1", nil, nil)
		if err := os.WriteFile(filepath.Join(dir, "agent-profiles", "default.json"), []byte("{not json"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err = c.do(t.Context(), "POST", "/v1/chat/completions", chat, nil)
		r.noProfile = fmt.Sprint(err)
		return r
	}
	rr, gr := run(ref, refDir), run(gh, ghDir)
	t.Logf("reference: %+v", rr)
	t.Logf("gohands:   %+v", gr)

	if rr.status != 200 || gr.status != rr.status || !reflect.DeepEqual(rr.answer, gr.answer) {
		t.Errorf("the chat completion: reference %d %v, gohands %d %v", rr.status, rr.answer, gr.status, gr.answer)
	}
	if !reflect.DeepEqual(rr.launched, gr.launched) {
		t.Errorf("launched_agent_profile: reference %v, gohands %v", rr.launched, gr.launched)
	}
	if rr.agentModel != gr.agentModel || !reflect.DeepEqual(rr.tools, gr.tools) {
		t.Errorf("the agent: reference %v %v, gohands %v %v", rr.agentModel, rr.tools, gr.agentModel, gr.tools)
	}
	if rr.noProfile != gr.noProfile {
		t.Errorf("no active agent profile: reference %s, gohands %s", rr.noProfile, gr.noProfile)
	}
}
