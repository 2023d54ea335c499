package filewalk

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// makeTree writes files (slash-separated path -> content) under dir.
func makeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fixture is a tree exercising hidden entries, the three ignore files,
// negation, anchoring, directory-only rules and unicode names.
var fixture = map[string]string{
	".git/HEAD":              "ref: refs/heads/main\n",
	".git/info/exclude":      "excluded.txt\n",
	".gitignore":             "build/\n*.log\n!keep.log\n/rootonly.txt\ndocs/**/draft.md\n",
	".env":                   "SECRET=1\n",
	".hidden/inside.go":      "package hidden\n",
	"main.go":                "package main\n",
	"rootonly.txt":           "x\n",
	"excluded.txt":           "x\n",
	"sub/rootonly.txt":       "x\n",
	"sub/app.log":            "x\n",
	"sub/keep.log":           "x\n",
	"sub/.ignore":            "*.tmp\n",
	"sub/a.tmp":              "x\n",
	"sub/deeper/b.tmp":       "x\n",
	"sub/deeper/c.go":        "package c\n",
	"build/out.go":           "package out\n",
	"docs/guide/draft.md":    "x\n",
	"docs/guide/final.md":    "x\n",
	"docs/.rgignore":         "!*.tmp\nfinal.md\n",
	"docs/notes.tmp":         "x\n",
	"ünïcødé/日本語.go":         "package u\n",
	"space dir/file name.ts": "x\n",
	"web/src/a.ts":           "x\n",
	"web/src/b.tsx":          "x\n",
	"web/README.md":          "x\n",
}

func walkList(t *testing.T, root string, globs ...string) []string {
	t.Helper()
	over, err := ParseOverrides(globs...)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = Walk(context.Background(), root, &Options{Overrides: over}, func(path, rel string, d fs.DirEntry) error {
		if path != filepath.Join(root, filepath.FromSlash(rel)) {
			t.Errorf("path %q does not match rel %q", path, rel)
		}
		got = append(got, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	return got
}

func rgList(t *testing.T, rg, root string, globs ...string) []string {
	t.Helper()
	args := []string{"--files", "--no-ignore-global", root}
	for _, g := range globs {
		args = append(args, "-g", g)
	}
	args = append(args, "-g", "!.git")
	// rg matches anchored globs relative to its working directory.
	cmd := exec.Command(rg, args...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil && len(out) != 0 {
		t.Fatalf("rg %v: %v", args, err)
	}
	var list []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		rel, err := filepath.Rel(root, line)
		if err != nil {
			t.Fatal(err)
		}
		list = append(list, filepath.ToSlash(rel))
	}
	slices.Sort(list)
	return list
}

func needRG(t *testing.T) string {
	t.Helper()
	rg, err := exec.LookPath("rg")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("ripgrep (rg) is not installed; run scripts/deps.sh")
		}
		t.Skip("ripgrep (rg) is not installed")
	}
	return rg
}

func TestWalkSelection(t *testing.T) {
	root := t.TempDir()
	makeTree(t, root, fixture)
	got := walkList(t, root)
	want := []string{
		"docs/guide/final.md", // .rgignore ignores final.md but only in docs... see below
		"docs/notes.tmp",
		"main.go",
		"space dir/file name.ts",
		"sub/deeper/c.go",
		"sub/keep.log",
		"sub/rootonly.txt",
		"web/README.md",
		"web/src/a.ts",
		"web/src/b.tsx",
		"ünïcødé/日本語.go",
	}
	// docs/.rgignore has "final.md" (unanchored), so docs/guide/final.md is
	// ignored.
	want = slices.DeleteFunc(want, func(s string) bool { return s == "docs/guide/final.md" })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Walk selection (-want +got):\n%s", diff)
	}
}

// TestWalkMatchesRipgrep compares Walk with `rg --files` on the fixture for
// a range of override globs.
func TestWalkMatchesRipgrep(t *testing.T) {
	rg := needRG(t)
	root := t.TempDir()
	makeTree(t, root, fixture)
	for _, globs := range [][]string{
		nil,
		{"*.go"},
		{"**/*.go"},
		{"*.{ts,tsx}"},
		{"web/**"},
		{"src/*.ts"},
		{"web/src/*.ts"},
		{"/main.go"},
		{"*.log"},
		{".env"},
		{"*"},
		{"!*.go"},
		{"*.go", "!main.go"},
		{"**/deeper/*"},
		{"*.tmp"},
		{"日本語.go"},
		{"file name.ts"},
		{"rootonly.txt"},
	} {
		want := rgList(t, rg, root, globs...)
		got := walkList(t, root, globs...)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("globs %q: rg (-) vs Walk (+):\n%s", globs, diff)
		}
	}
}

