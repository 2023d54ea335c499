package server_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func gitCommitAll(t *testing.T, dir string, init bool) {
	t.Helper()
	steps := [][]string{{"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"}}
	if init {
		steps = append([][]string{{"init", "-q", "-b", "main"}}, steps...)
	}
	for _, args := range steps {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

func TestPublicCatalogs(t *testing.T) {
	const market = `{"name": "default", "owner": {"name": "o"}, "plugins": [
		{"name": "gh-work", "source": "./skills/gh-work", "description": "GitHub work"},
		{"name": "city", "source": "./plugins/city", "description": "A city plugin"}%s]}`
	dir := writePlugin(t, filepath.Join(t.TempDir(), "extensions"), map[string]string{
		"skills/gh-work/SKILL.md":              "---\nname: gh-work\ndescription: PUBLIC-SKILL\n---\nUse gh.",
		"plugins/city/.plugin/plugin.json":     `{"name": "city", "version": "1.0.0", "description": "A city plugin"}`,
		"plugins/city/skills/streets/SKILL.md": "---\nname: streets\ndescription: Streets\n---\nStreets.",
		"marketplaces/default.json":            fmt.Sprintf(market, ""),
	})
	gitCommitAll(t, dir, true)
	home := t.TempDir()
	writePlugin(t, filepath.Join(home, ".openhands", "skills", "mine"), map[string]string{
		"SKILL.md": "---\nname: mine\ndescription: USER-SKILL\n---\nMine.",
	})
	t.Setenv("HOME", home)
	t.Setenv("EXTENSIONS_PATH", "")
	t.Setenv("EXTENSIONS_REF", "")
	t.Setenv("EXTENSIONS_REPO", "file://"+dir)
	t.Setenv("OH_PERSISTENCE_DIR", t.TempDir())
	ts := newTestServer(t, nil)

	type entry struct {
		Name, Origin, Source string
		Installed            bool
		Path                 *string
		Skills               []map[string]any
		Files                []string
	}
	var cat struct{ Skills []entry }
	ts.must(200, "GET", "/api/skills/catalog", nil, &cat)
	origins := map[string]string{}
	for _, e := range cat.Skills {
		origins[e.Name] = e.Origin
	}
	if origins["gh-work"] != "public" || origins["mine"] != "user" || len(origins) != 2 {
		t.Errorf("catalog: %+v", cat)
	}

	var sm struct{ Skills []entry }
	ts.must(200, "GET", "/api/skills/marketplace", nil, &sm)
	if len(sm.Skills) != 2 || sm.Skills[0].Name != "gh-work" || sm.Skills[0].Installed || !strings.HasSuffix(sm.Skills[0].Source, filepath.FromSlash("/skills/gh-work")) {
		t.Errorf("skill marketplace: %+v", sm)
	}
	ts.must(200, "POST", "/api/skills/install", map[string]any{"source": sm.Skills[0].Source}, nil)
	ts.must(200, "GET", "/api/skills/marketplace", nil, &sm)
	if !sm.Skills[0].Installed {
		t.Errorf("installed skill not marked: %+v", sm)
	}

	var pm struct{ Plugins []entry }
	ts.must(200, "GET", "/api/plugins/marketplace", nil, &pm)
	if len(pm.Plugins) != 1 || pm.Plugins[0].Name != "city" || pm.Plugins[0].Installed || pm.Plugins[0].Path == nil ||
		len(pm.Plugins[0].Skills) != 1 || len(pm.Plugins[0].Files) != 2 {
		t.Errorf("plugin marketplace: %+v", pm)
	}

	// A sync takes what the repository gained; the catalogs see it.
	writePlugin(t, dir, map[string]string{
		"skills/later/SKILL.md":     "---\nname: later\ndescription: LATER\n---\nLater.",
		"marketplaces/default.json": fmt.Sprintf(market, `, {"name": "later", "source": "./skills/later"}`),
	})
	gitCommitAll(t, dir, false)
	var sync struct{ Status, Message string }
	ts.must(200, "POST", "/api/skills/sync", nil, &sync)
	if sync.Status != "success" {
		t.Errorf("sync: %+v", sync)
	}
	ts.must(200, "GET", "/api/skills/marketplace", nil, &sm)
	ts.must(200, "GET", "/api/skills/catalog", nil, &cat)
	if len(sm.Skills) != 3 || len(cat.Skills) != 3 {
		t.Errorf("after the sync: %+v\n%+v", sm, cat)
	}

	// Unreachable, the repository gives an error, and empty catalogs
	// once the sync has dropped what it had.
	t.Setenv("EXTENSIONS_REPO", "file://"+filepath.Join(t.TempDir(), "gone"))
	ts.must(200, "POST", "/api/skills/sync", nil, &sync)
	ts.must(200, "GET", "/api/plugins/marketplace", nil, &pm)
	if sync.Status != "error" || sync.Message != "Failed to sync skills repository" || len(pm.Plugins) != 0 {
		t.Errorf("unreachable: %+v %+v", sync, pm)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
}
