package plugin

import (
	"context"
	"path/filepath"
	"testing"
)

// An installed skill is the user's in the catalog, as in 1.58.2 (whose
// catalog origin "user" is "the user's own skills, including marketplace
// installs"), also when it shadows a public skill of its name; its source
// is its SKILL.md under skills/installed. A disabled one is not listed.
func TestCatalogInstalledSkillIsUser(t *testing.T) {
	repo := publicRepo(t)
	t.Setenv("EXTENSIONS_PATH", "")
	t.Setenv("EXTENSIONS_REF", "")
	t.Setenv("EXTENSIONS_REPO", "file://"+repo)
	t.Setenv("OH_PERSISTENCE_DIR", "")
	home := t.TempDir()
	installed := filepath.Join(home, ".openhands", "skills", "installed")
	write(t, installed, map[string]string{
		"mine/SKILL.md":   "---\nname: mine\ndescription: installed\n---\nMine.",
		"docker/SKILL.md": "---\nname: docker\ndescription: installed over the public one\n---\nMy docker.",
		"off/SKILL.md":    "---\nname: off\ndescription: disabled\n---\nOff.",
		".installed.json": `{"extensions": {"off": {"enabled": false}}}`,
	})
	list, warns, err := Catalog(context.Background(), home, &FetchOptions{CacheDir: t.TempDir()})
	if err != nil || len(warns) != 0 {
		t.Fatalf("Catalog: %v %v", err, warns)
	}
	got := map[string]CatalogSkill{}
	for _, sk := range list {
		got[sk.Name] = sk
	}
	if len(got) != 3 {
		t.Errorf("catalog: %+v", list)
	}
	for _, name := range []string{"mine", "docker"} {
		sk, ok := got[name]
		if !ok || !sk.User || sk.Source != filepath.Join(installed, name, "SKILL.md") {
			t.Errorf("%s: listed %t, user %t, source %q", name, ok, sk.User, sk.Source)
		}
	}
	if got["github"].User {
		t.Error("the public github skill is listed as the user's")
	}
}
