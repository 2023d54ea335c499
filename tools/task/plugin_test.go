package task_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/plugin"
	"github.com/gohands/gohands/tools/task"
)

// A conversation whose agent has a plugin with a sub-agent runs that
// sub-agent through the task tool: the tool lists it, its prompt reaches
// the sub-agent's system prompt, and it wins over a project definition of
// the same name, as 1.58.2 ranks plugin agents.
func TestPluginSubAgent(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		".plugin/plugin.json":  `{"name": "helpers"}`,
		"agents/plug.md":       "---\nname: plug-helper\ndescription: Answers from the plugin.\ntools: []\n---\nYou are PLUGMARK.",
		"agents/README.md":     "---\nname: readme-agent\n---\nnot an agent",
		"agents/other/deep.md": "---\nname: deep-agent\n---\nnot an agent",
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := plugin.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	set := &plugin.Set{}
	set.Add(p)

	r := newRouter(t, nil)
	a, err := parentAgent(r).WithPlugins(set)
	if err != nil {
		t.Fatal(err)
	}
	parent, ws := newParent(t, a)
	project := filepath.Join(ws, ".agents", "agents")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, "plug.md"), []byte("---\nname: plug-helper\n---\nYou are PROJECTMARK."), 0o644); err != nil {
		t.Fatal(err)
	}
	r.models = map[string]*llm.LLM{
		"": scripted(t,
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("t1", "task", map[string]any{"prompt": "SUB: say hi", "subagent_type": "plug-helper"})}},
			llmtest.Reply{Text: "done"},
		),
		"SUB": scripted(t, llmtest.Reply{Text: "hi from the plugin"}),
	}
	runTurn(t, parent, "go")

	if o := observations(t, parent)["t1"]; o == nil || o.IsError || text(o) != "hi from the plugin" {
		t.Fatalf("task observation: %+v", o)
	}
	reqs := r.requests("SUB")
	if len(reqs) != 1 || len(reqs[0]) == 0 || reqs[0][0].Role != event.RoleSystem {
		t.Fatalf("sub-agent requests: %v", reqs)
	}
	sys := event.TextOf(reqs[0][0].Content)
	if !strings.Contains(sys, "PLUGMARK") || strings.Contains(sys, "PROJECTMARK") {
		t.Errorf("the sub-agent's system prompt is not the plugin's:\n%s", sys)
	}
	tl := task.New(&task.Options{WorkingDir: ws, Home: t.TempDir(), PluginFiles: set.AgentFiles})
	defer tl.Close()
	desc := tl.Description()
	if !strings.Contains(desc, "- plug-helper: Answers from the plugin.") || strings.Contains(desc, "readme-agent") || strings.Contains(desc, "deep-agent") {
		t.Errorf("task tool description:\n%s", desc)
	}
}

// A plugin's sub-agent named as a built-in does not replace it (1.58.2's
// agent server registers the built-ins first); its others are offered.
func TestPluginSubAgentBuiltinName(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"explorer.md": "---\nname: code-explorer\ndescription: PLUGIN-EXPLORER\n---\nplugin's",
		"other.md":    "---\nname: plug-other\ndescription: PLUGIN-OTHER\n---\nplugin's",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tl := task.New(&task.Options{WorkingDir: t.TempDir(), Home: t.TempDir(), PluginFiles: []string{filepath.Join(dir, "explorer.md"), filepath.Join(dir, "other.md")}})
	defer tl.Close()
	desc := tl.Description()
	if strings.Contains(desc, "PLUGIN-EXPLORER") || !strings.Contains(desc, "- code-explorer:") || !strings.Contains(desc, "- plug-other: PLUGIN-OTHER") {
		t.Errorf("task tool description:\n%s", desc)
	}
}
