package task_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/tools/task"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestParseDefinition(t *testing.T) {
	d, err := task.ParseDefinition("/p/reviewer.md", []byte(`---
description: Reviews code. <example>review my diff</example>
tools: [terminal, file_editor]
skills: a, b
permission_mode: Always_Confirm
max_iteration_per_run: "7"
max_budget_per_run: 0.5
mcp_servers:
  fetch: {command: uvx, args: [mcp-server-fetch]}
condenser: none
color: blue
team: core
---

You review code.
`))
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "reviewer" || d.Description == "" || !slices.Equal(d.Tools, []string{"terminal", "file_editor"}) ||
		!slices.Equal(d.Skills, []string{"a", "b"}) || *d.PermissionMode != task.AlwaysConfirm ||
		*d.MaxIterationPerRun != 7 || *d.MaxBudgetPerRun != 0.5 || d.SystemPrompt != "You review code." ||
		string(d.Condenser) != `{"kind":"NoOpCondenser"}` || *d.Color != "blue" || d.Metadata["team"] != "core" ||
		!slices.Equal(d.WhenToUseExamples, []string{"review my diff"}) || d.Model != "inherit" {
		t.Errorf("%+v", d)
	}
	if _, ok := d.MCPConfig["fetch"]; !ok {
		t.Errorf("mcp servers %v", d.MCPConfig)
	}
	for _, bad := range []string{
		"---\npermission_mode: sometimes\n---\n",
		"---\nmax_iteration_per_run: 0\n---\n",
		"---\nmax_budget_per_run: -1\n---\n",
		"---\ncondenser: maybe\n---\n",
		"---\nmcp_config: [1]\n---\n",
		"---\n: [\n---\n",
	} {
		if _, err := task.ParseDefinition("/p/x.md", []byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		} else if !strings.Contains(err.Error(), "/p/x.md") {
			t.Errorf("error %q does not name the file", err)
		}
	}
}

// The project's definitions win over the user's, .agents over .openhands,
// and files over the built-ins; registered ones win over all.
func TestAvailable(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(ws, ".agents/agents/a.md"), "---\ndescription: project .agents\n---\n")
	writeFile(t, filepath.Join(ws, ".openhands/agents/a.md"), "---\ndescription: project .openhands\n---\n")
	writeFile(t, filepath.Join(ws, ".openhands/agents/README.md"), "not an agent")
	writeFile(t, filepath.Join(ws, ".openhands/agents/bash-runner.md"), "---\ndescription: my own bash runner\n---\n")
	writeFile(t, filepath.Join(home, ".openhands/agents/a.md"), "---\ndescription: user\n---\n")
	writeFile(t, filepath.Join(home, ".openhands/agents/u.md"), "---\ndescription: user only\n---\n")
	writeFile(t, filepath.Join(home, ".openhands/agents/broken.md"), "---\npermission_mode: x\n---\n")
	if err := task.Register(&task.Definition{Name: "u", Description: "registered"}); err != nil {
		t.Fatal(err)
	}
	defer task.Unregister("u")
	if err := task.Register(&task.Definition{Name: "u"}); err == nil {
		t.Error("registered a name twice")
	}
	defs, errs := task.Available(ws, home)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "broken.md") {
		t.Errorf("errors %v", errs)
	}
	got := map[string]string{}
	var names []string
	for _, d := range defs {
		got[d.Name] = d.Description + " @" + *d.Level
		names = append(names, d.Name)
	}
	want := map[string]string{
		"a":           "project .agents @project",
		"bash-runner": "my own bash runner @project",
		"u":           "registered @programmatic",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if !strings.HasSuffix(got["general-purpose"], "@builtin") || !strings.HasSuffix(got["code-explorer"], "@builtin") {
		t.Errorf("built-ins: %v", got)
	}
	if !slices.IsSorted(names) {
		t.Errorf("not sorted: %v", names)
	}
}

func TestBuiltins(t *testing.T) {
	var names []string
	for _, d := range task.Builtins() {
		names = append(names, d.Name)
		if d.Description == "" || d.SystemPrompt == "" || len(d.Tools) == 0 {
			t.Errorf("%+v", d)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"bash-runner", "code-explorer", "general-purpose"}) {
		t.Errorf("built-ins %v", names)
	}
}

// A project's definition runs with its own tools, its prompt in the system
// prompt.
func TestProjectDefinitionRuns(t *testing.T) {
	r := newRouter(t, nil)
	parent, ws := newParent(t, parentAgent(r))
	writeFile(t, filepath.Join(ws, ".openhands/agents/reviewer.md"), "---\nname: reviewer\ndescription: Reviews.\ntools: [terminal]\n---\nYou are REVIEWER-PROMPT.\n")
	// The tool lists the definitions of the conversation's workspace when
	// the agent starts; the file is written before the first message.
	r.models = map[string]*llm.LLM{
		"":       scripted(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("t1", "task", map[string]any{"prompt": "TASK-A review", "subagent_type": "reviewer"})}}, llmtest.Reply{Text: "ok"}),
		"TASK-A": scripted(t, llmtest.Reply{Text: "LGTM"}),
	}
	runTurn(t, parent, "review")
	o := observations(t, parent)["t1"]
	if o == nil || o.IsError || text(o) != "LGTM" || o.Subagent != "reviewer" {
		t.Fatalf("%+v", o)
	}
	req := r.requests("TASK-A")[0]
	if sys := event.TextOf(req[0].Content); !strings.Contains(sys, "You are REVIEWER-PROMPT.") {
		t.Errorf("system prompt lacks the definition's body")
	}
}
