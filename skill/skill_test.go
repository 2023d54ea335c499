package skill

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// write creates files under root; a path ending in "@" + target is a
// symlink to target.
func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "@link:"); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func names(skills []Skill) []string {
	var out []string
	for _, s := range skills {
		out = append(out, s.Name)
	}
	return out
}

func byName(t *testing.T, skills []Skill, name string) Skill {
	t.Helper()
	for _, s := range skills {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no skill %q among %v", name, names(skills))
	return Skill{}
}

// TestReferenceJSON decodes an AgentContext the Python reference wrote
// (testdata/agent_context.reference.json) and encodes it back identically.
func TestReferenceJSON(t *testing.T) {
	data, err := os.ReadFile("testdata/agent_context.reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var c AgentContext
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Skills) != 4 || c.Skills[1].Trigger.Type != TriggerKeyword || c.Skills[3].Trigger.Paths[0] != "**/*.go" {
		t.Fatalf("decoded %+v", c)
	}
	if !c.Skills[3].DisableModelInvocation || c.Skills[2].Inputs[0].Name != "env" || c.CurrentDatetime != "2026-01-02T03:04" {
		t.Errorf("decoded %+v", c)
	}
	got, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := json.Compact(&want, data); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.String(), string(got)); diff != "" {
		t.Errorf("re-encoded differs (-reference +ours):\n%s", diff)
	}
}

func TestJSONErrors(t *testing.T) {
	for _, in := range []string{
		`{"name":"x"}`,
		`{"name":"x","content":"y","trigger":{"type":"keyword"}}`,
		`{"name":"x","content":"y","trigger":{"type":"magic","keywords":[]}}`,
	} {
		var s Skill
		if err := json.Unmarshal([]byte(in), &s); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
	var c AgentContext
	if err := json.Unmarshal([]byte(`{"skills":[{"name":"a","content":""},{"name":"a","content":""}]}`), &c); err == nil {
		t.Error("duplicate skill names: no error")
	}
}

func TestParseFormats(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"always.md":   "---\nname: style\n---\n\n# Style\nUse tabs.\n",
		"plain.md":    "No frontmatter at all.\n",
		"kw.md":       "---\ntriggers:\n  - git\n  - /commit\ndescription: Git help\nallowed-tools: terminal file_editor\nmetadata:\n  level: 3\n---\nGit tips.",
		"task.md":     "---\nname: deploy\ntriggers: [ship]\ninputs:\n  - name: env\n    description: target environment\n---\nDeploy to ${env}.",
		"rule.md":     "---\npaths: \"*.go, docs/**\"\ntriggers: [go]\n---\nGo rules.",
		"sub/deep.md": "---\ntriggers: [deep]\n---\nDeep.",
		"crlf.md":     "---\r\nname: crlf\r\ntriggers: [windows]\r\n---\r\nBody\r\n",
	})
	skills, warns := LoadDir(dir)
	if len(warns) != 0 {
		t.Fatalf("warnings: %v", warns)
	}
	// Always-on first, then triggered, each group in path order.
	want := []string{"plain", "style", "crlf", "kw", "rule", "sub/deep", "deploy"}
	slices.Sort(want[2:])
	got := names(skills)
	if !slices.Equal(got[:2], []string{"style", "plain"}) && !slices.Equal(got[:2], []string{"plain", "style"}) {
		t.Errorf("always-on skills not first: %v", got)
	}
	if len(got) != 7 {
		t.Fatalf("loaded %v", got)
	}
	style := byName(t, skills, "style")
	if style.Trigger != nil || style.Content != "# Style\nUse tabs." || style.Source != filepath.ToSlash(filepath.Join(dir, "always.md")) {
		t.Errorf("style: %+v", style)
	}
	kw := byName(t, skills, "kw")
	if kw.Trigger.Type != TriggerKeyword || !slices.Equal(kw.Trigger.Words, []string{"git", "/commit"}) ||
		kw.Description != "Git help" || !slices.Equal(kw.AllowedTools, []string{"terminal", "file_editor"}) || kw.Metadata["level"] != "3" {
		t.Errorf("kw: %+v", kw)
	}
	task := byName(t, skills, "deploy")
	if task.Trigger.Type != TriggerTask || !slices.Equal(task.Trigger.Words, []string{"ship", "/deploy"}) ||
		len(task.Inputs) != 1 || !strings.HasSuffix(task.Content, askForInputs) {
		t.Errorf("task: %+v", task)
	}
	rule := byName(t, skills, "rule")
	if rule.Trigger.Type != TriggerPath || !slices.Equal(rule.Trigger.Paths, []string{"*.go", "docs/**"}) || !rule.DisableModelInvocation {
		t.Errorf("rule: %+v", rule)
	}
	if c := byName(t, skills, "crlf"); c.Content != "Body" || c.Trigger.Words[0] != "windows" {
		t.Errorf("crlf: %+v", c)
	}
	byName(t, skills, "sub/deep")
}

