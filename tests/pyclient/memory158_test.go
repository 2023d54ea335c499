package pyclient_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
)

// TestMemory158 starts a conversation with agent_context.load_memory on a
// reference 1.58.2 server and on gohands serve, each with the same user
// memory (~/.openhands/memory/MEMORY.md, over the budget) and the same
// workspace (a project MEMORY.md, an AGENTS.md, a skill), and compares what
// the scripted model receives: the same memory text, cut the same way, in
// the system message, after the repository's context and before the list
// of skills. The wrappers around it are each server's own words.
func TestMemory158(t *testing.T) {
	t.Parallel()
	py := testenv.Reference158Python(t)

	var user, project strings.Builder
	for i := range 220 {
		fmt.Fprintf(&user, "- user fact %d: prefers tabs in file %03d.go\n", i, i)
	}
	for i := range 30 {
		fmt.Fprintf(&project, "- project fact %d: make check-%d before pushing\n", i, i)
	}
	// Each server gets its own home and workspace, with the same files.
	setup := func() (home, work string) {
		home, work = t.TempDir(), t.TempDir()
		writeFile(t, filepath.Join(home, ".openhands", "memory", "MEMORY.md"), user.String())
		writeFile(t, filepath.Join(work, ".openhands", "memory", "MEMORY.md"), "\n"+project.String()+"\n")
		writeFile(t, filepath.Join(work, "AGENTS.md"), "Run gofmt before committing.\n")
		writeFile(t, filepath.Join(work, ".openhands", "skills", "release-notes", "SKILL.md"),
			"---\nname: release-notes\ndescription: Write release notes from the git log.\n---\nList the commits since the last tag.\n")
		return home, work
	}

	// The agent's first step of each conversation, by its task.
	steps := map[string]chan llmtest.Request{"#memory-ref": make(chan llmtest.Request, 1), "#memory-go": make(chan llmtest.Request, 1)}
	m := llmtest.NewResponder(t, func(r llmtest.Request) (llmtest.Reply, error) {
		if _, ok := r.Body["tools"]; !ok { // a title, or another side call
			return llmtest.Reply{Text: "Memory"}, nil
		}
		for task, ch := range steps {
			if strings.Contains(string(r.RawBody), task) {
				select {
				case ch <- r:
				default:
				}
			}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"noted"}`}}}, nil
	}, nil)

	start := func(srv *server, work, task string) string {
		body := map[string]any{
			"agent": map[string]any{
				"kind": "Agent",
				"llm": map[string]any{
					"model": "openai/gpt-4o", "base_url": m.URL + "/v1",
					"api_key": "scripted", "usage_id": "agent", "num_retries": 0,
				},
				"tools":                 []any{},
				"include_default_tools": []any{"FinishTool"},
				"agent_context":         map[string]any{"load_memory": true, "load_project_skills": true},
			},
			"workspace":       map[string]any{"kind": "LocalWorkspace", "working_dir": work},
			"initial_message": map[string]any{"role": "user", "run": true, "content": []any{map[string]any{"type": "text", "text": task}}},
		}
		c := &apiClient{base: srv.URL, http: &http.Client{Timeout: 5 * time.Minute}}
		id, err := c.create(t.Context(), body)
		if err != nil {
			t.Fatalf("%s: %v", srv.name, err)
		}
		return id
	}
	// The reference is slow to import at load; the bound is a hang guard.
	wait := func(name, task string) llmtest.Request {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
		defer cancel()
		select {
		case r := <-steps[task]:
			return r
		case <-ctx.Done():
			t.Fatalf("%s: the model got no step", name)
			return llmtest.Request{}
		}
	}

	refHome, refWork := setup()
	ref := startReferenceServer(t, py, "HOME="+refHome, "OH_PERSISTENCE_DIR=")
	goHome, goWork := setup()
	gh := startGohandsServer(t, "HOME="+goHome, "OH_PERSISTENCE_DIR=", "XDG_CONFIG_HOME=")
	refID := start(ref, refWork, "#memory-ref")
	goID := start(gh, goWork, "#memory-go")
	refSys, refUser := systemAndUser(t, wait("reference", "#memory-ref"))
	goSys, goUser := systemAndUser(t, wait("gohands", "#memory-go"))

	// What the first run stored in the agent: the workspace's skills (as
	// 1.58.2 stores them before the first step), and no memory_context
	// (1.58.2 excludes it from its JSON).
	refStored, goStored := storedContext(t, ref, refID), storedContext(t, gh, goID)
	if refStored != goStored || !strings.Contains(refStored, "release-notes") {
		t.Errorf("stored agent_context: reference %s, gohands %s", refStored, goStored)
	}

	refMem, goMem := memoryText(refSys), memoryText(goSys)
	if refMem == "" {
		t.Fatalf("the reference sent no memory; its system prompt:\n%s", refSys)
	}
	// A check of the test: the user's index was cut, the newest facts kept.
	for _, want := range []string{"# User memory (~/.openhands/memory/MEMORY.md)\n[earlier memory truncated]\n",
		"user fact 219:", "# Project memory (.openhands/memory/MEMORY.md)\n- project fact 0:"} {
		if !strings.Contains(refMem, want) {
			t.Errorf("the reference's memory lacks %q:\n%s", want, refMem)
		}
	}
	if goMem != refMem {
		g, r := strings.Split(goMem, "\n"), strings.Split(refMem, "\n")
		i := 0
		for i < min(len(g), len(r)) && g[i] == r[i] {
			i++
		}
		t.Errorf("the memory gohands sent differs from the reference's at line %d (%d lines, the reference's %d):\ngohands:   %q\nreference: %q",
			i+1, len(g), len(r), strings.Join(g[i:min(i+2, len(g))], "\n"), strings.Join(r[i:min(i+2, len(r))], "\n"))
	}
	for name, u := range map[string]string{"reference": refUser, "gohands": goUser} {
		if strings.Contains(u, "fact") {
			t.Errorf("%s sent memory in a user message", name)
		}
	}
	// Where it is: the same order of the blocks the two prompts share.
	refOrder, goOrder := blockOrder(refSys), blockOrder(goSys)
	if refOrder != goOrder || refOrder != "REPO_CONTEXT MEMORY_CONTEXT SKILLS" {
		t.Errorf("blocks around the memory: reference %q, gohands %q", refOrder, goOrder)
	}
	// Both tell the model where to keep its memory.
	for name, s := range map[string]string{"reference": refSys, "gohands": goSys} {
		if !strings.Contains(s, ".openhands/memory/") || !strings.Contains(s, "YYYY-MM-DD.md") {
			t.Errorf("%s's system prompt has no memory guidance", name)
		}
	}
}

// systemAndUser returns the text of a Chat Completions request's system
// messages and of its user messages.
func systemAndUser(t *testing.T, r llmtest.Request) (system, user string) {
	t.Helper()
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if err := r.Decode(&body); err != nil {
		t.Fatal(err)
	}
	text := func(c any) string {
		switch c := c.(type) {
		case string:
			return c
		case []any:
			var parts []string
			for _, p := range c {
				if p, ok := p.(map[string]any); ok {
					s, _ := p["text"].(string)
					parts = append(parts, s)
				}
			}
			return strings.Join(parts, "\n")
		}
		return ""
	}
	var sys, usr []string
	for _, m := range body.Messages {
		switch m.Role {
		case "system":
			sys = append(sys, text(m.Content))
		case "user":
			usr = append(usr, text(m.Content))
		}
	}
	return strings.Join(sys, "\n"), strings.Join(usr, "\n")
}

// memoryText is the memory in a system prompt's MEMORY_CONTEXT block,
// from its first tier's header to the block's end.
func memoryText(system string) string {
	_, block, ok := strings.Cut(system, "<MEMORY_CONTEXT>")
	if !ok {
		return ""
	}
	block, _, _ = strings.Cut(block, "\n</MEMORY_CONTEXT>")
	i := strings.Index(block, "\n# User memory (")
	if i < 0 {
		i = strings.Index(block, "\n# Project memory (")
	}
	if i < 0 {
		return ""
	}
	return block[i+1:]
}

var blockTag = regexp.MustCompile(`(?m)^<(REPO_CONTEXT|MEMORY_CONTEXT|SKILLS)>$`)

// blockOrder lists the blocks of a system prompt around the memory, in
// their order.
func blockOrder(system string) string {
	var names []string
	for _, m := range blockTag.FindAllStringSubmatch(system, -1) {
		names = append(names, m[1])
	}
	return strings.Join(names, " ")
}

// writeFile writes body to path, making its directory.
func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// storedContext sums up the agent_context a server stores for a
// conversation: its skills' names, sorted, and whether it has a
// memory_context.
func storedContext(t *testing.T, srv *server, id string) string {
	t.Helper()
	c := &apiClient{base: srv.URL, http: &http.Client{Timeout: time.Minute}}
	var info map[string]any
	if _, err := c.do(t.Context(), "GET", "/api/conversations/"+id+"?include_skills=true", nil, &info); err != nil {
		t.Fatalf("%s: %v", srv.name, err)
	}
	agent, _ := info["agent"].(map[string]any)
	actx, _ := agent["agent_context"].(map[string]any)
	var names []string
	for _, s := range anyList(actx["skills"]) {
		name, _ := s.(map[string]any)["name"].(string)
		names = append(names, name)
	}
	sort.Strings(names)
	_, mem := actx["memory_context"]
	return fmt.Sprintf("skills %v, memory_context %v", names, mem)
}
