package plugin_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gohands/gohands/internal/refenv"
	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/plugin"
	"github.com/gohands/gohands/tools/task"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The sub-agents of plugins in both layouts, read by 1.58.2's
// Plugin.load and by Load (AgentFiles parsed by package tools/task), are
// the same definitions in the same order: top-level *.md of agents/ (of
// dev.openhands/agents/ in the Agent Plugins layout), README.md and
// sub-directories left out.
func TestAgentsMatchReference(t *testing.T) {
	py := testenv.Reference158Python(t)
	root := t.TempDir()
	cc := filepath.Join(root, "cc")
	writeFiles(t, cc, map[string]string{
		".plugin/plugin.json": `{"name": "cc"}`,
		"agents/rev.md":       "---\nname: reviewer\ndescription: Reviews code. <example>review x</example>\ntools: [terminal, file_editor]\nmax_iteration_per_run: 7\ncolor: blue\nextra_key: 1\n---\nYou review.\n",
		"agents/plain.md":     "plain body\n",
		"agents/README.md":    "not an agent",
		"agents/sub/x.md":     "nested, not an agent",
		"agents/notes.txt":    "not Markdown",
	})
	ap := filepath.Join(root, "ap")
	writeFiles(t, ap, map[string]string{
		"plugin.json":                      `{"$schema": "` + plugin.AgentPluginsSchema + `", "name": "ap", "version": "0.1.0"}`,
		"dev.openhands/agents/helper.md":   "---\ndescription: AP agent\nmodel: inherit\npermission_mode: never_confirm\n---\nHi.\n",
		"agents/ignored.md":                "only dev.openhands/agents counts here",
		"dev.openhands/agents/Readme.MD":   "---\ndescription: a readme spelled otherwise is an agent\n---\nR.",
		"dev.openhands/agents/budget.md":   "---\nmax_budget_per_run: 0.5\nskills: []\n---\nB.",
		"dev.openhands/commands/go.md":     "Go.",
		"dev.openhands/hooks/hooks.json":   `{}`,
		"skills/s/SKILL.md":                "---\ndescription: s\n---\nS.",
		"dev.openhands/agents/sub/deep.md": "nested",
	})
	script := `import json, sys
from openhands.sdk.plugin import Plugin
print(json.dumps([[a.model_dump(mode="json") for a in Plugin.load(d).agents] for d in sys.argv[1:]]))`
	home := t.TempDir()
	t.Cleanup(func() { refenv.Cleanup(home) })
	cmd := exec.CommandContext(t.Context(), py, "-c", script, cc, ap)
	cmd.Env = refenv.Env(home, "OH_PERSISTENCE_DIR=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reference: %v", err)
	}
	var want [][]any
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatalf("reference output: %v\n%s", err, out)
	}
	var got [][]any
	for _, d := range []string{cc, ap} {
		p, err := plugin.Load(d)
		if err != nil {
			t.Fatal(err)
		}
		defs := []any{}
		for _, f := range p.AgentFiles {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			def, err := task.ParseDefinition(f, data)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(def)
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatal(err)
			}
			defs = append(defs, v)
		}
		got = append(got, defs)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("plugin agents differ from 1.58.2's (-reference +ours):\n%s", diff)
	}
}
