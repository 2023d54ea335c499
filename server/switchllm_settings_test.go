package server_test

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/gohands/gohands/internal/refenv"
	"github.com/gohands/gohands/internal/testenv"
)

// The switch_llm built-in through agent_settings, as the reference 1.58.2
// exposes it: with its default tools, and with given tools only when they
// name it (by tool or class name); the other built-ins named in tools go
// to include_default_tools too. The retired enable_switch_llm_tool, which
// 1.58.2 refuses in a request, is read as 1.58.2 folds a stored one into
// tools. Each payload starts a conversation here; the reference builds its
// agent from the same payload (one process for all).
func TestSwitchLLMSettingsMatchReference(t *testing.T) {
	py := testenv.Reference158Python(t)
	llmJSON := map[string]any{"model": "openai/gpt-4o", "api_key": "sk-test"}
	tools := func(names ...string) []any {
		out := []any{}
		for _, n := range names {
			out = append(out, map[string]any{"name": n})
		}
		return out
	}
	no, yes := false, true
	cases := []struct {
		name   string
		tools  []any // nil: absent
		toggle *bool // enable_switch_llm_tool; nil: absent
	}{
		{"defaults", nil, nil},
		{"tools without it", tools("terminal"), nil},
		{"tools naming it", tools("terminal", "switch_llm"), nil},
		{"by class name", tools("file_editor", "SwitchLLMTool"), nil},
		{"named twice", tools("switch_llm", "switch_llm"), nil},
		{"no tools", tools(), nil},
		{"other built-ins", tools("finish", "think", "invoke_skill", "inspect_image_with_vision"), nil},
		{"retired off", nil, &no},
		{"retired on", nil, &yes},
		{"retired off, tools naming it", tools("terminal", "switch_llm"), &no},
		{"retired on, tools", tools("terminal"), &yes},
	}
	var payloads []map[string]any
	for _, c := range cases {
		p := map[string]any{"llm": llmJSON}
		if c.tools != nil {
			p["tools"] = c.tools
		}
		if c.toggle != nil {
			p["enable_switch_llm_tool"] = *c.toggle
		}
		payloads = append(payloads, p)
	}
	arg, err := json.Marshal(payloads)
	if err != nil {
		t.Fatal(err)
	}
	// One line per payload: the tool names and include_default_tools of the
	// reference's agent. A payload with the retired switch is folded as
	// 1.58.2 migrates stored settings (without its browser, which gohands
	// adds only when asked).
	script := `import json, sys
from openhands.sdk.settings.model import OpenHandsAgentSettings
from openhands.sdk.tool.defaults import fold_retired_tool_switches
for p in json.loads(sys.argv[1]):
    if "enable_switch_llm_tool" in p:
        p = fold_retired_tool_switches(p, enable_browser=False)
    a = OpenHandsAgentSettings.model_validate(p).create_agent().model_dump(mode="json")
    print(json.dumps({"tools": [t["name"] for t in a["tools"]], "builtins": a["include_default_tools"]}))`
	cmd := exec.CommandContext(t.Context(), py, "-c", script, string(arg))
	home := t.TempDir()
	t.Cleanup(func() { refenv.Cleanup(home) })
	cmd.Env = refenv.Env(home)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("reference: %v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("reference printed %d lines for %d payloads:\n%s", len(lines), len(cases), out)
	}

	ts := newTestServer(t, nil)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var want struct{ Tools, Builtins []string }
			if err := json.Unmarshal([]byte(lines[i]), &want); err != nil {
				t.Fatal(err)
			}
			var info struct {
				Agent struct {
					Tools []struct {
						Name string `json:"name"`
					} `json:"tools"`
					Builtins []string `json:"include_default_tools"`
				} `json:"agent"`
			}
			ts.on(t).must(201, "POST", "/api/conversations", map[string]any{
				"agent_settings": payloads[i],
				"workspace":      map[string]any{"working_dir": t.TempDir(), "kind": "LocalWorkspace"},
			}, &info)
			var got []string
			for _, tl := range info.Agent.Tools {
				got = append(got, tl.Name)
			}
			if !slices.Equal(got, want.Tools) || !slices.Equal(info.Agent.Builtins, want.Builtins) {
				t.Errorf("tools %v, built-ins %v; the reference's %v, %v", got, info.Agent.Builtins, want.Tools, want.Builtins)
			}
			if want := slices.Contains(want.Builtins, "SwitchLLMTool"); want != slices.Contains(info.Agent.Builtins, "SwitchLLMTool") {
				t.Errorf("switch_llm offered: %v, want %v", !want, want)
			}
		})
	}
}
