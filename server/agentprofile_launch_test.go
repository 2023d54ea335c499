package server_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gohands/gohands/internal/testenv"
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

// An ACP agent profile, stored through the agent-profiles route, launches
// an ACPAgent: the profile's command (split as a shell splits it), server,
// model and timeouts; the request secrets its secret_refs name reach the
// ACP server's environment, the others do not. The server (the scripted
// peer) starts with the first run, not with the conversation. A profile
// without acp_command, or naming an MCP server that is not configured,
// cannot launch, and its materialize says why.
func TestStartFromACPAgentProfile(t *testing.T) {
	t.Parallel()
	py := testenv.Program(t, "python3")
	script, err := filepath.Abs("testdata/acp_models_peer.py")
	if err != nil {
		t.Fatal(err)
	}
	peerLog, prompts := filepath.Join(t.TempDir(), "peer.log"), filepath.Join(t.TempDir(), "prompts")
	ts := settingsServer(t, t.TempDir())
	ts.must(201, "POST", "/api/agent-profiles/peer", map[string]any{"agent_kind": "acp", "acp_server": "custom",
		"acp_command": "'" + py + "' '" + script + "'", "acp_model": "big", "acp_prompt_timeout": 120, "acp_startup_timeout": 120,
		"revision": 4, "secret_refs": []any{"PEER_LOG", "PEER_AUTH", "PEER_PROMPTS"}}, nil)
	ts.must(201, "POST", "/api/agent-profiles/codex", map[string]any{"agent_kind": "acp", "acp_server": "codex"}, nil)
	ts.must(201, "POST", "/api/agent-profiles/custom", map[string]any{"agent_kind": "acp", "acp_server": "custom"}, nil)
	ts.must(201, "POST", "/api/agent-profiles/unclosed", map[string]any{"agent_kind": "acp", "acp_command": `x 'a b`}, nil)
	ts.must(201, "POST", "/api/agent-profiles/quoted", map[string]any{"agent_kind": "acp", "acp_command": `x "a\"b" 'c d' e\ f "g\h" "\\"`}, nil)
	ts.must(201, "POST", "/api/agent-profiles/nomcp", map[string]any{"agent_kind": "acp", "acp_command": "x", "mcp_server_refs": []any{"nowhere"}}, nil)
	var list agentProfileList
	ts.must(200, "GET", "/api/agent-profiles", nil, &list)
	workspace := map[string]any{"kind": "LocalWorkspace", "working_dir": t.TempDir()}
	secrets := map[string]any{}
	// PEER_NAME is not among the profile's secret_refs: the peer, not
	// told its name, is not a codex-acp server.
	for k, v := range map[string]string{"PEER_LOG": peerLog, "PEER_AUTH": "1", "PEER_NAME": "codex-acp-peer", "PEER_PROMPTS": prompts} {
		secrets[k] = map[string]any{"kind": "StaticSecret", "value": v}
	}

	var info map[string]any
	ts.must(201, "POST", "/api/conversations", map[string]any{"agent_profile_id": list.id("peer"), "workspace": workspace, "secrets": secrets}, &info)
	id, _ := info["id"].(string)
	a, _ := info["agent"].(map[string]any)
	l, _ := a["llm"].(map[string]any)
	ctx, _ := a["agent_context"].(map[string]any)
	if a["kind"] != "ACPAgent" || fmt.Sprint(a["acp_command"]) != fmt.Sprint([]any{py, script}) || a["acp_server"] != "custom" ||
		a["acp_model"] != "big" || a["acp_prompt_timeout"] != 120.0 || a["acp_startup_timeout"] != 120.0 || l["model"] != "big" ||
		ctx == nil || ctx["load_project_skills"] != false || ctx["current_datetime"] != nil {
		t.Errorf("the profile's agent: %v", a)
	}
	want := map[string]any{"agent_profile_id": list.id("peer"), "revision": 4.0, "secret_refs": []any{"PEER_LOG", "PEER_AUTH", "PEER_PROMPTS"}, "llm_profile_ref": nil}
	if !reflect.DeepEqual(info["launched_agent_profile"], want) {
		t.Errorf("launched_agent_profile %v, want %v", info["launched_agent_profile"], want)
	}
	if b, err := os.ReadFile(peerLog); err == nil {
		t.Errorf("the ACP server started with the conversation: %q", b)
	}

	ts.must(200, "POST", "/api/conversations/"+id+"/events", map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "hi"}}, "run": true}, nil)
	info = ts.waitStatus(id, "finished", "error")
	var page struct {
		Items []map[string]any `json:"items"`
	}
	ts.must(200, "GET", "/api/conversations/"+id+"/events/search?limit=100", nil, &page)
	var answer string
	for _, e := range page.Items {
		if act, ok := e["action"].(map[string]any); ok && act["kind"] == "FinishAction" {
			answer, _ = act["message"].(string)
		}
	}
	if info["execution_status"] != "finished" || answer != "done" {
		b, _ := json.Marshal(page.Items)
		t.Fatalf("status %v, answer %q; events %s", info["execution_status"], answer, b)
	}
	if b, _ := os.ReadFile(peerLog); strings.Join(strings.Fields(string(b)), " ") != "start set_model big" {
		t.Errorf("the peer was asked %q, want start set_model big", b)
	}
	// As 1.58.2: the profile's agent_context has no timestamp.
	if b, _ := os.ReadFile(prompts); !strings.Contains(string(b), "hi") || strings.Contains(string(b), "CURRENT_DATETIME") {
		t.Errorf("the first prompt: %q", b)
	}
	if info["supports_runtime_model_switch"] != false {
		t.Errorf("supports_runtime_model_switch %v: PEER_NAME, not in secret_refs, reached the ACP server", info["supports_runtime_model_switch"])
	}
	if !reflect.DeepEqual(info["launched_agent_profile"], want) {
		t.Errorf("stored launched_agent_profile %v", info["launched_agent_profile"])
	}

	for _, c := range []struct{ name, want string }{
		{"codex", `{"detail":{"code":"invalid_agent_launch","message":"acp_command is required: gohands has no default launch command for acp_server='codex' (set the command that starts its ACP server)"}}`},
		{"custom", `{"detail":{"code":"invalid_agent_launch","message":"acp_command is required when acp_server='custom' — there is no default launch command to fall back to"}}`},
		{"unclosed", `{"detail":{"code":"invalid_agent_launch","message":"No closing quotation"}}`},
		{"nomcp", `{"detail":{"code":"unresolved_profile_references","dangling_llm_profile_ref":null,"dangling_mcp_server_refs":["nowhere"],"dangling_meta_profile_llm_refs":[],"dangling_meta_profile_ref":null,"message":"MCP server(s) not configured: nowhere"}}`},
	} {
		st, body := ts.do("POST", "/api/conversations", map[string]any{"agent_profile_id": list.id(c.name), "workspace": workspace})
		var got, want any
		json.Unmarshal(body, &got)
		json.Unmarshal([]byte(c.want), &want)
		if st != 422 || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %d %s", c.name, st, body)
		}
	}
	// materialize reports what the launch would say.
	var diag struct {
		Valid    bool           `json:"valid"`
		Errors   []string       `json:"errors"`
		Settings map[string]any `json:"resolved_settings"`
	}
	ts.must(200, "POST", "/api/agent-profiles/custom/materialize", nil, &diag)
	if diag.Valid || diag.Settings != nil || strings.Join(diag.Errors, "|") != "Failed to build agent settings: acp_command is required when acp_server='custom' — there is no default launch command to fall back to" {
		t.Errorf("materialize of a custom profile without acp_command: %+v", diag)
	}
	ts.must(200, "POST", "/api/agent-profiles/codex/materialize", nil, &diag)
	if diag.Valid || len(diag.Errors) != 1 || !strings.Contains(diag.Errors[0], "gohands has no default launch command for acp_server='codex'") {
		t.Errorf("materialize of a codex profile without acp_command: %+v", diag)
	}
	// The command splits as the reference's shlex.split splits it.
	ts.must(200, "POST", "/api/agent-profiles/quoted/materialize", nil, &diag)
	if b, _ := json.Marshal(diag.Settings["acp_command"]); string(b) != `["x","a\"b","c d","e f","g\\h","\\"]` {
		t.Errorf("acp_command split: %s", b)
	}
	ts.must(200, "POST", "/api/agent-profiles/peer/materialize", nil, &diag)
	if !diag.Valid || len(diag.Errors) != 0 || fmt.Sprint(diag.Settings["acp_command"]) != fmt.Sprint([]any{py, script}) {
		t.Errorf("materialize of the peer's profile: %+v", diag)
	}
}