func TestAgentSkillsFormat(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"pdf-tools/SKILL.md":           "---\ndescription: Work with PDFs\nlicense: MIT\n---\nUse pdftotext.",
		"pdf-tools/scripts/split.sh":   "#!/bin/sh\n",
		"pdf-tools/references/spec.md": "spec", // not a skill of its own
		"pdf-tools/.mcp.json":          `{"mcpServers":{"fs":{"command":"mcp-fs"}}}`,
		"Bad_Name/SKILL.md":            "bad name",
		"named/SKILL.md":               "---\nname: other\n---\nname must match the directory",
		"README.md":                    "not a skill",
	})
	skills, warns := LoadDir(dir)
	if got := names(skills); !slices.Equal(got, []string{"pdf-tools"}) {
		t.Fatalf("loaded %v", got)
	}
	s := skills[0]
	if !s.IsAgentSkillsFormat || s.Description != "Work with PDFs" || s.License != "MIT" || s.Trigger != nil {
		t.Errorf("%+v", s)
	}
	if s.Resources == nil || !slices.Equal(s.Resources.Scripts, []string{"split.sh"}) || !slices.Equal(s.Resources.References, []string{"spec.md"}) {
		t.Errorf("resources %+v", s.Resources)
	}
	if string(s.MCPTools) != `{"fs":{"command":"mcp-fs"}}` {
		t.Errorf("mcp %s", s.MCPTools)
	}
	if len(warns) != 2 {
		t.Fatalf("warnings %v, want 2 (bad names)", warns)
	}
	for _, w := range warns {
		if !strings.Contains(w.Path, "Bad_Name") && !strings.Contains(w.Path, "named") {
			t.Errorf("warning for %s", w.Path)
		}
	}
	// Listed for the model, not put in the system prompt whole.
	c := &AgentContext{Skills: skills, CurrentDatetime: "x"}
	out := c.SystemSuffix(nil)
	if !strings.Contains(out, "<name>pdf-tools</name><description>Work with PDFs</description>") || strings.Contains(out, "pdftotext") {
		t.Errorf("system suffix:\n%s", out)
	}
}

func TestBadFrontmatter(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"good.md":      "---\ntriggers: [ok]\n---\nfine",
		"broken.md":    "---\ntriggers: [unclosed\n---\nbody",
		"list.md":      "---\n- a\n- b\n---\nbody",
		"badtrig.md":   "---\ntriggers: just-a-string\n---\nbody",
		"badinputs.md": "---\ninputs:\n  - name: x\n---\nbody",
		"badpaths.md":  "---\npaths: {a: 1}\n---\nbody",
	})
	skills, warns := LoadDir(dir)
	if got := names(skills); !slices.Equal(got, []string{"good"}) {
		t.Errorf("loaded %v, want [good]", got)
	}
	var bad []string
	for _, w := range warns {
		bad = append(bad, filepath.Base(w.Path))
		if w.Err == nil || !strings.Contains(w.Error(), w.Path) {
			t.Errorf("warning %v does not name its file", w)
		}
	}
	slices.Sort(bad)
	if want := []string{"badinputs.md", "badpaths.md", "badtrig.md", "broken.md", "list.md"}; !slices.Equal(bad, want) {
		t.Errorf("warned about %v, want %v", bad, want)
	}
}

