package pyclient_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
)

// TestLaunchAdditions158 starts the same conversations with
// agent_launch_additions on a reference 1.58.2 server and on gohands
// serve, and compares what each stored: the agent's system message suffix
// and skills (an agent profile launched on another LLM profile, and a raw
// agent with a skill of the same name as an added one), the
// launched_agent_profile, the meta.json-backed agent_launch_additions
// (null), and the answers to additions either refuses (status, the
// launch error's detail, a validation error's loc and type).
func TestLaunchAdditions158(t *testing.T) {
	t.Parallel()
	py := testenv.Reference158Python(t)
	model := llmtest.NewChat(t) // nothing runs: any request fails the test
	ref := startReferenceServer(t, py, "OH_PERSISTENCE_DIR="+t.TempDir())
	gh := startGohandsServer(t, "OH_PERSISTENCE_DIR="+t.TempDir())
	ours := []string{"added", "banned", "shared"}

	type launch struct {
		Suffix   any
		Skills   []string
		Model    any
		Launched map[string]any
		Adds     any
	}
	type result struct {
		profile, raw launch
		errors       []string
	}
	run := func(srv *server) result {
		c := &apiClient{base: srv.URL, http: &http.Client{Timeout: 5 * time.Minute}}
		must := func(method, path string, body, out any) {
			if _, err := c.do(t.Context(), method, path, body, out); err != nil {
				t.Fatalf("%s: %v", srv.name, err)
			}
		}
		for _, name := range []string{"alpha", "beta"} {
			must("POST", "/api/profiles/"+name, map[string]any{"include_secrets": true, "llm": map[string]any{
				"model": "openai/" + name, "base_url": model.URL + "/v1", "api_key": "sk-" + name, "num_retries": 0}}, nil)
		}
		must("POST", "/api/agent-profiles/p1", map[string]any{"llm_profile_ref": "alpha", "revision": 5,
			"system_message_suffix": "PROFILE-SUFFIX", "disabled_skills": []any{"banned"},
			"tools": []any{map[string]any{"name": "terminal"}}}, nil)
		must("POST", "/api/agent-profiles/peer", map[string]any{"agent_kind": "acp", "acp_server": "custom", "acp_command": "true"}, nil)
		var list struct {
			Profiles []struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"profiles"`
		}
		must("GET", "/api/agent-profiles", nil, &list)
		ids := map[string]string{}
		for _, p := range list.Profiles {
			ids[p.Name] = p.ID
		}
		workspace := map[string]any{"kind": "LocalWorkspace", "working_dir": t.TempDir()}
		additions := map[string]any{
			"system_message_suffix_append": "  DEPLOY-SUFFIX \n",
			"skills": []any{
				map[string]any{"name": "added", "content": "ADDED-SKILL-BODY"},
				map[string]any{"name": "banned", "content": "BANNED-SKILL-BODY"},
				map[string]any{"name": "shared", "content": "ADDED-SHARED-BODY"},
			},
			"llm_profile_ref": "beta",
		}
		stored := func(body map[string]any) launch {
			var info struct {
				ID string `json:"id"`
			}
			must("POST", "/api/conversations", body, &info)
			var got map[string]any
			must("GET", "/api/conversations/"+info.ID+"?include_skills=true", nil, &got)
			agent, _ := got["agent"].(map[string]any)
			ctx, _ := agent["agent_context"].(map[string]any)
			llm, _ := agent["llm"].(map[string]any)
			l := launch{Suffix: ctx["system_message_suffix"], Model: llm["model"], Adds: got["agent_launch_additions"]}
			for _, s := range anyList(ctx["skills"]) {
				sk := s.(map[string]any)
				if name, _ := sk["name"].(string); slices.Contains(ours, name) {
					l.Skills = append(l.Skills, name+"="+sk["content"].(string))
				}
			}
			l.Launched, _ = got["launched_agent_profile"].(map[string]any)
			if l.Launched != nil && l.Launched["agent_profile_id"] == ids["p1"] {
				l.Launched["agent_profile_id"] = "<p1>"
			}
			return l
		}
		var r result
		r.profile = stored(map[string]any{"agent_profile_id": ids["p1"], "workspace": workspace, "agent_launch_additions": additions})
		raw := startBody(model.URL, workspace["working_dir"].(string))
		raw["agent"].(map[string]any)["agent_context"] = map[string]any{"system_message_suffix": "OWN-SUFFIX",
			"skills": []any{map[string]any{"name": "shared", "content": "OWN-SHARED-BODY"}}}
		delete(additions, "llm_profile_ref")
		raw["agent_launch_additions"] = additions
		r.raw = stored(raw)

		for _, body := range []map[string]any{
			{"agent": raw["agent"], "agent_launch_additions": map[string]any{"llm_profile_ref": "beta"}},
			{"agent_profile_id": ids["p1"], "agent_launch_additions": map[string]any{"x": 1}},
			{"agent_profile_id": ids["p1"], "agent_launch_additions": map[string]any{"system_message_suffix_append": strings.Repeat("é", 32769)}},
			{"agent_profile_id": ids["p1"], "agent_launch_additions": map[string]any{"llm_profile_ref": ""}},
			{"agent_profile_id": ids["peer"], "agent_launch_additions": map[string]any{"llm_profile_ref": "beta"}},
			{"agent_profile_id": ids["p1"], "agent_launch_additions": map[string]any{"llm_profile_ref": "gone"}},
		} {
			body["workspace"] = workspace
			r.errors = append(r.errors, launchAnswer(t, c, body))
		}
		return r
	}
	rr, gr := run(ref), run(gh)
	t.Logf("reference: %q", fmt.Sprintf("%+v", rr))
	t.Logf("gohands:   %q", fmt.Sprintf("%+v", gr))
	if !reflect.DeepEqual(rr.profile, gr.profile) {
		t.Errorf("the profile launch: reference %+v, gohands %+v", rr.profile, gr.profile)
	}
	if !reflect.DeepEqual(rr.raw, gr.raw) {
		t.Errorf("the raw agent launch: reference %+v, gohands %+v", rr.raw, gr.raw)
	}
	for i := range rr.errors {
		if i >= len(gr.errors) || rr.errors[i] != gr.errors[i] {
			t.Errorf("refused start %d: reference %s, gohands %s", i, rr.errors[i], gr.errors[i])
		}
	}
}

// launchAnswer is the status of a start request that should be refused,
// with its launch error's detail or its first validation error's loc and
// type.
func launchAnswer(t *testing.T, c *apiClient, body map[string]any) string {
	t.Helper()
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(t.Context(), "POST", c.base+"/api/conversations", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Session-API-Key", apiKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var e struct {
		Detail json.RawMessage `json:"detail"`
	}
	json.Unmarshal(data, &e)
	var list []struct {
		Loc  []any  `json:"loc"`
		Type string `json:"type"`
	}
	if json.Unmarshal(e.Detail, &list) == nil && len(list) > 0 {
		loc, _ := json.Marshal(list[0].Loc)
		return fmt.Sprint(resp.StatusCode, " ", string(loc), " ", list[0].Type)
	}
	var detail any // key order aside
	json.Unmarshal(e.Detail, &detail)
	canon, _ := json.Marshal(detail)
	return fmt.Sprint(resp.StatusCode, " ", string(canon))
}
