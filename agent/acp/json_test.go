package acp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gohands/gohands/agent/acp"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/tool"
)

// refAgent is the reference 1.58.2's ACPAgent(acp_command=["node","x.js"],
// acp_model="m") as model_dump_json writes it, without its llm.
const refAgent = `{"tools":[],"mcp_config":{},"filter_tools_regex":null,"include_default_tools":[],
"agent_context":null,"system_prompt":null,"system_prompt_filename":"system_prompt.j2",
"security_policy_filename":"security_policy.j2","system_prompt_kwargs":{},"condenser":null,"critic":null,
"tool_concurrency_limit":1,"acp_command":["node","x.js"],"acp_server":null,"acp_args":[],
"acp_session_mode":null,"acp_prompt_timeout":1800.0,"acp_startup_timeout":90.0,"acp_model":"m",
"acp_resume_session_id":null,"acp_file_secrets":[{"secret_name":"CODEX_AUTH_JSON","filename":"auth.json",
"env_var":"CODEX_HOME","subdir":"codex","env_points_to":"dir","warn_if_unset":[]},
{"secret_name":"GOOGLE_APPLICATION_CREDENTIALS_JSON","filename":"gcloud-credentials.json",
"env_var":"GOOGLE_APPLICATION_CREDENTIALS","subdir":"gemini-cli","env_points_to":"file",
"warn_if_unset":["GOOGLE_CLOUD_PROJECT","GOOGLE_CLOUD_LOCATION"]},
{"secret_name":"KIMI_CODE_CONFIG_TOML","filename":"config.toml","env_var":"KIMI_CODE_HOME","subdir":"kimi-code",
"env_points_to":"dir","warn_if_unset":[]},{"secret_name":"PI_AUTH_JSON","filename":"auth.json",
"env_var":"PI_CODING_AGENT_DIR","subdir":"pi","env_points_to":"dir","warn_if_unset":[]}],"acp_isolate_data_dir":false,"kind":"ACPAgent"}`

// gohands writes an ACPAgent as the reference does, and reads the
// reference's.
func TestJSONMatchesReference(t *testing.T) {
	a := acp.New("node", "x.js")
	m := "m"
	a.Model = &m
	got, err := event.MarshalKinded(a)
	if err != nil {
		t.Fatal(err)
	}
	var g, w map[string]any
	json.Unmarshal(got, &g)
	json.Unmarshal([]byte(refAgent), &w)
	llm, _ := g["llm"].(map[string]any)
	if llm["usage_id"] != acp.SentinelUsageID {
		t.Errorf("llm.usage_id %v", llm["usage_id"])
	}
	delete(g, "llm")
	if d := cmp.Diff(w, g); d != "" {
		t.Errorf("JSON differs from the reference (-ref +gohands):\n%s", d)
	}
	v, err := event.DecodeKinded[any]([]byte(refAgent))
	if err != nil {
		t.Fatal(err)
	}
	b, ok := v.(*acp.Agent)
	if !ok || strings.Join(b.Command, " ") != "node x.js" || b.PromptTimeout != 1800 || *b.Model != "m" {
		t.Fatalf("decoded %#v", v)
	}
	if err := b.Validate(); err != nil {
		t.Fatal(err)
	}
}

// The resume session id is a bearer token: redacted unless exposed.
func TestResumeSessionIDIsSecret(t *testing.T) {
	a := acp.New("x")
	a.ResumeSessionID = secret.New("sess-123")
	b, _ := json.Marshal(a)
	if strings.Contains(string(b), "sess-123") {
		t.Fatalf("session id in %s", b)
	}
	exposed, err := a.MapSecrets(func(s secret.String) (secret.String, error) { return s.Expose(), nil })
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(exposed)
	if !strings.Contains(string(b), `"acp_resume_session_id":"sess-123"`) {
		t.Fatalf("exposed: %s", b)
	}
}

func TestValidateRejects(t *testing.T) {
	for name, mut := range map[string]func(*acp.Agent){
		"no command":    func(a *acp.Agent) { a.Command = nil },
		"tools":         func(a *acp.Agent) { a.Tools = []tool.Spec{{Name: "terminal"}} },
		"condenser":     func(a *acp.Agent) { a.Condenser = json.RawMessage(`{"kind":"NoOpCondenser"}`) },
		"context field": func(a *acp.Agent) { a.AgentContext = json.RawMessage(`{"skills":[],"bogus":1}`) },
		"timeout":       func(a *acp.Agent) { a.PromptTimeout = 0 },
	} {
		a := acp.New("x")
		mut(a)
		if err := a.Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	a := acp.New("x")
	a.AgentContext = json.RawMessage(`{"skills":[],"system_message_suffix":"be brief","current_datetime":"2026-01-01"}`)
	if err := a.Validate(); err != nil {
		t.Errorf("compatible context: %v", err)
	}
}
