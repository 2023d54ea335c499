package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/testenv"
)

// write creates files under dir from a map of relative path to content.
func write(t *testing.T, dir string, files map[string]string) {
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

// samplePlugin is a Claude Code layout plugin with every part.
var samplePlugin = map[string]string{
	".claude-plugin/plugin.json": `{"name": "city-weather", "version": "2.0.0", "description": "Weather", "author": "Ann <ann@example.com>", "entry_command": "now", "homepage": "https://example.com"}`,
	"skills/forecast/SKILL.md":   "---\ndescription: Forecasts\n---\nUse the forecast.",
	"skills/Odd_Name/SKILL.md":   "---\nname: Odd_Name\ndescription: not kebab-case, allowed in plugins\n---\nOdd.",
	"skills/always.md":           "Always say the city.",
	"skills/deep/notes/extra.md": "a resource, not a skill",
	"skills/README.md":           "not a skill",
	"commands/now.md":            "---\ndescription: Weather now\nargument-hint: [city]\nallowed-tools: [terminal]\nextra: 1\n---\nTell the weather in $ARGUMENTS.",
	"hooks/hooks.json":           `{"hooks": {"PreToolUse": [{"matcher": "terminal", "hooks": [{"type": "command", "command": "true"}]}]}}`,
	".mcp.json":                  `{"mcpServers": {"weather": {"command": "${SKILL_ROOT}/bin/weather", "env": {"KEY": "${WEATHER_KEY}"}}}}`,
	"README.md":                  "docs",
}

func TestLoadClaudeCodeLayout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "city-weather")
	write(t, dir, samplePlugin)
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := p.Manifest
	if m.Name != "city-weather" || m.Version != "2.0.0" || m.Author == nil || m.Author.Name != "Ann" || *m.Author.Email != "ann@example.com" || *m.EntryCommand != "now" {
		t.Errorf("manifest = %+v", m)
	}
	if _, ok := m.Extra["homepage"]; !ok {
		t.Errorf("extra fields lost: %v", m.Extra)
	}
	var names []string
	for _, s := range p.AllSkills() {
		names = append(names, s.Name)
	}
	if want := []string{"Odd_Name", "always", "forecast", "city-weather:now"}; !slices.Equal(names, want) {
		t.Errorf("skills = %v, want %v", names, want)
	}
	cmd := p.AllSkills()[3]
	if cmd.Trigger == nil || !slices.Equal(cmd.Trigger.Words, []string{"/city-weather:now"}) || !strings.Contains(cmd.Content, "**Arguments**: `$ARGUMENTS` - city") || !slices.Equal(cmd.AllowedTools, []string{"terminal"}) {
		t.Errorf("command skill = %+v", cmd)
	}
	if p.Hooks.IsEmpty() || len(p.Hooks.PreToolUse) != 1 {
		t.Errorf("hooks = %+v", p.Hooks)
	}
	var srv struct {
		Command string            `json:"command"`
		Env     map[string]string `json:"env"`
	}
	if err := json.Unmarshal(p.MCPConfig["weather"], &srv); err != nil {
		t.Fatal(err)
	}
	if srv.Command != filepath.ToSlash(p.Path)+"/bin/weather" || srv.Env["KEY"] != "${WEATHER_KEY}" {
		t.Errorf("mcp server = %+v", srv)
	}
	if len(p.Warnings) != 0 {
		t.Errorf("warnings: %v", p.Warnings)
	}
}

func TestLoadInfersManifestAndRootSkill(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "solo")
	write(t, dir, map[string]string{"SKILL.md": "---\ndescription: one skill\n---\nDo it."})
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "solo" || p.Manifest.Version != "1.0.0" || p.Manifest.Description != "Plugin loaded from solo" {
		t.Errorf("manifest = %+v", p.Manifest)
	}
	if len(p.Skills) != 1 || p.Skills[0].Name != "solo" {
		t.Errorf("skills = %+v", p.Skills)
	}
}