func TestLoadProject(t *testing.T) {
	repo := t.TempDir()
	work := filepath.Join(repo, "svc")
	write(t, repo, map[string]string{
		".git/HEAD":                         "ref: refs/heads/main\n",
		"AGENTS.md":                         "Repo-wide: use gofmt.",
		"svc/lib/AGENTS.md":                 "below the work dir: a path rule",
		"GEMINI.md":                         "gemini notes",
		".openhands/skills/shared.md":       "---\ntriggers: [shared]\n---\nfrom the git root",
		"svc/AGENTS.md":                     "Run make test.",
		"svc/CLAUDE.md":                     "@link:AGENTS.md",
		"svc/.cursorrules":                  "cursor rules",
		"svc/api/AGENTS.md":                 "API rules",
		"svc/node_modules/x/AGENTS.md":      "ignored",
		"svc/.agents/skills/dup.md":         "---\ntriggers: [dup]\n---\nfrom .agents",
		"svc/.openhands/skills/dup.md":      "---\ntriggers: [dup]\n---\nfrom .openhands",
		"svc/.openhands/skills/agents.md":   "named like a third-party file but in a skills folder",
		"svc/.openhands/microagents/old.md": "---\ntriggers: [legacy]\n---\nlegacy microagent",
		"svc/.openhands/skills/shared.md":   "---\ntriggers: [shared]\n---\nfrom the work dir",
	})
	skills, warns := LoadProject(work)
	if len(warns) != 0 {
		t.Errorf("warnings %v", warns)
	}
	want := []string{"agents", "gemini", "cursorrules", "agents:api", "agents:lib", "dup", "shared", "old"}
	got := names(skills)
	if !slices.Equal(got, want) {
		t.Fatalf("loaded %v, want %v", got, want)
	}
	// The git root's AGENTS.md and the work dir's are one skill, the root's
	// first (the nearer one has the last word).
	if s := byName(t, skills, "agents"); s.Content != "Repo-wide: use gofmt.\n\nRun make test." || s.Trigger != nil ||
		!strings.HasSuffix(s.Source, "svc/AGENTS.md") {
		t.Errorf("agents: %+v", s)
	}
	if s := byName(t, skills, "dup"); s.Content != "from .agents" {
		t.Errorf(".agents/skills should win: %q", s.Content)
	}
	if s := byName(t, skills, "shared"); s.Content != "from the work dir" {
		t.Errorf("work dir should win over git root: %q", s.Content)
	}
	api := byName(t, skills, "agents:api")
	if api.Trigger.Type != TriggerPath || api.Trigger.Paths[0] != "api/**" || !api.DisableModelInvocation {
		t.Errorf("nested rule: %+v", api)
	}
	if _, ok := api.MatchPath("api/v1/handler.go"); !ok {
		t.Error("nested rule does not match a file below it")
	}
}

func TestLoadUserAndMerge(t *testing.T) {
	home := t.TempDir()
	write(t, home, map[string]string{
		".agents/skills/a.md":         "---\ntriggers: [a]\n---\nA from .agents",
		".openhands/skills/a.md":      "---\ntriggers: [a]\n---\nA from .openhands",
		".openhands/skills/b.md":      "B",
		".openhands/microagents/c.md": "C",
	})
	user, warns := LoadUser(home)
	if len(warns) != 0 || !slices.Equal(names(user), []string{"a", "b", "c"}) || user[0].Content != "A from .agents" {
		t.Fatalf("user skills %v %v", names(user), warns)
	}
	none, warns := LoadUser(filepath.Join(home, "missing"))
	if len(none) != 0 || len(warns) != 0 {
		t.Errorf("missing home: %v %v", none, warns)
	}
	explicit := []Skill{{Name: "b", Content: "explicit B"}}
	merged := Merge([]string{"c"}, explicit, user)
	if !slices.Equal(names(merged), []string{"b", "a"}) || merged[0].Content != "explicit B" {
		t.Errorf("merged %v", names(merged))
	}
}

