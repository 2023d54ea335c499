package agent_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/skill"
)

// writeMemFile writes body to dir/rel, making the directories.
func writeMemFile(t *testing.T, dir, rel, body string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// memoryRun runs one turn in work with the given agent_context and
// returns the system message the model received.
func memoryRun(t *testing.T, work, agentContext string) string {
	t.Helper()
	a, p := newAgent(t, llmtest.Reply{Text: "Noted."})
	a.AgentContext = json.RawMessage(agentContext)
	c, err := conversation.New(ctx, a, work, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SendMessage(ctx, event.UserMessage("hello")); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	rs := p.Requests()
	if len(rs) != 1 {
		t.Fatalf("%d requests", len(rs))
	}
	var sys []string
	for _, m := range rs[0].Messages {
		if m.Role == event.RoleSystem {
			sys = append(sys, event.TextOf(m.Content))
		}
		if m.Role == event.RoleUser && strings.Contains(event.TextOf(m.Content), "MEMORY") {
			t.Fatalf("memory in a user message: %q", event.TextOf(m.Content))
		}
	}
	return strings.Join(sys, "\n")
}

// memoryBlock returns the <MEMORY_CONTEXT> block of a system prompt, or "".
func memoryBlock(sys string) string {
	i := strings.Index(sys, "<MEMORY_CONTEXT>")
	j := strings.Index(sys, "</MEMORY_CONTEXT>")
	if i < 0 || j < i {
		return ""
	}
	return sys[i : j+len("</MEMORY_CONTEXT>")]
}

// With load_memory, the user's and the project's MEMORY.md reach the model
// where the reference puts them: in the system prompt's dynamic part, in a
// <MEMORY_CONTEXT> block after the repository context and before the
// skills list, user tier first, each under a header naming its file.
func TestMemoryReachesTheSystemPrompt(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("OH_PERSISTENCE_DIR", "")
	writeMemFile(t, home, ".openhands/memory/MEMORY.md", "\nUser prefers tabs (user-mem-51a).\n\n")
	writeMemFile(t, work, ".openhands/memory/MEMORY.md", "Build with make (proj-mem-9c2).\n")
	writeMemFile(t, work, ".openhands/memory/2026-01-02.md", "daily log, never injected (daily-3f0)\n")
	writeMemFile(t, work, "AGENTS.md", "Repo rule (repo-rule-1d4).\n")
	writeMemFile(t, work, ".agents/skills/lint/SKILL.md", "---\nname: lint\ndescription: Lints the code (skill-list-8e1).\n---\nRun the linter.\n")
	sys := memoryRun(t, work, `{"load_memory":true,"load_project_skills":true}`)
	block := memoryBlock(sys)
	want := "# User memory (~/.openhands/memory/MEMORY.md)\nUser prefers tabs (user-mem-51a).\n\n" +
		"# Project memory (.openhands/memory/MEMORY.md)\nBuild with make (proj-mem-9c2).\n</MEMORY_CONTEXT>"
	if !strings.HasSuffix(block, want) {
		t.Fatalf("memory block:\n%s\nwant it to end with:\n%s", block, want)
	}
	if strings.Contains(sys, "daily-3f0") {
		t.Fatal("a daily log reached the model")
	}
	repo, mem, list := strings.Index(sys, "repo-rule-1d4"), strings.Index(sys, "<MEMORY_CONTEXT>"), strings.Index(sys, "skill-list-8e1")
	if repo < 0 || list < 0 || !(repo < mem && mem < list) {
		t.Fatalf("order: repo context at %d, memory at %d, skills list at %d", repo, mem, list)
	}
	if !strings.Contains(sys, ".openhands/memory/") || strings.Index(sys, "MEMORY.md is") > mem {
		t.Fatal("the static prompt does not say how memory is kept")
	}
}

// Absent (or blank) memory files add no block; load_memory false reads
// nothing even when the files exist, and leaves the static prompt as it is.
func TestMemoryAbsentOrOff(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("OH_PERSISTENCE_DIR", "")
	writeMemFile(t, work, ".openhands/memory/MEMORY.md", "  \n\n")
	if sys := memoryRun(t, work, `{"load_memory":true}`); strings.Contains(sys, "MEMORY_CONTEXT") {
		t.Fatalf("absent memory added a block:\n%s", sys)
	}
	writeMemFile(t, home, ".openhands/memory/MEMORY.md", "user-mem-77b\n")
	writeMemFile(t, work, ".openhands/memory/MEMORY.md", "proj-mem-77c\n")
	sys := memoryRun(t, work, `{"load_memory":false}`)
	if strings.Contains(sys, "MEMORY_CONTEXT") || strings.Contains(sys, "mem-77") || strings.Contains(sys, ".openhands/memory/") {
		t.Fatalf("load_memory false read memory:\n%s", sys)
	}
}

// OH_PERSISTENCE_DIR moves the user tier, and the header names it.
func TestMemoryPersistenceDir(t *testing.T) {
	home, persist, work := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("OH_PERSISTENCE_DIR", persist)
	writeMemFile(t, home, ".openhands/memory/MEMORY.md", "not this one (home-mem-0a1)\n")
	writeMemFile(t, persist, "memory/MEMORY.md", "this one (persist-mem-0a2)\n")
	block := memoryBlock(memoryRun(t, work, `{"load_memory":true}`))
	want := "# User memory (" + filepath.ToSlash(persist) + "/memory/MEMORY.md)\nthis one (persist-mem-0a2)\n</MEMORY_CONTEXT>"
	if !strings.HasSuffix(block, want) || strings.Contains(block, "home-mem-0a1") {
		t.Fatalf("memory block:\n%s", block)
	}
}

// Over the budget, each tier keeps its newest lines under a truncation
// notice, the two sharing the budget; the headers are kept. The figures
// are the reference's: a 6000-character budget.
func TestMemoryBudget(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("OH_PERSISTENCE_DIR", "")
	var user, proj strings.Builder
	for i := range 400 {
		user.WriteString("user fact number " + string(rune('a'+i%26)) + " padded out to a line\n")
	}
	for i := range 20 {
		proj.WriteString("project fact " + string(rune('a'+i)) + "\n")
	}
	writeMemFile(t, home, ".openhands/memory/MEMORY.md", user.String()+"newest user line (tail-u9)\n")
	writeMemFile(t, work, ".openhands/memory/MEMORY.md", proj.String())
	got, _ := skill.LoadMemory(work, filepath.Join(home, ".openhands"), 0)
	if n := len([]rune(got)); n > skill.MemoryBudget || n < skill.MemoryBudget-60 {
		t.Fatalf("memory is %d characters, budget %d", n, skill.MemoryBudget)
	}
	if !strings.HasPrefix(got, "# User memory (~/.openhands/memory/MEMORY.md)\n[earlier memory truncated]\n") {
		t.Fatalf("user tier not cut from the top: %.200q", got)
	}
	// The short project tier is whole: its unused share went to the user tier.
	if !strings.HasSuffix(got, "(tail-u9)\n\n# Project memory (.openhands/memory/MEMORY.md)\n"+strings.TrimSpace(proj.String())) {
		t.Fatalf("tiers: %.300q", got[len(got)-400:])
	}
	block := memoryBlock(memoryRun(t, work, `{"load_memory":true}`))
	if !strings.Contains(block, got) {
		t.Fatal("the model did not get the budgeted text")
	}
}