// A start request's agent_settings of agent_kind acp builds an ACPAgent
// as 1.58.2 does (the settings' defaults for what they leave out), which
// runs a turn through the scripted ACP peer; its agent_context, with no
// timestamp, reaches the first prompt without one. Without acp_command, with
// the settings' llm, an unknown acp_server or a timeout of 0 the start is
// refused.
func TestStartFromACPAgentSettings(t *testing.T) {
	t.Parallel()
	py := testenv.Program(t, "python3")
	script, err := filepath.Abs("testdata/acp_models_peer.py")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	peerLog, prompts := filepath.Join(dir, "peer.log"), filepath.Join(dir, "prompts")
	ts := settingsServer(t, t.TempDir())
	workspace := map[string]any{"kind": "LocalWorkspace", "working_dir": t.TempDir()}
	secrets := map[string]any{}
	for k, v := range map[string]string{"PEER_LOG": peerLog, "PEER_AUTH": "1", "PEER_PROMPTS": prompts} {
		secrets[k] = map[string]any{"kind": "StaticSecret", "value": v}
	}
	settings := map[string]any{"agent_kind": "acp", "acp_server": "custom", "acp_command": []any{py, script}, "acp_model": "big",
		"acp_prompt_timeout": 120, "agent_context": map[string]any{"system_message_suffix": "Be brief.", "current_datetime": nil}}
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", map[string]any{"agent_settings": settings, "workspace": workspace, "secrets": secrets}, &info)
	id, _ := info["id"].(string)
	a, _ := info["agent"].(map[string]any)
	l, _ := a["llm"].(map[string]any)
	ctx, _ := a["agent_context"].(map[string]any)
	if a["kind"] != "ACPAgent" || fmt.Sprint(a["acp_command"]) != fmt.Sprint([]any{py, script}) || a["acp_server"] != "custom" ||
		a["acp_model"] != "big" || a["acp_prompt_timeout"] != 120.0 || a["acp_startup_timeout"] != 90.0 || l["model"] != "big" ||
		l["usage_id"] != "acp-managed" || len(anyList(a["acp_file_secrets"])) != 4 || fmt.Sprint(a["acp_args"]) != "[]" ||
		ctx == nil || ctx["system_message_suffix"] != "Be brief." || ctx["current_datetime"] != nil {
		t.Errorf("the settings' agent: %v", a)
	}
	if info["launched_agent_profile"] != nil {
		t.Errorf("launched_agent_profile %v", info["launched_agent_profile"])
	}
	ts.must(200, "POST", "/api/conversations/"+id+"/events", map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "hi"}}, "run": true}, nil)
	info = ts.waitStatus(id, "finished", "error")
	if info["execution_status"] != "finished" {
		t.Fatalf("status %v: %v", info["execution_status"], info)
	}
	if b, _ := os.ReadFile(peerLog); strings.Join(strings.Fields(string(b)), " ") != "start set_model big" {
		t.Errorf("the peer was asked %q, want start set_model big", b)
	}
	b, _ := os.ReadFile(prompts)
	if p := string(b); !strings.Contains(p, "Be brief.") || !strings.Contains(p, "hi") || strings.Contains(p, "CURRENT_DATETIME") {
		t.Errorf("the first prompt: %q", p)
	}

	for _, c := range []struct {
		name     string
		settings map[string]any
		want     string
	}{
		{"custom without command", map[string]any{"agent_kind": "acp", "acp_server": "custom"},
			`{"detail":{"code":"invalid_agent_launch","message":"ACPAgentSettings.acp_command must be set when acp_server='custom' — there is no default to fall back to"}}`},
		{"default server without command", map[string]any{"agent_kind": "acp"},
			`{"detail":{"code":"invalid_agent_launch","message":"acp_command is required: gohands has no default launch command for acp_server='claude-code' (set the command that starts its ACP server)"}}`},
		{"llm", map[string]any{"agent_kind": "acp", "acp_command": []any{"x"}, "llm": map[string]any{"model": "m"}}, "Removed agent settings: llm"},
		{"server", map[string]any{"agent_kind": "acp", "acp_command": []any{"x"}, "acp_server": "nope"}, "Input should be 'claude-code'"},
		{"timeout", map[string]any{"agent_kind": "acp", "acp_command": []any{"x"}, "acp_startup_timeout": 0}, "greater than 0"},
		{"command type", map[string]any{"agent_kind": "acp", "acp_command": "x y"}, "acp_command"},
	} {
		st, body := ts.do("POST", "/api/conversations", map[string]any{"agent_settings": c.settings, "workspace": workspace})
		var got, want any
		if json.Unmarshal([]byte(c.want), &want) == nil {
			json.Unmarshal(body, &got)
			if st != 422 || !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %d %s", c.name, st, body)
			}
		} else if st != 422 || !strings.Contains(string(body), c.want) {
			t.Errorf("%s: %d %s, want 422 with %q", c.name, st, body, c.want)
		}
	}
}

func anyList(v any) []any {
	l, _ := v.([]any)
	return l
}
