package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// GitCommit is one commit of a repository's history, as the agent
// server's /api/git/commits lists it.
type GitCommit struct {
	SHA      string `json:"sha"`
	ShortSHA string `json:"short_sha"`
	Subject  string `json:"subject"`
	Author   string `json:"author"`
	// Timestamp is the author date, ISO 8601 with its UTC offset.
	Timestamp string `json:"timestamp"`
}

// GitCommitsPage is the newest commits of a repository.
type GitCommitsPage struct {
	Commits []GitCommit `json:"commits"`
	HasMore bool        `json:"has_more"`
}

// ErrNotRepository is returned for a directory that is no git repository.
var ErrNotRepository = errors.New("not a git repository")

// repoAt returns the repository whose root is the local directory dir.
func repoAt(ctx context.Context, dir string) (string, error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%w: %s", ErrNotRepository, dir)
	}
	root := repoRoot(ctx, dir)
	if root == "" {
		return "", fmt.Errorf("%w: %s", ErrNotRepository, dir)
	}
	return root, nil
}

// logFormat is one commit a line: full and short sha, author, author date,
// subject, separated by 0x1F (which none of them can hold).
const logFormat = "%H%x1f%h%x1f%an%x1f%aI%x1f%s"

// Commits returns the newest limit commits of HEAD in the repository at
// dir, newest first. Outside a repository, or before the first commit,
// the page is empty.
func Commits(ctx context.Context, dir string, limit int) (*GitCommitsPage, error) {
	page := &GitCommitsPage{Commits: []GitCommit{}}
	root, err := repoAt(ctx, dir)
	if err != nil {
		return page, nil
	}
	if _, err := git(ctx, root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"); err != nil {
		return page, nil // an unborn branch
	}
	out, err := git(ctx, root, "log", "--no-show-signature", "--format="+logFormat, "-n", strconv.Itoa(limit+1), "HEAD")
	if err != nil {
		return nil, err
	}
	for line := range strings.SplitSeq(strings.TrimRight(out, "\n"), "\n") {
		f := strings.Split(line, "\x1f")
		if len(f) != 5 {
			continue
		}
		page.Commits = append(page.Commits, GitCommit{SHA: f[0], ShortSHA: f[1], Author: f[2], Timestamp: f[3], Subject: f[4]})
	}
	if len(page.Commits) > limit {
		page.Commits, page.HasMore = page.Commits[:limit], true
	}
	return page, nil
}

// resolveCommit returns the full sha commit names; an unknown one is an
// error. Only hex is accepted, so commit can never reach git as an option.
func resolveCommit(ctx context.Context, root, commit string) (sha, parent string, err error) {
	if !IsSHA(commit) {
		return "", "", fmt.Errorf("invalid commit %q", commit)
	}
	out, err := git(ctx, root, "rev-parse", "--verify", commit+"^{commit}")
	if err != nil {
		return "", "", err
	}
	sha = strings.TrimSpace(out)
	parent = emptyTree
	if out, err := git(ctx, root, "rev-parse", "--verify", "--quiet", sha+"^"); err == nil {
		parent = strings.TrimSpace(out)
	}
	return sha, parent, nil
}

// IsSHA reports whether s can name a commit by its hash: 4 to 64 hex
// digits (so it can never reach git as an option).
func IsSHA(s string) bool {
	if len(s) < 4 || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// CommitChanges lists the files commit changed against its first parent
// (the empty tree for a root commit) in the repository at dir. Outside a
// repository the list is empty; an unknown commit is an error.
func CommitChanges(ctx context.Context, dir, commit string) ([]GitChange, error) {
	root, err := repoAt(ctx, dir)
	if err != nil {
		return []GitChange{}, nil
	}
	sha, parent, err := resolveCommit(ctx, root, commit)
	if err != nil {
		return nil, err
	}
	out, err := git(ctx, root, "diff", "--name-status", "-z", parent, sha, "--")
	if err != nil {
		return nil, err
	}
	return parseNameStatus(out), nil
}

// CommitDiff returns the local file as commit's first parent held it and
// as commit left it, both read from git (a file deleted since still
// shows). Outside a repository both sides are nil; a side where the file
// is absent is empty.
func CommitDiff(ctx context.Context, file, commit string) (*GitDiff, error) {
	var d GitDiff
	root := ""
	if file != "" {
		root = repoRoot(ctx, nearestDir(file))
	}
	if root == "" {
		return &d, nil
	}
	sha, parent, err := resolveCommit(ctx, root, commit)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(root, file)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil, fmt.Errorf("file is not within the git repository: %s", file)
	}
	show := func(rev string) (*string, error) {
		blob := rev + ":" + filepath.ToSlash(rel)
		s := ""
		out, err := git(ctx, root, "cat-file", "-s", blob)
		if err != nil {
			return &s, nil // absent on this side
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64); err == nil && n > MaxDiffFileSize {
			return nil, tooLarge(n)
		}
		if out, err := git(ctx, root, "show", blob); err == nil {
			s = out
		}
		return &s, nil
	}
	if d.Original, err = show(parent); err != nil {
		return nil, err
	}
	if d.Modified, err = show(sha); err != nil {
		return nil, err
	}
	return &d, nil
}

// nearestDir is the closest existing directory at or above p.
func nearestDir(p string) string {
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
		if d == filepath.Dir(d) {
			return d
		}
	}
}