// Malformed manifests are errors naming the file; bad parts are left out
// with a warning naming theirs.
func TestLoadBadInput(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"bad json":      {".plugin/plugin.json": `{"name": `},
		"no name":       {".plugin/plugin.json": `{"version": "1.0.0"}`},
		"not object":    {".claude-plugin/plugin.json": `[1]`},
		"name number":   {".plugin/plugin.json": `{"name": 7}`},
		"bad schema":    {"plugin.json": `{"$schema": "https://example.com/x.json", "name": "a", "version": "1.0.0"}`},
		"ap bad name":   {"plugin.json": `{"$schema": "` + AgentPluginsSchema + `", "name": "Bad Name", "version": "1.0.0"}`},
		"ap bad json":   {"plugin.json": `{"$schema": `},
		"ap no version": {"plugin.json": `{"$schema": "` + AgentPluginsSchema + `", "name": "a"}`},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, files)
			_, err := Load(dir)
			if err == nil || !strings.Contains(err.Error(), "plugin.json") {
				t.Fatalf("err = %v, want one naming plugin.json", err)
			}
		})
	}
	dir := t.TempDir()
	write(t, dir, map[string]string{
		".plugin/plugin.json":  `{"name": "p"}`,
		"hooks/hooks.json":     `{"NoSuchEvent": []}`,
		".mcp.json":            `{"mcpServers": `,
		"skills/a.md":          "---\ntriggers: [x\n---\nbody",
		"skills/dup.md":        "---\nname: same\n---\none",
		"skills/dup2.md":       "---\nname: same\ntriggers: [y]\n---\ntwo",
		"commands/bad.md":      "---\n: [\n---\nx",
		"skills/good/SKILL.md": "good",
	})
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if p.Hooks != nil || len(p.MCPConfig) != 0 || len(p.Commands) != 0 {
		t.Errorf("bad parts kept: hooks %v mcp %v commands %v", p.Hooks, p.MCPConfig, p.Commands)
	}
	var paths []string
	for _, w := range p.Warnings {
		paths = append(paths, filepath.Base(w.Path))
	}
	slices.Sort(paths)
	if want := []string{".mcp.json", "a.md", "bad.md", "dup2.md", "hooks.json"}; !slices.Equal(paths, want) {
		t.Errorf("warnings for %v, want %v (%v)", paths, want, p.Warnings)
	}
	var set Set
	set.Add(p)
	var got []string
	for _, s := range set.Skills {
		got = append(got, s.Name+"="+s.Content)
	}
	if want := []string{"same=two", "good=good"}; !slices.Equal(got, want) {
		t.Errorf("merged skills = %v, want %v", got, want)
	}
}

func TestLoadAgentPluginsLayout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pkg")
	write(t, dir, map[string]string{
		"plugin.json":                    `{"$schema": "` + AgentPluginsSchema + `", "name": "pkg", "version": "0.1.0", "unknown": 1, "extensions": {"dev.openhands": {"entry_command": "go"}, "other": {"entry_command": 5}}}`,
		"skills/s/SKILL.md":              "S.",
		"mcp.json":                       `{"mcpServers": {"m": {"command": "x"}}}`,
		"dev.openhands/commands/go.md":   "Go.",
		"dev.openhands/hooks/hooks.json": `{"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}`,
		"commands/ignored.md":            "not in this layout",
	})
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "pkg" || p.Manifest.EntryCommand == nil || *p.Manifest.EntryCommand != "go" || len(p.Commands) != 1 || p.Commands[0].Name != "go" || len(p.Hooks.Stop) != 1 || len(p.MCPConfig) != 1 {
		t.Errorf("plugin = %+v", p)
	}
	if _, ok := p.Manifest.Extra["unknown"]; ok {
		t.Error("unknown field kept")
	}
}

// gitRepo makes a git repository holding the sample plugin under
// plugins/weather and returns its path and first commit.
func gitRepo(t *testing.T) (string, string) {
	t.Helper()
	testenv.Program(t, "git")
	dir := filepath.Join(t.TempDir(), "repo")
	write(t, dir, map[string]string{})
	for name, body := range samplePlugin {
		write(t, dir, map[string]string{"plugins/weather/" + name: body})
	}
	run := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q", "-b", "main")
	run("add", ".")
	run("commit", "-qm", "one")
	first := run("rev-parse", "HEAD")
	run("tag", "v1")
	write(t, dir, map[string]string{"plugins/weather/skills/later.md": "Added later."})
	run("add", ".")
	run("commit", "-qm", "two")
	return dir, first
}

