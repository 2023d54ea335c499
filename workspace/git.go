package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// existingDir is dir or its nearest ancestor that exists: git runs
// there to find the repository of a file whose directory was deleted.
func existingDir(dir string) string {
	for {
		if _, err := os.Stat(dir); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return dir
		}
		dir = parent
	}
}

// emptyTree is git's empty tree, the base of a repository without commits.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"--no-pager"}, args...)...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// repoRoot returns the repository holding dir, or "" if none.
func repoRoot(ctx context.Context, dir string) string {
	out, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// baseRef is ref, HEAD by default, or the empty tree before the first
// commit.
func baseRef(ctx context.Context, root, ref string) (string, error) {
	if ref == "" {
		ref = "HEAD"
	}
	if strings.HasPrefix(ref, "-") {
		return "", fmt.Errorf("invalid ref %q", ref)
	}
	if _, err := git(ctx, root, "rev-parse", "--verify", "--quiet", ref+"^{commit}"); err != nil {
		if ref == "HEAD" {
			return emptyTree, nil
		}
		return "", fmt.Errorf("unknown ref %q", ref)
	}
	return ref, nil
}

// Changes lists the files changed in the git repository holding the local
// directory dir against ref (HEAD if empty), untracked files included, in
// the agent server's /api/git/changes form: a rename is a deletion and an
// addition. Outside a repository it returns an empty list; a bad ref or a
// failing git is an error.
func Changes(ctx context.Context, dir, ref string) ([]GitChange, error) {
	changes := []GitChange{}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return changes, nil
	}
	root := repoRoot(ctx, dir)
	if root == "" {
		return changes, nil
	}
	ref, err := baseRef(ctx, root, ref)
	if err != nil {
		return nil, err
	}
	out, err := git(ctx, root, "diff", "--name-status", "-z", ref, "--")
	if err != nil {
		return nil, err
	}
	changes = append(changes, parseNameStatus(out)...)
	if untracked, err := git(ctx, root, "ls-files", "--others", "--exclude-standard", "-z"); err == nil {
		for p := range strings.SplitSeq(untracked, "\x00") {
			if p != "" {
				changes = append(changes, GitChange{"ADDED", p})
			}
		}
	}
	return changes, nil
}

// parseNameStatus reads the output of git diff --name-status -z: a rename
// is a deletion and an addition, a copy an addition.
func parseNameStatus(out string) []GitChange {
	changes := []GitChange{}
	f := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
	for i := 0; i < len(f) && f[i] != ""; {
		st := f[i]
		switch {
		case strings.HasPrefix(st, "R") && i+2 < len(f):
			changes = append(changes, GitChange{"DELETED", f[i+1]}, GitChange{"ADDED", f[i+2]})
			i += 3
			continue
		case strings.HasPrefix(st, "C") && i+2 < len(f):
			changes = append(changes, GitChange{"ADDED", f[i+2]})
			i += 3
			continue
		}
		if i+1 >= len(f) {
			break
		}
		status := "UPDATED"
		switch st {
		case "A":
			status = "ADDED"
		case "D":
			status = "DELETED"
		}
		changes = append(changes, GitChange{status, f[i+1]})
		i += 2
	}
	return changes
}

// Diff returns the local file as at ref (HEAD if empty) and as on disk,
// in the agent server's /api/git/diff form. Outside a repository both
// sides are nil.
func Diff(ctx context.Context, file, ref string) (*GitDiff, error) {
	var d GitDiff
	// A file missing from disk may be a deletion in the working tree: its
	// base side is the diff. Missing on both sides, it is an error (the
	// reference's GitPathError), not an empty diff.
	_, statErr := os.Lstat(file)
	missing := errors.Is(statErr, fs.ErrNotExist)
	missingErr := fmt.Errorf("file does not exist: %s: %w", file, fs.ErrNotExist)
	root := ""
	if file != "" {
		root = repoRoot(ctx, existingDir(filepath.Dir(file)))
	}
	if root == "" {
		if missing {
			return nil, missingErr
		}
		return &d, nil
	}
	trim := func(s string) *string {
		s = strings.TrimSuffix(s, "\n")
		return &s
	}
	d.Modified, d.Original = trim(""), trim("")
	f, fi, err := OpenRegular(file)
	switch {
	case err == nil:
		defer f.Close()
		if fi.Size() > MaxDiffFileSize {
			return nil, tooLarge(fi.Size())
		}
		// The size may grow while we read: read one byte past the limit.
		data, err := io.ReadAll(io.LimitReader(f, MaxDiffFileSize+1))
		if err != nil {
			return nil, err
		}
		if len(data) > MaxDiffFileSize {
			return nil, tooLarge(int64(len(data)))
		}
		d.Modified = trim(string(data))
	case errors.Is(err, ErrNotRegular):
		return nil, err
	}
	ref, err = baseRef(ctx, root, ref)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(root, file)
	atBase := false
	if err == nil && ref != emptyTree && !strings.HasPrefix(rel, "..") {
		blob := ref + ":" + filepath.ToSlash(rel)
		if out, err := git(ctx, root, "cat-file", "-s", blob); err == nil {
			atBase = true
			if n, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64); err == nil && n > MaxDiffFileSize {
				return nil, tooLarge(n)
			}
			if out, err := git(ctx, root, "show", blob); err == nil {
				d.Original = trim(out)
			}
		}
	}
	if missing && !atBase {
		return nil, missingErr
	}
	return &d, nil
}

// MaxDiffFileSize is the largest file, on either side, Diff returns: the
// answer carries both sides whole (the reference's limit, 1 MiB).
const MaxDiffFileSize = 1 << 20

// ErrTooLarge is returned by Diff for a file over MaxDiffFileSize.
var ErrTooLarge = errors.New("file too large for git diff")

func tooLarge(n int64) error {
	return fmt.Errorf("%w: %d bytes (max: %d bytes)", ErrTooLarge, n, MaxDiffFileSize)
}
