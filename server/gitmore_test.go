package server_test

import (
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/internal/testenv"
)

// TestGitHistory runs the history routes on a real repository of three
// commits: commits pages newest first, a commit's changes (a rename is a
// deletion and an addition, the root commit all additions), a file's diff
// as a commit changed it (a deleted file still shows), and the refusals.
func TestGitHistory(t *testing.T) {
	t.Parallel()
	gitBin := testenv.Program(t, "git")
	repo := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(gitBin, args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Ann", "GIT_AUTHOR_EMAIL=a@x", "GIT_COMMITTER_NAME=Ann", "GIT_COMMITTER_EMAIL=a@x", "GIT_CONFIG_NOSYSTEM=1", "HOME="+repo)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("one\n"), 0o644)
	run("add", ".")
	run("commit", "-qm", "first")
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("two\n"), 0o644)
	run("commit", "-qam", "second")
	run("mv", "a.txt", "b.txt")
	run("commit", "-qm", "third")
	shas := strings.Fields(run("log", "--format=%H"))

	ts := newTestServer(t, nil)
	q := url.QueryEscape
	var page struct {
		Commits []struct{ SHA, ShortSHA, Subject, Author, Timestamp string } `json:"commits"`
		HasMore bool                                                         `json:"has_more"`
	}
	ts.must(200, "GET", "/api/git/commits?limit=2&path="+q(repo), nil, &page)
	if len(page.Commits) != 2 || !page.HasMore || page.Commits[0].SHA != shas[0] || page.Commits[0].Subject != "third" || page.Commits[1].Author != "Ann" {
		t.Errorf("commits: %+v", page)
	}
	ts.must(200, "GET", "/api/git/commits?path="+q(repo), nil, &page)
	if len(page.Commits) != 3 || page.HasMore {
		t.Errorf("all commits: %+v", page)
	}
	ts.must(200, "GET", "/api/git/commits?path="+q(t.TempDir()), nil, &page)
	if len(page.Commits) != 0 || page.HasMore {
		t.Errorf("outside a repository: %+v", page)
	}
	ts.must(422, "GET", "/api/git/commits?limit=0&path="+q(repo), nil, nil)

	var changes []struct{ Status, Path string }
	ts.must(200, "GET", "/api/git/commits/"+shas[0]+"/changes?path="+q(repo), nil, &changes)
	if len(changes) != 2 || changes[0] != (struct{ Status, Path string }{"DELETED", "a.txt"}) || changes[1].Path != "b.txt" {
		t.Errorf("rename commit: %+v", changes)
	}
	ts.must(200, "GET", "/api/git/commits/"+shas[2][:7]+"/changes?path="+q(repo), nil, &changes)
	if len(changes) != 1 || changes[0].Status != "ADDED" {
		t.Errorf("root commit: %+v", changes)
	}
	ts.must(400, "GET", "/api/git/commits/deadbeef/changes?path="+q(repo), nil, nil)
	ts.must(422, "GET", "/api/git/commits/--output=x/changes?path="+q(repo), nil, nil)

	var d struct{ Original, Modified *string }
	ts.must(200, "GET", "/api/git/diff?commit="+shas[1]+"&path="+q(filepath.Join(repo, "a.txt")), nil, &d)
	if d.Original == nil || *d.Original != "one\n" || d.Modified == nil || *d.Modified != "two\n" {
		t.Errorf("diff of the second commit (a.txt, deleted since): %+v", d)
	}
	ts.must(400, "GET", "/api/git/diff?ref=HEAD&commit="+shas[1]+"&path="+q(filepath.Join(repo, "a.txt")), nil, nil)
	ts.must(422, "GET", "/api/git/diff?commit=zz&path="+q(filepath.Join(repo, "a.txt")), nil, nil)

	var repos struct {
		Items        []any `json:"items"`
		MissingToken bool  `json:"missing_token"`
	}
	ts.must(200, "GET", "/api/git/repositories/search?provider=github", nil, &repos)
	if !repos.MissingToken || repos.Items == nil {
		t.Errorf("repositories without a token: %+v", repos)
	}
	ts.must(400, "GET", "/api/git/repositories/search?provider=gitlab", nil, nil)
	ts.must(422, "GET", "/api/git/repositories/search?provider=nope", nil, nil)
}