// TestWalkOutsideRepo checks that .gitignore is not honoured outside a git
// repository while .ignore is, as ripgrep does.
func TestWalkOutsideRepo(t *testing.T) {
	root := t.TempDir()
	makeTree(t, root, map[string]string{
		".gitignore": "*.log\n",
		".ignore":    "*.tmp\n",
		"a.log":      "x",
		"b.tmp":      "x",
		"c.go":       "x",
	})
	got := walkList(t, root)
	if diff := cmp.Diff([]string{"a.log", "c.go"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if rg, err := exec.LookPath("rg"); err == nil {
		if diff := cmp.Diff(rgList(t, rg, root), got); diff != "" {
			t.Errorf("rg (-) vs Walk (+):\n%s", diff)
		}
	}
}

// TestWalkParentIgnore checks that ignore files above the root apply.
func TestWalkParentIgnore(t *testing.T) {
	top := t.TempDir()
	makeTree(t, top, map[string]string{
		".git/HEAD":          "x",
		".gitignore":         "gen/\n*.bak\n",
		"proj/a.go":          "x",
		"proj/a.bak":         "x",
		"proj/gen/z.go":      "x",
		"proj/.hidden/h.go":  "x",
		"proj/.hidden/h.bak": "x",
	})
	root := filepath.Join(top, "proj")
	got := walkList(t, root)
	if diff := cmp.Diff([]string{"a.go"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestWalkSkipsSymlinks(t *testing.T) {
	root := t.TempDir()
	makeTree(t, root, map[string]string{"d/f.txt": "x"})
	if err := os.Symlink("d/f.txt", filepath.Join(root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("d", filepath.Join(root, "dlink")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"d/f.txt"}, walkList(t, root)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestWalkStops(t *testing.T) {
	root := t.TempDir()
	makeTree(t, root, map[string]string{"a": "x", "b": "x", "c": "x"})
	n := 0
	err := Walk(context.Background(), root, nil, func(string, string, fs.DirEntry) error {
		n++
		if n == 2 {
			return fs.SkipAll
		}
		return nil
	})
	if err != nil || n != 2 {
		t.Errorf("SkipAll: err %v after %d files, want nil after 2", err, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Walk(ctx, root, nil, func(string, string, fs.DirEntry) error { return nil }); err == nil {
		t.Error("Walk with a cancelled context returned nil")
	}
}

func TestWalkErrors(t *testing.T) {
	dir := t.TempDir()
	makeTree(t, dir, map[string]string{"file": "x"})
	noop := func(string, string, fs.DirEntry) error { return nil }
	if err := Walk(context.Background(), filepath.Join(dir, "missing"), nil, noop); err == nil {
		t.Error("Walk of a missing dir returned nil")
	}
	if err := Walk(context.Background(), filepath.Join(dir, "file"), nil, noop); err == nil {
		t.Error("Walk of a file returned nil")
	}
}

func TestParseOverridesErrors(t *testing.T) {
	for _, g := range []string{"", "#x", "[abc", "{a,b", "!"} {
		if _, err := ParseOverrides(g); err == nil {
			t.Errorf("ParseOverrides(%q) = nil error", g)
		}
	}
	if _, err := ParseOverrides("*.go", "!x/**", "**/*.{a,b}"); err != nil {
		t.Errorf("valid globs: %v", err)
	}
}

// TestWalkNestedRepo checks that a repository inside another is not
// governed by the outer one's .gitignore, as with git and rg, while .ignore
// files still apply.
func TestWalkNestedRepo(t *testing.T) {
	top := t.TempDir()
	makeTree(t, top, map[string]string{
		".git/HEAD":        "x",
		".gitignore":       "*.log\n",
		".ignore":          "*.tmp\n",
		"outer.log":        "x",
		"outer.txt":        "x",
		"inner/.git/HEAD":  "x",
		"inner/a.log":      "x",
		"inner/b.tmp":      "x",
		"inner/sub/c.log":  "x",
		"inner/.gitignore": "*.txt\n",
		"inner/sub/d.txt":  "x",
		"inner/sub/e.go":   "x",
		"other/f.log":      "x",
		"other/g.go":       "x",
	})
	want := []string{"inner/a.log", "inner/sub/c.log", "inner/sub/e.go", "other/g.go", "outer.txt"}
	if diff := cmp.Diff(want, walkList(t, top)); diff != "" {
		t.Errorf("from the outer repo (-want +got):\n%s", diff)
	}
	inner := filepath.Join(top, "inner")
	if diff := cmp.Diff([]string{"a.log", "sub/c.log", "sub/e.go"}, walkList(t, inner)); diff != "" {
		t.Errorf("from the inner repo (-want +got):\n%s", diff)
	}
	if rg, err := exec.LookPath("rg"); err == nil {
		for _, root := range []string{top, inner} {
			if diff := cmp.Diff(rgList(t, rg, root), walkList(t, root)); diff != "" {
				t.Errorf("%s: rg (-) vs Walk (+):\n%s", root, diff)
			}
		}
	}
}

// TestWalkIgnoreSyntax compares Walk with rg on the finer points of
// .gitignore syntax.
func TestWalkIgnoreSyntax(t *testing.T) {
	rg := needRG(t)
	root := t.TempDir()
	makeTree(t, root, map[string]string{
		".git/HEAD": "x",
		".gitignore": "# a comment\n" +
			"\\#hash.txt\n" +
			"trailing.txt   \n" +
			"a/**/b.txt\n" +
			"doc/*.md\n" +
			"gone/\n" +
			"!gone/back.txt\n" +
			"*.o\n" +
			"!important.o\n" +
			"/top.txt\n" +
			"**/logs\n" +
			"[Bb]uild*/\n" +
			"q?.txt\n",
		"#hash.txt":          "x",
		"trailing.txt":       "x",
		"a/b.txt":            "x",
		"a/x/y/b.txt":        "x",
		"a/c.txt":            "x",
		"doc/r.md":           "x",
		"doc/deep/r.md":      "x",
		"gone/back.txt":      "x",
		"gone/other.txt":     "x",
		"x.o":                "x",
		"important.o":        "x",
		"sub/important.o":    "x",
		"top.txt":            "x",
		"sub/top.txt":        "x",
		"logs/l.txt":         "x",
		"deep/er/logs/m.txt": "x",
		"Build-1/z.txt":      "x",
		"builder/z.txt":      "x",
		"mybuild/z.txt":      "x",
		"q1.txt":             "x",
		"q12.txt":            "x",
		"keep.txt":           "x",
	})
	if diff := cmp.Diff(rgList(t, rg, root), walkList(t, root)); diff != "" {
		t.Errorf("rg (-) vs Walk (+):\n%s", diff)
	}
}
