package archive

import (
	"os"
	"path/filepath"
	"testing"
)

func TestExcluded(t *testing.T) {
	for _, c := range []struct {
		rel      string
		patterns []string
		isDir    bool
		want     bool
	}{
		{"node_modules", []string{"node_modules/"}, true, true},
		{"a/node_modules", []string{"node_modules/"}, true, true},
		{"a/node_modules/x.js", []string{"node_modules/"}, false, true},
		{"build", []string{"build/"}, false, false}, // a file named like a directory pattern
		{"x/y.pyc", []string{"*.pyc"}, false, true},
		{"x/y.py", []string{"*.pyc"}, false, false},
		{"secrets/prod", []string{"secrets/prod"}, false, true},
		{"secrets/prod/key", []string{"secrets/prod"}, false, true},
		{"other/secrets/prod", []string{"secrets/prod"}, false, false},
		{"a/test", []string{"*/test"}, true, true},
		{"a/b/test", []string{"*/test"}, true, false}, // anchored at the root
		{"out", []string{"out/"}, true, true},
		{"out", []string{"sub/out/"}, true, false},
		{"sub/out", []string{"sub/out/"}, false, false},
		{"sub/out/f", []string{"sub/out/"}, false, true},
	} {
		if got := Excluded(c.rel, c.patterns, c.isDir); got != c.want {
			t.Errorf("Excluded(%q, %q, dir=%v) = %v, want %v", c.rel, c.patterns, c.isDir, got, c.want)
		}
	}
}

func TestSensitiveGitInternal(t *testing.T) {
	for rel, want := range map[string]bool{
		".git/config": true, ".git/HEAD": false, ".git/logs/HEAD": true, ".git/modules/m/config": true,
		"sub/.git/FETCH_HEAD": true, ".git": false, "config": false, ".git/objects/ab/cd": false,
	} {
		if got := sensitiveGitInternal(rel); got != want {
			t.Errorf("sensitiveGitInternal(%q) = %v, want %v", rel, got, want)
		}
	}
}

func TestStripCredentials(t *testing.T) {
	for in, want := range map[string]string{
		"https://x-access-token:TOKEN@github.com/o/r.git": "https://github.com/o/r.git",
		"https://github.com/o/r.git":                      "https://github.com/o/r.git",
		"git@github.com:o/r.git":                          "git@github.com:o/r.git",
		"ssh://u:p@host":                                  "ssh://host",
	} {
		if got := stripCredentials(in); got != want {
			t.Errorf("stripCredentials(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRepoRoot(t *testing.T) {
	dir := t.TempDir()
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mk("one/a/repo/.git")
	mk("one/node_modules/dep/.git")
	mk("one/.hidden/r/.git")
	if got := RepoRoot(filepath.Join(dir, "one")); got != filepath.Join(dir, "one", "a", "repo") {
		t.Errorf("one repository: %s", got)
	}
	mk("two/x/.git")
	mk("two/y/.git")
	if got := RepoRoot(filepath.Join(dir, "two")); got != filepath.Join(dir, "two") {
		t.Errorf("two repositories: %s", got)
	}
	mk("deep/1/2/3/.git")
	if got := RepoRoot(filepath.Join(dir, "deep")); got != filepath.Join(dir, "deep", "1", "2", "3") {
		t.Errorf("a repository three levels down: %s", got)
	}
	mk("deeper/1/2/3/4/.git")
	if got := RepoRoot(filepath.Join(dir, "deeper")); got != filepath.Join(dir, "deeper") {
		t.Errorf("a repository four levels down: %s", got)
	}
	os.Symlink(filepath.Join(dir, "one", "a"), filepath.Join(dir, "linked"))
	mk("viaLink")
	os.Symlink(filepath.Join(dir, "one", "a"), filepath.Join(dir, "viaLink", "l"))
	if got := RepoRoot(filepath.Join(dir, "viaLink")); got != filepath.Join(dir, "viaLink") {
		t.Errorf("a repository behind a link: %s", got)
	}
}
