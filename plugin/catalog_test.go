package plugin

import (
	"path/filepath"
	"testing"
)

// The public marketplace is the repository's manifest, else its
// marketplaces/default.json (also when the manifest is broken); its
// installable skills are the plugin entries then the standalone skills,
// first of a name, without those that leave the repository.
func TestPublicMarketplace(t *testing.T) {
	dir := t.TempDir()
	if m, err := PublicMarketplace(dir, false); m != nil || err != nil {
		t.Fatalf("no marketplace: %v, %v", m, err)
	}
	write(t, dir, map[string]string{
		".plugin/marketplace.json": `{"name": `,
		"marketplaces/default.json": `{"name": "default", "owner": {"name": "o"}, "plugins": [
			{"name": "gh", "source": "./skills/gh", "description": "GitHub"},
			{"name": "escape", "source": "../../etc"},
			{"name": "far", "source": {"source": "github", "repo": "o/r", "ref": "v1", "path": "skills/far"}}],
			"skills": [{"name": "gh", "source": "./elsewhere"}, {"name": "url", "source": "https://example.com/s.git"}]}`,
	})
	m, err := PublicMarketplace(dir, true)
	if err != nil || m == nil {
		t.Fatalf("PublicMarketplace: %v, %v", m, err)
	}
	got := m.InstallableSkills()
	want := []string{"gh", filepath.Join(dir, "skills/gh"), "far", "github:o/r@v1/skills/far", "url", "https://example.com/s.git"}
	if len(got) != 3 {
		t.Fatalf("InstallableSkills: %+v", got)
	}
	for i, s := range got {
		if s.Name != want[2*i] || s.Source != want[2*i+1] {
			t.Errorf("entry %d: %+v, want %s %s", i, s, want[2*i], want[2*i+1])
		}
	}
	if got[0].Description == nil || *got[0].Description != "GitHub" {
		t.Errorf("description: %v", got[0].Description)
	}
}
