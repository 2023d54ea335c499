package pyclient_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/testenv"
)

// TestAgentProfileStart158 starts conversations with agent_profile_id on a
// reference 1.58.2 server and on gohands serve, each with the same LLM
// profile and agent profiles saved, and compares the agent each stores
// (kind, model, tools, condenser), its launched_agent_profile, and the
// answers to an unknown id and to a profile with dangling references.
// An ACP profile's start stores the same ACPAgent on both, with its
// launched_agent_profile, and starts no ACP server (its command, which
// would leave a file, has not run); a custom one without acp_command is
// the same 422 on both.
func TestAgentProfileStart158(t *testing.T) {
	t.Parallel()
	py := testenv.Reference158Python(t)
	ref := startReferenceServer(t, py, "OH_PERSISTENCE_DIR="+t.TempDir())
	gh := startGohandsServer(t)

	type result struct {
		agent, launched       map[string]any
		acpAgent, acpLaunched map[string]any
		unknown, orphan       string
		noCommand             string
	}
	run := func(srv *server) result {
		c := &apiClient{base: srv.URL, http: &http.Client{Timeout: 5 * time.Minute}}
		must := func(method, path string, body, out any) {
			if _, err := c.do(t.Context(), method, path, body, out); err != nil {
				t.Fatalf("%s: %v", srv.name, err)
			}
		}
		must("POST", "/api/profiles/fast", map[string]any{"llm": map[string]any{"model": "openai/gpt-4o"}}, nil)
		must("POST", "/api/agent-profiles/p1", map[string]any{"llm_profile_ref": "fast", "revision": 3, "secret_refs": []any{"KEEP"},
			"tools": []any{map[string]any{"name": "terminal"}, map[string]any{"name": "file_editor"}}}, nil)
		must("POST", "/api/agent-profiles/orphan", map[string]any{"llm_profile_ref": "gone", "mcp_server_refs": []any{"nowhere"}}, nil)
		marker := filepath.Join(t.TempDir(), "spawned")
		must("POST", "/api/agent-profiles/acp", map[string]any{"agent_kind": "acp", "acp_server": "custom", "acp_command": "touch '" + marker + "'",
			"acp_args": []any{"--x"}, "acp_model": "big", "acp_prompt_timeout": 120, "revision": 2, "secret_refs": []any{"PEER_AUTH"}}, nil)
		must("POST", "/api/agent-profiles/nocmd", map[string]any{"agent_kind": "acp", "acp_server": "custom"}, nil)
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
		ws := map[string]any{"kind": "LocalWorkspace", "working_dir": t.TempDir()}
		var info map[string]any
		must("POST", "/api/conversations", map[string]any{"agent_profile_id": ids["p1"], "workspace": ws}, &info)
		var r result
		r.agent, _ = info["agent"].(map[string]any)
		r.launched, _ = info["launched_agent_profile"].(map[string]any)
		if r.launched != nil && r.launched["agent_profile_id"] == ids["p1"] {
			r.launched["agent_profile_id"] = "<p1>"
		}
		answer := func(id string) string {
			st, err := c.do(t.Context(), "POST", "/api/conversations", map[string]any{"agent_profile_id": id, "workspace": ws}, nil)
			if err == nil {
				return "no error"
			}
			_, body, _ := strings.Cut(err.Error(), ": ")
			var v any
			_, body, _ = strings.Cut(body, " ")
			if json.Unmarshal([]byte(body), &v) != nil {
				v = body
			}
			b, _ := json.Marshal(v)
			return http.StatusText(st) + " " + string(b)
		}
		r.unknown = answer("6f1c3d2e-0000-4000-8000-000000000000")
		r.orphan = answer(ids["orphan"])
		r.noCommand = answer(ids["nocmd"])

		info = nil
		must("POST", "/api/conversations", map[string]any{"agent_profile_id": ids["acp"], "workspace": ws}, &info)
		r.acpAgent, _ = info["agent"].(map[string]any)
		r.acpLaunched, _ = info["launched_agent_profile"].(map[string]any)
		if r.acpAgent == nil || r.acpLaunched == nil {
			t.Fatalf("%s: the ACP profile's start: %v", srv.name, info)
		}
		if r.acpLaunched != nil && r.acpLaunched["agent_profile_id"] == ids["acp"] {
			r.acpLaunched["agent_profile_id"] = "<acp>"
		}
		if cmd := anyList(r.acpAgent["acp_command"]); len(cmd) == 2 && cmd[1] == marker {
			cmd[1] = "<marker>"
		}
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("%s: the ACP server's command ran at the start", srv.name)
		}
		return r
	}
	rr, gr := run(ref), run(gh)

	pick := func(a map[string]any) map[string]any {
		var tools []any
		for _, tl := range anyList(a["tools"]) {
			tools = append(tools, tl.(map[string]any)["name"])
		}
		llm, _ := a["llm"].(map[string]any)
		cond, _ := a["condenser"].(map[string]any)
		condLLM, _ := cond["llm"].(map[string]any)
		return map[string]any{"kind": a["kind"], "model": llm["model"], "stream": llm["stream"], "tools": tools,
			"condenser": cond["kind"], "condenser_stream": condLLM["stream"], "condenser_usage_id": condLLM["usage_id"]}
	}
	if r, g := pick(rr.agent), pick(gr.agent); !reflect.DeepEqual(r, g) {
		t.Errorf("the stored agent: reference %v, gohands %v", r, g)
	}
	if !reflect.DeepEqual(rr.launched, gr.launched) {
		t.Errorf("launched_agent_profile: reference %v, gohands %v", rr.launched, gr.launched)
	}
	if rr.unknown != gr.unknown {
		t.Errorf("unknown id: reference %s, gohands %s", rr.unknown, gr.unknown)
	}
	if rr.orphan != gr.orphan {
		t.Errorf("dangling references: reference %s, gohands %s", rr.orphan, gr.orphan)
	}

	pickACP := func(a map[string]any) map[string]any {
		out := map[string]any{}
		for _, k := range []string{"kind", "acp_command", "acp_server", "acp_args", "acp_model", "acp_session_mode", "acp_prompt_timeout",
			"acp_startup_timeout", "acp_isolate_data_dir", "acp_file_secrets", "acp_resume_session_id", "mcp_config", "agent_context",
			"tools", "include_default_tools", "condenser", "critic"} {
			out[k] = a[k]
		}
		llm, _ := a["llm"].(map[string]any)
		out["llm.model"], out["llm.usage_id"] = llm["model"], llm["usage_id"]
		return out
	}
	if r, g := pickACP(rr.acpAgent), pickACP(gr.acpAgent); !reflect.DeepEqual(r, g) {
		rb, _ := json.Marshal(r)
		gb, _ := json.Marshal(g)
		t.Errorf("the ACP profile's agent:\nreference %s\ngohands   %s", rb, gb)
	}
	if !reflect.DeepEqual(rr.acpLaunched, gr.acpLaunched) {
		t.Errorf("ACP launched_agent_profile: reference %v, gohands %v", rr.acpLaunched, gr.acpLaunched)
	}
	if rr.noCommand != gr.noCommand {
		t.Errorf("custom ACP profile without acp_command: reference %s, gohands %s", rr.noCommand, gr.noCommand)
	}
}