func TestMatchKeyword(t *testing.T) {
	s := Skill{Name: "k", Trigger: &Trigger{Type: TriggerKeyword, Words: []string{"git", "/linear", "C++", "pull request"}}}
	for text, want := range map[string]string{
		"use git please":              "git",
		"GIT status":                  "git",
		"Git.":                        "git",
		"(git)":                       "git",
		"git":                         "git",
		"check github":                "",
		"legit code":                  "",
		"git2go":                      "",
		"run /linear now":             "/linear",
		"/LINEAR":                     "/linear",
		"x/linear":                    "", // a letter before the slash
		"write c++ code":              "C++",
		"open a Pull  request":        "",
		"open a pull request, thanks": "pull request",
		"":                            "",
		"digit":                       "",
		"git_hub":                     "git", // underscore is not a letter or digit
	} {
		got, ok := s.MatchKeyword(text)
		if got != want || ok != (want != "") {
			t.Errorf("%q: %q %v, want %q", text, got, ok, want)
		}
	}
}

func TestUserMessageExtraOnce(t *testing.T) {
	c := &AgentContext{
		Skills: []Skill{
			{Name: "repo", Content: "always"},
			{Name: "git", Content: "Git tips.", Trigger: &Trigger{Type: TriggerKeyword, Words: []string{"git"}}},
			{Name: "py", Content: "Python tips.", Trigger: &Trigger{Type: TriggerTask, Words: []string{"python", "/py"}}},
			{Name: "rule", Content: "Go rules.", Trigger: &Trigger{Type: TriggerPath, Paths: []string{"*.go"}}},
		},
		UserMessageSuffix: "  Be brief.  ",
	}
	text, got := c.UserMessageExtra("Fix the GIT hook in python", nil)
	if !slices.Equal(got, []string{"git", "py"}) {
		t.Fatalf("activated %v", got)
	}
	if strings.Count(text, "<EXTRA_INFO>") != 2 || !strings.Contains(text, "Git tips.") || !strings.Contains(text, `"git"`) ||
		!strings.HasSuffix(text, "</EXTRA_INFO>\nBe brief.") || strings.Contains(text, "always") || strings.Contains(text, "Go rules") {
		t.Errorf("text:\n%s", text)
	}
	// Once per conversation: already activated skills stay out.
	text, got = c.UserMessageExtra("git again, and python", got)
	if len(got) != 0 || text != "Be brief." {
		t.Errorf("second time: %q %v", text, got)
	}
	// No text: the suffix alone.
	if text, got = c.UserMessageExtra("   ", nil); text != "Be brief." || got != nil {
		t.Errorf("empty message: %q %v", text, got)
	}
	c.UserMessageSuffix = ""
	if text, got = c.UserMessageExtra("nothing here", nil); text != "" || len(got) != 0 {
		t.Errorf("no match, no suffix: %q %v", text, got)
	}
	var nilCtx *AgentContext
	if text, got := nilCtx.UserMessageExtra("git", nil); text != "" || got != nil {
		t.Error("nil context added text")
	}
}

func TestPathRules(t *testing.T) {
	skills := []Skill{
		{Name: "go", Trigger: &Trigger{Type: TriggerPath, Paths: []string{"*.go"}}},
		{Name: "docs", Trigger: &Trigger{Type: TriggerPath, Paths: []string{"docs/"}}},
		{Name: "api", Trigger: &Trigger{Type: TriggerPath, Paths: []string{"/api/**/*.proto"}}},
		{Name: "kw", Trigger: &Trigger{Type: TriggerKeyword, Words: []string{"main.go"}}},
	}
	for rel, want := range map[string][]string{
		"main.go":           {"go"},
		"pkg/deep/x.go":     {"go"},
		"x.GO":              nil,
		"docs/a/b.md":       {"docs"},
		"sub/docs/a.md":     {"docs"}, // gitignore: a directory glob without an inner slash matches at any depth
		"api/v1/x.proto":    {"api"},
		"api/x.proto":       {"api"},
		"other/api/x.proto": nil,
		"./pkg/../main.go":  {"go"},
	} {
		if got := Names(TriggeredByPath(skills, rel, nil)); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("%s: %v, want %v", rel, got, want)
		}
	}
	if got := TriggeredByPath(skills, "main.go", []string{"go"}); len(got) != 0 {
		t.Errorf("path rule fired twice: %v", Names(got))
	}
}