func TestFetchGitPinsAndCaches(t *testing.T) {
	repo, first := gitRepo(t)
	cache := t.TempDir()
	opts := &FetchOptions{CacheDir: cache, Timeout: time.Minute}
	ctx := context.Background()
	sub := "plugins/weather"
	dir, commit, err := Fetch(ctx, Source{Source: "file://" + repo, RepoPath: &sub}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if commit == first || len(commit) != 40 {
		t.Errorf("HEAD fetch at %s, first is %s", commit, first)
	}
	if _, err := os.Stat(filepath.Join(dir, "skills", "later.md")); err != nil {
		t.Errorf("HEAD fetch lacks the later skill: %v", err)
	}
	tag := "v1"
	dir1, commit1, err := Fetch(ctx, Source{Source: "file://" + repo, Ref: &tag, RepoPath: &sub}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if commit1 != first {
		t.Errorf("tag v1 resolved to %s, want %s", commit1, first)
	}
	if _, err := os.Stat(filepath.Join(dir1, "skills", "later.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("v1 has the later skill: %v", err)
	}
	p, err := Load(dir1)
	if err != nil || p.Name() != "city-weather" {
		t.Fatalf("load: %v %v", p, err)
	}
	// Pinned to a cached commit: no git at all, even with the repository gone.
	if err := os.RemoveAll(repo); err != nil {
		t.Fatal(err)
	}
	dir2, commit2, err := Fetch(ctx, Source{Source: "file://" + repo, Ref: &first, RepoPath: &sub}, opts)
	if err != nil || dir2 != dir1 || commit2 != first {
		t.Errorf("pinned fetch = %s %s %v, want %s", dir2, commit2, err, dir1)
	}
	// No temporary directories left behind.
	matches, _ := filepath.Glob(filepath.Join(cache, "*", ".fetch-*"))
	if len(matches) != 0 {
		t.Errorf("left behind: %v", matches)
	}
}

func TestFetchErrors(t *testing.T) {
	cache := t.TempDir()
	ctx := context.Background()
	up := "../x"
	abs := "/etc"
	for _, c := range []struct {
		src  Source
		want string
	}{
		{Source{Source: "https://user:hunter2@127.0.0.1:1/nothing.git"}, "https://****@127.0.0.1:1/nothing.git"},
		{Source{Source: "file:///nonexistent/repo.git"}, "file:///nonexistent/repo.git"},
		{Source{Source: "/nonexistent/plugin"}, "does not exist: /nonexistent/plugin"},
		{Source{Source: t.TempDir(), RepoPath: &up}, "'..'"},
		{Source{Source: t.TempDir(), RepoPath: &abs}, "relative"},
		{Source{Source: "github:owner"}, "github:owner/repo"},
		{Source{Source: "nonsense"}, "unable to parse"},
	} {
		start := time.Now()
		_, _, err := Fetch(ctx, c.src, &FetchOptions{CacheDir: cache, Timeout: 20 * time.Second})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Fetch(%+v) = %v, want an error with %q", c.src, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("credential in error: %v", err)
		}
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("Fetch(%+v) took %s", c.src, d)
		}
	}
}

func TestInstallStore(t *testing.T) {
	src := filepath.Join(t.TempDir(), "city-weather")
	write(t, src, samplePlugin)
	st := &Store{Dir: filepath.Join(t.TempDir(), "installed"), Load: PluginLoader}
	info, err := st.Install(src, Source{Source: src}, "", false)
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != "city-weather" || !info.Enabled || info.Version != "2.0.0" {
		t.Errorf("info = %+v", info)
	}
	if _, err := st.Install(src, Source{Source: src}, "", false); !errors.Is(err, fs.ErrExist) {
		t.Errorf("second install: %v, want exists", err)
	}
	if ok, err := st.SetEnabled("city-weather", false); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if _, err := st.Install(src, Source{Source: src}, "", true); err != nil {
		t.Fatal(err)
	}
	list, err := st.List()
	if err != nil || len(list) != 1 || list[0].Enabled {
		t.Errorf("list after forced reinstall = %+v %v (enabled state must be kept)", list, err)
	}
	// A plugin whose name is not kebab-case, or whose manifest is bad, is
	// not installed, and leaves nothing behind.
	bad := filepath.Join(t.TempDir(), "bad")
	write(t, bad, map[string]string{".plugin/plugin.json": `{"name": "Not Kebab"}`})
	if _, err := st.Install(bad, Source{Source: bad}, "", false); err == nil {
		t.Error("installed a plugin with a bad name")
	}
	write(t, bad, map[string]string{".plugin/plugin.json": `{"name": `})
	if _, err := st.Install(bad, Source{Source: bad}, "", false); err == nil || !strings.Contains(err.Error(), "plugin.json") {
		t.Errorf("bad manifest: %v", err)
	}
	entries, _ := os.ReadDir(st.Dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{MetadataFile, "city-weather"}; !slices.Equal(names, want) {
		t.Errorf("installed dir holds %v, want %v", names, want)
	}
}

func TestAmbient(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	t.Setenv("OH_PERSISTENCE_DIR", "")
	write(t, filepath.Join(home, ".openhands/plugins/shared"), map[string]string{".plugin/plugin.json": `{"name": "shared"}`, "skills/u.md": "user"})
	write(t, filepath.Join(work, ".openhands/plugins/shared"), map[string]string{".plugin/plugin.json": `{"name": "shared"}`, "skills/p.md": "project"})
	write(t, filepath.Join(work, ".agents/plugins/broken"), map[string]string{".plugin/plugin.json": `{`})
	inst := &Store{Dir: InstalledDir(filepath.Join(home, ".openhands")), Load: PluginLoader}
	for _, n := range []string{"on", "off"} {
		src := filepath.Join(t.TempDir(), n)
		write(t, src, map[string]string{"skills/" + n + ".md": n})
		if _, err := inst.Install(src, Source{Source: src}, "", false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := inst.SetEnabled("off", false); err != nil {
		t.Fatal(err)
	}
	found, warns := Ambient(work, home)
	var got []string
	for _, p := range found {
		got = append(got, p.Name()+":"+p.Skills[0].Content)
	}
	if want := []string{"shared:project", "on:on"}; !slices.Equal(got, want) {
		t.Errorf("ambient = %v, want %v", got, want)
	}
	if len(warns) != 1 || !strings.Contains(warns[0].Error(), "broken") {
		t.Errorf("warnings = %v", warns)
	}
}
