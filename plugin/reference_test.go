package plugin

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gohands/gohands/internal/refenv"
	"github.com/gohands/gohands/internal/testenv"
)

// The same plugin directories loaded by 1.58.2 and by Load give the same
// manifest, skills (commands included, every field), MCP servers and
// hooks; and the same ambient plugins are found for a user and a project.
func TestLoadMatchesReference(t *testing.T) {
	py := testenv.Reference158Python(t)
	root := t.TempDir()
	claude := filepath.Join(root, "city-weather")
	write(t, claude, samplePlugin)
	ap := filepath.Join(root, "pkg")
	write(t, ap, map[string]string{
		"plugin.json":                    `{"$schema": "` + AgentPluginsSchema + `", "name": "pkg", "version": "0.1.0", "description": "d", "extensions": {"dev.openhands": {"entry_command": "go"}}}`,
		"skills/s/SKILL.md":              "---\ndescription: an s\n---\nS.",
		"dev.openhands/commands/go.md":   "---\ndescription: Go now\n---\nGo.",
		"dev.openhands/hooks/hooks.json": `{"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}`,
	})
	solo := filepath.Join(root, "solo")
	write(t, solo, map[string]string{"SKILL.md": "---\ndescription: one skill\ntriggers: [solo]\n---\nDo it.", ".mcp.json": `{"mcpServers": {"s": {"command": "x"}}}`})
	home, work := t.TempDir(), t.TempDir()
	write(t, filepath.Join(home, ".openhands/plugins/shared"), map[string]string{".plugin/plugin.json": `{"name": "shared"}`, "skills/u.md": "user"})
	write(t, filepath.Join(home, ".agents/plugins/mine"), map[string]string{"skills/m.md": "mine"})
	write(t, filepath.Join(work, ".openhands/plugins/shared"), map[string]string{".plugin/plugin.json": `{"name": "shared"}`, "skills/p.md": "project"})

	script := `import json, sys
from openhands.sdk.plugin import Plugin
from openhands.sdk.plugin.discovery import load_available_plugins
def dump(p):
    return {"manifest": p.manifest.model_dump(mode="json"),
            "skills": [s.model_dump(mode="json") for s in p.get_all_skills()],
            "mcp": sorted(p.mcp_config),
            "hooks": {k: len(v) for k, v in p.hooks.model_dump(mode="json").items()} if p.hooks else None}
out = [dump(Plugin.load(d)) for d in sys.argv[2:]]
out.append([dump(p) for p in load_available_plugins(sys.argv[1], include_user=True, include_project=True).values()])
print(json.dumps(out))`
	cmd := exec.CommandContext(t.Context(), py, "-c", script, work, claude, ap, solo)
	t.Cleanup(func() { refenv.Cleanup(home) })
	cmd.Env = refenv.Env(home, "OH_PERSISTENCE_DIR=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reference: %v", err)
	}
	var want []any
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatalf("reference output: %v\n%s", err, out)
	}
	t.Setenv("OH_PERSISTENCE_DIR", "")
	dump := func(p *Plugin) any {
		hooks := map[string]int(nil)
		if p.Hooks != nil {
			hooks = map[string]int{"pre_tool_use": len(p.Hooks.PreToolUse), "post_tool_use": len(p.Hooks.PostToolUse),
				"user_prompt_submit": len(p.Hooks.UserPromptSubmit), "session_start": len(p.Hooks.SessionStart),
				"session_end": len(p.Hooks.SessionEnd), "stop": len(p.Hooks.Stop)}
		}
		mcp := []string{}
		for k := range p.MCPConfig {
			mcp = append(mcp, k)
		}
		v := map[string]any{"manifest": p.Manifest, "skills": p.AllSkills(), "mcp": mcp, "hooks": hooks}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var a any
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	var got []any
	for _, d := range []string{claude, ap, solo} {
		p, err := Load(d)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, dump(p))
	}
	amb, warns := Ambient(work, home)
	if len(warns) != 0 {
		t.Fatal(warns)
	}
	var ambient []any
	for _, p := range amb {
		ambient = append(ambient, dump(p))
	}
	got = append(got, ambient)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("plugins differ from 1.58.2's (-reference +ours):\n%s", diff)
	}
}