func TestSystemSuffix(t *testing.T) {
	c := &AgentContext{
		Skills: []Skill{
			{Name: "agents", Content: "Run make test.\n"},
			{Name: "claude", Content: "Notes from CLAUDE.md."},
			{Name: "gemini", Content: "Gemini-only notes."},
			{Name: "git", Content: "# Git\n\nUse rebase.", Trigger: &Trigger{Type: TriggerKeyword, Words: []string{"git"}}},
			{Name: "hidden", Content: "x", Trigger: &Trigger{Type: TriggerKeyword, Words: []string{"h"}}, DisableModelInvocation: true},
			{Name: "rule", Content: "y", Trigger: &Trigger{Type: TriggerPath, Paths: []string{"*"}}, DisableModelInvocation: true},
			{Name: "esc", Description: "a < b & c", Trigger: &Trigger{Type: TriggerKeyword, Words: []string{"e"}}},
		},
		SystemMessageSuffix: "Custom suffix.",
	}
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.Local)
	out := c.SystemSuffix(&PromptOptions{Now: now, Model: "gpt-5"})
	for _, want := range []string{
		"<REPO_CONTEXT>", "Run make test.", "<<< agents >>>", "Notes from CLAUDE.md.",
		"<name>git</name><description>Use rebase.</description>",
		"<description>a &lt; b &amp; c</description>",
		"Custom suffix.", "2026-03-04T05:06",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	for _, not := range []string{"Gemini-only", "hidden", "<name>rule</name>"} {
		if strings.Contains(out, not) {
			t.Errorf("unexpected %q in:\n%s", not, out)
		}
	}
	// Sections in order, separated by blank lines.
	i1, i2, i3, i4 := strings.Index(out, "<REPO_CONTEXT>"), strings.Index(out, "<SKILLS>"), strings.Index(out, "Custom suffix."), strings.Index(out, "<CURRENT_DATETIME>")
	if !(i1 == 0 && i1 < i2 && i2 < i3 && i3 < i4) || !strings.Contains(out, "</SKILLS>\n\nCustom suffix.\n\n<CURRENT_DATETIME>") {
		t.Errorf("section order:\n%s", out)
	}
	if out := c.SystemSuffix(&PromptOptions{Model: "gemini/gemini-2.5-pro"}); !strings.Contains(out, "Gemini-only notes.") || !strings.Contains(out, "Notes from CLAUDE.md.") {
		t.Error("GEMINI.md or CLAUDE.md not shown to a Gemini model")
	}
	c.CurrentDatetime = "2020-01-01T00:00"
	if out := c.SystemSuffix(nil); !strings.Contains(out, "2020-01-01T00:00") {
		t.Error("CurrentDatetime ignored")
	}
	var nilCtx *AgentContext
	if nilCtx.SystemSuffix(nil) != "" {
		t.Error("nil context rendered text")
	}
}

func TestLongDescriptionCut(t *testing.T) {
	s := Skill{Name: "x", Source: "/s/x.md", Description: strings.Repeat("é", 2000)}
	s.Normalize()
	if r := []rune(s.Description); len(r) > MaxDescription+100 || !strings.Contains(s.Description, "/s/x.md") {
		t.Errorf("description of %d runes: %q", len(r), s.Description[len(s.Description)-80:])
	}
}

