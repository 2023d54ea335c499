package plugin

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A registered marketplace auto-loads the plugins and standalone skills it
// names; an entry pointing outside the marketplace's directory, or one
// without its SKILL.md, is left out with an error naming it.
func TestLoadRegistered(t *testing.T) {
	root := t.TempDir()
	mk := filepath.Join(root, "market")
	write(t, mk, map[string]string{
		".plugin/marketplace.json": `{"name": "company", "owner": {"name": "Tools"}, "plugins": [
			{"name": "city-weather", "source": "./plugins/weather"},
			{"name": "escape", "source": "../outside"},
			{"name": "skipped", "source": "./plugins/skipped"}],
			"skills": [{"name": "greet", "source": "./skills/greet"}, {"name": "empty", "source": "./skills/empty"}]}`,
		"plugins/skipped/skills/s.md": "NOT AUTO-LOADED",
		"skills/greet/SKILL.md":       "---\ndescription: greets\n---\nGreet.",
		"skills/empty/README.md":      "no skill here",
	})
	for name, body := range samplePlugin {
		write(t, mk, map[string]string{"plugins/weather/" + name: body})
	}
	write(t, filepath.Join(root, "outside"), map[string]string{"skills/x.md": "OUTSIDE"})
	auto, _ := json.Marshal([]string{"city-weather", "escape", "greet", "empty"})
	regs := []Registration{{Name: "company", Source: mk, AutoLoad: auto}}
	set, warns := LoadRegistered(context.Background(), regs, &FetchOptions{CacheDir: t.TempDir()})
	var names []string
	for _, s := range set.Skills {
		names = append(names, s.Name)
	}
	if want := []string{"greet", "Odd_Name", "always", "forecast", "city-weather:now"}; !slices.Equal(names, want) {
		t.Errorf("skills = %v, want %v", names, want)
	}
	if len(set.MCPConfig) != 1 || set.Hooks.IsEmpty() {
		t.Errorf("mcp %v hooks %v", set.MCPConfig, set.Hooks)
	}
	var msgs []string
	for _, w := range warns {
		msgs = append(msgs, w.Err.Error())
	}
	all := strings.Join(msgs, "\n")
	if len(warns) != 2 || !strings.Contains(all, `"escape": source "../outside" points outside`) || !strings.Contains(all, `"empty" has no SKILL.md`) {
		t.Errorf("warnings:\n%s", all)
	}

	// A registration of everything, of nothing, and of an unreachable source.
	set, _ = LoadRegistered(context.Background(), []Registration{{Name: "c", Source: mk, AutoLoad: json.RawMessage(`false`)}}, nil)
	if len(set.Skills) != 0 {
		t.Errorf("auto_load false loaded %v", set.Skills)
	}
	_, warns = LoadRegistered(context.Background(), []Registration{{Name: "gone", Source: "file:///nonexistent/market.git", AutoLoad: json.RawMessage(`true`)}}, &FetchOptions{CacheDir: t.TempDir()})
	if len(warns) != 1 || !strings.Contains(warns[0].Err.Error(), "file:///nonexistent/market.git") {
		t.Errorf("unreachable marketplace: %v", warns)
	}
}

func TestLoadMarketplaceBadInput(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"bad json":     {".plugin/marketplace.json": `{"name": `},
		"no name":      {".claude-plugin/marketplace.json": `{"plugins": []}`},
		"entry source": {".plugin/marketplace.json": `{"name": "m", "plugins": [{"name": "p"}]}`},
		"nothing":      {"README.md": "x"},
	} {
		dir := t.TempDir()
		write(t, dir, files)
		if _, err := LoadMarketplace(dir, "m"); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	// Without a manifest, the skill folders are the marketplace's skills.
	dir := t.TempDir()
	write(t, dir, map[string]string{"skills/a/SKILL.md": "A.", "skills/b/SKILL.md": "B.", "skills/loose.md": "not a skill"})
	m, err := LoadMarketplace(dir, "plain")
	if err != nil || len(m.Skills) != 2 || m.Name != "plain" {
		t.Fatalf("skills folder marketplace = %+v, %v", m, err)
	}
	src, err := m.Resolve(&m.Skills[0])
	if err != nil || src.Source != filepath.Join(m.Path, "skills", "a") {
		t.Errorf("resolve = %v, %v", src, err)
	}
	obj := MarketplaceEntry{Name: "x", Source: json.RawMessage(`{"source": "github", "repo": "o/r", "ref": "v1", "path": "p"}`)}
	if src, err := m.Resolve(&obj); err != nil || src.Source != "github:o/r" || *src.Ref != "v1" || *src.RepoPath != "p" {
		t.Errorf("resolve object = %+v, %v", src, err)
	}
	bad := MarketplaceEntry{Name: "y", Source: json.RawMessage(`{"source": "url"}`)}
	if _, err := m.Resolve(&bad); err == nil {
		t.Error("resolved a url source without its url")
	}
}