func anyList(v any) []any {
	l, _ := v.([]any)
	return l
}

// TestAgentSettingsACPStart158 starts conversations from agent_settings
// of agent_kind acp on a reference 1.58.2 server and on gohands serve and
// compares the ACPAgent each stores: one with the fields set (and an
// agent_context without a timestamp), one with the settings' defaults
// (no agent_context); neither runs the ACP server's command at the start.
// A custom server without acp_command is the same 422 on both, and the
// settings' llm is refused by both.
func TestAgentSettingsACPStart158(t *testing.T) {
	t.Parallel()
	py := testenv.Reference158Python(t)
	ref := startReferenceServer(t, py, "OH_PERSISTENCE_DIR="+t.TempDir())
	gh := startGohandsServer(t)

	type result struct {
		full, defaults  map[string]any
		noCommand       string
		noCommandStatus int
	}
	run := func(srv *server) result {
		c := &apiClient{base: srv.URL, http: &http.Client{Timeout: 5 * time.Minute}}
		marker := filepath.Join(t.TempDir(), "spawned")
		ws := map[string]any{"kind": "LocalWorkspace", "working_dir": t.TempDir()}
		start := func(settings map[string]any) (map[string]any, int, string) {
			var info map[string]any
			st, err := c.do(t.Context(), "POST", "/api/conversations", map[string]any{"agent_settings": settings, "workspace": ws}, &info)
			if err != nil {
				_, body, _ := strings.Cut(err.Error(), ": ")
				_, body, _ = strings.Cut(body, " ")
				return nil, st, body
			}
			a, _ := info["agent"].(map[string]any)
			if a == nil || info["launched_agent_profile"] != nil {
				t.Fatalf("%s: %v", srv.name, info)
			}
			if cmd := anyList(a["acp_command"]); len(cmd) == 2 && cmd[1] == marker {
				cmd[1] = "<marker>"
			}
			return a, st, ""
		}
		var r result
		r.full, _, _ = start(map[string]any{"agent_kind": "acp", "acp_server": "custom", "acp_command": []any{"touch", marker},
			"acp_args": []any{"--x"}, "acp_model": "big", "acp_session_mode": "plan", "acp_prompt_timeout": 120, "acp_startup_timeout": 30,
			"acp_isolate_data_dir": true, "agent_context": map[string]any{"system_message_suffix": "Be brief.", "current_datetime": nil}})
		r.defaults, _, _ = start(map[string]any{"agent_kind": "acp", "acp_command": []any{"touch", marker}})
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("%s: the ACP server's command ran at the start", srv.name)
		}
		var body string
		_, r.noCommandStatus, body = start(map[string]any{"agent_kind": "acp", "acp_server": "custom"})
		var v any
		if json.Unmarshal([]byte(body), &v) == nil {
			b, _ := json.Marshal(v)
			r.noCommand = string(b)
		}
		if _, st, body := start(map[string]any{"agent_kind": "acp", "acp_command": []any{"x"}, "llm": map[string]any{"model": "m"}}); st != 422 || !strings.Contains(body, "Removed agent settings: llm") {
			t.Errorf("%s: the settings' llm: %d %s", srv.name, st, body)
		}
		return r
	}
	rr, gr := run(ref), run(gh)

	pickACP := func(a map[string]any) map[string]any {
		out := map[string]any{}
		for _, k := range []string{"kind", "acp_command", "acp_server", "acp_args", "acp_model", "acp_session_mode", "acp_prompt_timeout",
			"acp_startup_timeout", "acp_isolate_data_dir", "acp_file_secrets", "acp_resume_session_id", "mcp_config", "agent_context",
			"tools", "include_default_tools", "condenser", "critic"} {
			out[k] = a[k]
		}
		llm, _ := a["llm"].(map[string]any)
		out["llm.model"], out["llm.usage_id"] = llm["model"], llm["usage_id"]
		return out
	}
	for _, c := range []struct {
		name string
		r, g map[string]any
	}{{"with every field", rr.full, gr.full}, {"with the defaults", rr.defaults, gr.defaults}} {
		if r, g := pickACP(c.r), pickACP(c.g); !reflect.DeepEqual(r, g) {
			rb, _ := json.Marshal(r)
			gb, _ := json.Marshal(g)
			t.Errorf("the ACPAgent of settings %s:\nreference %s\ngohands   %s", c.name, rb, gb)
		}
	}
	if rr.noCommandStatus != 422 || rr.noCommand != gr.noCommand || gr.noCommandStatus != 422 {
		t.Errorf("custom without acp_command: reference %d %s, gohands %d %s", rr.noCommandStatus, rr.noCommand, gr.noCommandStatus, gr.noCommand)
	}
}
