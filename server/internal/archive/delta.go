package archive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// emptyTree is git's empty tree: the base of a repository without commits.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// ErrNotRepository is returned by NewDelta for a directory outside any git
// work tree.
var ErrNotRepository = errors.New("not a git repository")

// ErrBadRef is returned by NewDelta for a base ref that does not resolve.
var ErrBadRef = errors.New("base ref could not be resolved")

// Delta is a git-delta archive ready to be written: the working-tree
// changes of a repository (tracked, untracked and deleted files, the
// excludes and the repository's .gitignore left out) against a base,
// staged in a scratch index so the repository's own index is untouched.
type Delta struct {
	dir   string
	ref   string
	specs []string
	index string
	// BaseCommit is the full commit the patch applies to ("" for the
	// empty tree).
	BaseCommit string
}

// NewDelta stages dir's changes against baseRef (when empty, HEAD, or the
// empty tree before the first commit), excludes left out. Close removes
// the scratch index.
func NewDelta(ctx context.Context, dir, baseRef string, excludes []string) (*Delta, error) {
	if strings.HasPrefix(baseRef, "-") {
		return nil, fmt.Errorf("%w: %q", ErrBadRef, baseRef)
	}
	if _, err := git(ctx, dir, nil, "rev-parse", "--is-inside-work-tree"); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, ErrNotRepository)
	}
	ref := baseRef
	if ref == "" {
		ref = "HEAD"
	}
	commit, err := git(ctx, dir, nil, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	switch {
	case err != nil && baseRef != "":
		return nil, fmt.Errorf("%w: %q", ErrBadRef, baseRef)
	case err != nil:
		ref, commit = emptyTree, ""
	}
	f, err := os.CreateTemp("", "gohands-archive-*.index")
	if err != nil {
		return nil, err
	}
	f.Close()
	os.Remove(f.Name()) // git makes it; an empty file is not an index
	d := &Delta{dir: dir, ref: ref, specs: pathspecs(excludes), index: f.Name(), BaseCommit: strings.TrimSpace(commit)}
	env := []string{"GIT_INDEX_FILE=" + d.index}
	if _, err := git(ctx, dir, env, "read-tree", ref); err != nil {
		d.Close()
		return nil, err
	}
	if _, err := git(ctx, dir, env, append([]string{"add", "-A", "--", "."}, d.specs...)...); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// WriteTo streams the patch (binary changes included) to w as git makes
// it.
func (d *Delta) WriteTo(ctx context.Context, w io.Writer) error {
	cmd := exec.CommandContext(ctx, "git", append([]string{"--no-pager", "diff", "--binary", "--cached", d.ref, "--", "."}, d.specs...)...)
	cmd.Dir = d.dir
	cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+d.index)
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &limited{b: &errb, n: 4 << 10}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("git diff: %w: %s", err, strings.TrimSpace(errb.String()))
	}
	return nil
}

// Close removes the scratch index.
func (d *Delta) Close() error {
	err := os.Remove(d.index)
	os.Remove(d.index + ".lock")
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// pathspecs turns excludes into git's exclude pathspecs, with Excluded's
// reading: tracked and untracked copies alike are left out.
func pathspecs(excludes []string) []string {
	var out []string
	for _, raw := range excludes {
		dirOnly := strings.HasSuffix(raw, "/")
		pat := strings.TrimRight(raw, "/")
		if pat == "" {
			continue
		}
		prefix := "**/"
		if strings.Contains(pat, "/") {
			prefix = ""
		}
		if !dirOnly {
			out = append(out, ":(glob,exclude)"+prefix+pat)
		}
		out = append(out, ":(glob,exclude)"+prefix+pat+"/**")
	}
	return out
}

// Metadata is a repository's identity, for the archive's headers.
type Metadata struct {
	Remote, Branch, HeadCommit string
}

// RepoMetadata returns what dir's repository says of itself; a field it
// cannot tell is empty.
func RepoMetadata(ctx context.Context, dir string) Metadata {
	var m Metadata
	m.Remote, _ = git(ctx, dir, nil, "config", "--get", "remote.origin.url")
	m.Remote = stripCredentials(strings.TrimSpace(m.Remote))
	if b, err := git(ctx, dir, nil, "rev-parse", "--abbrev-ref", "HEAD"); err == nil && strings.TrimSpace(b) != "HEAD" {
		m.Branch = strings.TrimSpace(b)
	}
	if h, err := git(ctx, dir, nil, "rev-parse", "--verify", "--quiet", "HEAD"); err == nil {
		m.HeadCommit = strings.TrimSpace(h)
	}
	return m
}

// stripCredentials removes the user information of a remote's URL (a
// tokenized clone keeps its token there): it must not leave the server.
func stripCredentials(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	host, path, _ := strings.Cut(rest, "/")
	if i := strings.LastIndexByte(host, '@'); i >= 0 {
		host = host[i+1:]
	}
	if path != "" || strings.Contains(rest, "/") {
		return scheme + "://" + host + "/" + path
	}
	return scheme + "://" + host
}

func git(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"--no-pager"}, args...)...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &limited{b: &errb, n: 4 << 10}
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// limited keeps the first n bytes written to it and drops the rest.
type limited struct {
	b *bytes.Buffer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