// TestLoadDirMatchesReference loads testdata/skills and compares the result
// with what the Python reference's loader produced for the same folder
// (testdata/load.reference.json). Two differences are deliberate: our
// wording of the sentence appended to task skills, and skill_root, which is
// absolute on both sides.
func TestLoadDirMatchesReference(t *testing.T) {
	data, err := os.ReadFile("testdata/load.reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var want []map[string]any
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	t.Chdir("testdata")
	skills, warns := LoadDir("skills")
	if len(warns) != 2 {
		t.Errorf("warnings %v, want 2 (Bad_Name/SKILL.md, broken.md)", warns)
	}
	b, err := json.Marshal(skills)
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, list := range [][]map[string]any{want, got} {
		for _, s := range list {
			if c, ok := s["content"].(string); ok && s["name"] == "sub/task" {
				s["content"], _, _ = strings.Cut(c, "\n\n")
			}
			if r, ok := s["resources"].(map[string]any); ok {
				root := r["skill_root"].(string)
				if rel, ok := strings.CutPrefix(root, "<abs>/"); ok {
					r["skill_root"] = rel
				} else if filepath.IsAbs(root) {
					_, r["skill_root"], _ = strings.Cut(root, "/testdata/")
				}
			}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("loaded skills differ (-reference +ours):\n%s", diff)
	}
}

// TestBadFrontmatterLogged checks that the warning goes to the log too,
// naming the file.
func TestBadFrontmatterLogged(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	dir := t.TempDir()
	write(t, dir, map[string]string{"bad.md": "---\nname: [x\n---\n", "ok.md": "fine"})
	skills, warns := LoadDir(dir)
	if len(skills) != 1 || len(warns) != 1 {
		t.Fatalf("skills %v warnings %v", names(skills), warns)
	}
	if log := buf.String(); !strings.Contains(log, "level=WARN") || !strings.Contains(log, filepath.Join(dir, "bad.md")) {
		t.Errorf("log does not name the file:\n%s", log)
	}
}

func TestAgentContextLoadSkills(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	write(t, home, map[string]string{
		".openhands/skills/u.md":    "user U",
		".openhands/skills/both.md": "user both",
		".openhands/skills/off.md":  "disabled",
	})
	write(t, work, map[string]string{
		"AGENTS.md":                 "project agents",
		".openhands/skills/both.md": "project both",
	})
	c := &AgentContext{
		Skills:            []Skill{{Name: "both", Content: "explicit both"}, {Name: "agents", Content: "explicit agents"}, {Name: "e", Content: "E"}},
		LoadUserSkills:    true,
		LoadProjectSkills: true,
		DisabledSkills:    []string{"off"},
	}
	if warns := c.LoadSkills(work, home); len(warns) != 0 {
		t.Fatal(warns)
	}
	got := map[string]string{}
	for _, s := range c.Skills {
		got[s.Name] = s.Content
	}
	want := map[string]string{"agents": "project agents", "both": "project both", "e": "E", "u": "user U"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("skills (-want +got):\n%s", diff)
	}
	// Flags off: nothing is loaded.
	c = &AgentContext{Skills: []Skill{{Name: "e", Content: "E"}}}
	c.LoadSkills(work, home)
	if len(c.Skills) != 1 {
		t.Errorf("loaded without flags: %v", names(c.Skills))
	}
}

func TestRelPath(t *testing.T) {
	for _, tc := range []struct {
		p, want string
		ok      bool
	}{
		{"/w/a/b.go", "a/b.go", true},
		{"a/b.go", "a/b.go", true},
		{"/w", ".", true},
		{"/other/x.go", "", false},
		{"/w/../x", "", false},
		{"/w2/x", "", false},
		{"/w/..x/y", "..x/y", true},
	} {
		got, ok := RelPath("/w", tc.p)
		if got != tc.want || ok != tc.ok {
			t.Errorf("RelPath(/w, %s) = %q %v, want %q %v", tc.p, got, ok, tc.want, tc.ok)
		}
	}
}

// current_datetime null shows no date and time and is written back as
// null (the reference's ACP contexts); absent shows now and stays absent;
// a value is shown and kept.
func TestCurrentDatetimeNullAbsentValue(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 0, 0, time.UTC)
	for _, c := range []struct{ in, shown, out string }{
		{`{"current_datetime":null}`, "", `"current_datetime":null`},
		{`{}`, "2026-03-04T05:06", ""},
		{`{"current_datetime":"2020-01-01T00:00"}`, "2020-01-01T00:00", `"current_datetime":"2020-01-01T00:00"`},
	} {
		var ac AgentContext
		if err := json.Unmarshal([]byte(c.in), &ac); err != nil {
			t.Fatal(err)
		}
		got := ac.SystemSuffix(&PromptOptions{Now: now})
		if c.shown == "" && strings.Contains(got, "CURRENT_DATETIME") || c.shown != "" && !strings.Contains(got, "The current date and time is "+c.shown+".") {
			t.Errorf("%s: suffix %q", c.in, got)
		}
		b, err := json.Marshal(ac)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), `"current_datetime"`); c.out == "" && n != 0 || c.out != "" && (n != 1 || !strings.HasSuffix(string(b), ","+c.out+"}")) {
			t.Errorf("%s: written back as %s", c.in, b)
		}
	}
}
