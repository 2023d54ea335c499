package plugin

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gohands/gohands/internal/testenv"
)

// publicRepo makes a git repository laid out as the public skills
// repository: skills/ and the default marketplace listing some of them.
func publicRepo(t *testing.T) string {
	t.Helper()
	testenv.Program(t, "git")
	dir := filepath.Join(t.TempDir(), "extensions")
	write(t, dir, map[string]string{
		"skills/github/SKILL.md":    "---\ndescription: GitHub work\n---\nUse gh.",
		"skills/docker/SKILL.md":    "---\ndescription: Docker work\n---\nUse docker.",
		"skills/unlisted/SKILL.md":  "---\ndescription: not in the marketplace\n---\nx",
		"marketplaces/default.json": `{"name": "default", "owner": {"name": "OpenHands"}, "plugins": [{"name": "github", "source": "./skills/github"}, {"name": "docker", "source": "./skills/docker"}, {"name": "gone", "source": "./skills/gone"}]}`,
		"marketplaces/small.json":   `{"name": "small", "owner": {"name": "OpenHands"}, "plugins": [{"name": "docker", "source": "./skills/docker"}]}`,
		"marketplaces/empty.json":   `{"name": "empty", "owner": {"name": "OpenHands"}, "plugins": []}`,
	})
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-qm", "skills"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

func TestLoadPublicSkills(t *testing.T) {
	repo := publicRepo(t)
	t.Setenv("EXTENSIONS_PATH", "")
	t.Setenv("EXTENSIONS_REF", "")
	t.Setenv("EXTENSIONS_REPO", "file://"+repo)
	opts := &FetchOptions{CacheDir: t.TempDir()}
	names := func(mp string) []string {
		t.Helper()
		skills, err := LoadPublicSkills(context.Background(), mp, opts)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range skills {
			out = append(out, s.Name)
		}
		return out
	}
	if got, want := names(""), []string{"github", "docker"}; !slices.Equal(got, want) {
		t.Errorf("default marketplace: %v, want %v", got, want)
	}
	if got, want := names("marketplaces/small.json"), []string{"docker"}; !slices.Equal(got, want) {
		t.Errorf("small marketplace: %v, want %v", got, want)
	}
	if got, want := names(AllPublicSkills), []string{"docker", "github", "unlisted"}; !slices.Equal(got, want) {
		t.Errorf("every skill: %v, want %v", got, want)
	}
	if got := names("marketplaces/empty.json"); len(got) != 0 {
		t.Errorf("a marketplace listing nothing loaded %v", got)
	}
	if _, err := LoadPublicSkills(context.Background(), "marketplaces/none.json", opts); err == nil {
		t.Error("a marketplace that does not exist loaded")
	}
	// A local copy named by EXTENSIONS_PATH is read in place of the
	// default repository.
	t.Setenv("EXTENSIONS_REPO", "")
	t.Setenv("EXTENSIONS_PATH", repo)
	if got, want := names(""), []string{"github", "docker"}; !slices.Equal(got, want) {
		t.Errorf("EXTENSIONS_PATH: %v, want %v", got, want)
	}
	t.Setenv("EXTENSIONS_PATH", "")
	t.Setenv("EXTENSIONS_REPO", "file:///nonexistent/extensions.git")
	if _, err := LoadPublicSkills(context.Background(), "", opts); err == nil || !strings.Contains(err.Error(), "file:///nonexistent/extensions.git") {
		t.Errorf("unreachable repository: %v, want an error naming it", err)
	}
}
