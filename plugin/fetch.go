package plugin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gohands/gohands/skill"
)

// Source says where a plugin is: the start request's "plugins" entries
// (the reference's PluginSource).
type Source struct {
	// Source is "github:owner/repo[/path]", a git URL or a local path.
	Source string `json:"source"`
	// Ref is a branch, tag or commit of a git source.
	Ref *string `json:"ref"`
	// RepoPath is the plugin's directory inside the repository.
	RepoPath *string `json:"repo_path"`
}

// Validate checks RepoPath: relative, without "..".
func (s *Source) Validate() error {
	if strings.TrimSpace(s.Source) == "" {
		return errors.New("plugin: source is empty")
	}
	if s.RepoPath == nil {
		return nil
	}
	p := *s.RepoPath
	if strings.HasPrefix(p, "/") {
		return errors.New("plugin: repo_path must be relative, not absolute")
	}
	if slices.Contains(strings.Split(filepath.ToSlash(p), "/"), "..") {
		return errors.New("plugin: repo_path cannot contain '..' (parent directory traversal)")
	}
	return nil
}

// FetchOptions are Fetch's settings; nil means the defaults.
type FetchOptions struct {
	// CacheDir holds fetched repositories: <PersistenceDir>/cache/plugins
	// when empty.
	CacheDir string
	// Timeout bounds each git command (DefaultFetchTimeout, or
	// $GOHANDS_FETCH_TIMEOUT, when 0).
	Timeout time.Duration
	// Stale, when set, lets a git source whose remote cannot be reached
	// use the commit its ref resolved to at the last successful fetch, if
	// that copy is cached: Fetch returns it and calls Stale with the
	// error. Without it an unreachable remote is an error.
	Stale func(err error)
}

// DefaultFetchTimeout bounds one git command of Fetch.
const DefaultFetchTimeout = 2 * time.Minute

// FetchTimeoutEnv names a Go duration ("1s", "90s") that replaces the
// default timeouts of fetches (DefaultFetchTimeout, and the public
// repository's), so a test waits a second on a remote that never answers.
// A timeout set in FetchOptions is kept.
const FetchTimeoutEnv = "GOHANDS_FETCH_TIMEOUT"

// defaultTimeout is $GOHANDS_FETCH_TIMEOUT when it is a positive
// duration, else d.
func defaultTimeout(d time.Duration) time.Duration {
	if v, err := time.ParseDuration(os.Getenv(FetchTimeoutEnv)); err == nil && v > 0 {
		return v
	}
	return d
}

// CacheDir is where fetched plugins are kept for a user whose OpenHands
// directory is persistDir (~/.openhands).
func CacheDir(persistDir string) string {
	return filepath.Join(persistDir, "cache", "plugins")
}

var fullSHA = regexp.MustCompile(`^[0-9a-fA-F]{40}$`)

// Fetch makes the plugin of src available on disk and returns its
// directory and, for a git source, the commit it is at. A local path is
// used where it is. A git source is cloned into the cache directory, one
// directory per commit (resolved-refs/<sha>), filled in a temporary
// directory and renamed into place, so an interrupted fetch leaves nothing
// half-made; a source pinned to a commit that is cached is not fetched
// again. A source that cannot be reached is an error naming its URL
// (without credentials), after at most the timeout.
func Fetch(ctx context.Context, src Source, opts *FetchOptions) (dir, commit string, err error) {
	if err := src.Validate(); err != nil {
		return "", "", err
	}
	var o FetchOptions
	if opts != nil {
		o = *opts
	}
	if o.Timeout <= 0 {
		o.Timeout = defaultTimeout(DefaultFetchTimeout)
	}
	kind, loc, sub, err := parseSource(src.Source)
	if err != nil {
		return "", "", err
	}
	repoPath := ""
	if src.RepoPath != nil {
		repoPath = *src.RepoPath
	}
	if sub != "" {
		if repoPath != "" {
			return "", "", fmt.Errorf("plugin: GitHub shorthand %s already names a subdirectory; do not also give repo_path", src.Source)
		}
		repoPath = sub
	}
	if kind == sourceLocal {
		p := loc
		if rest, ok := strings.CutPrefix(p, "~"); ok {
			if home, err := os.UserHomeDir(); err == nil {
				p = filepath.Join(home, rest)
			}
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", "", fmt.Errorf("plugin: %w", err)
		}
		if _, err := os.Stat(abs); err != nil {
			return "", "", fmt.Errorf("plugin: local plugin path does not exist: %s", abs)
		}
		d, err := subdir(abs, repoPath, "local source "+src.Source)
		return d, "", err
	}
	if o.CacheDir == "" {
		home, _ := os.UserHomeDir()
		o.CacheDir = CacheDir(skill.PersistenceDir(home))
	}
	base := filepath.Join(o.CacheDir, cacheName(loc))
	ref := ""
	if src.Ref != nil {
		ref = *src.Ref
	}
	shown := Redact(loc)
	if fullSHA.MatchString(ref) {
		pinned := filepath.Join(base, "resolved-refs", strings.ToLower(ref))
		if _, err := os.Stat(pinned); err == nil {
			d, err := subdir(pinned, repoPath, "plugin repository "+shown)
			return d, strings.ToLower(ref), err
		}
	} else if sha, err := lsRemote(ctx, o.Timeout, loc, ref); err != nil {
		last := lastResolved(base, ref)
		pinned := filepath.Join(base, "resolved-refs", last)
		if _, statErr := os.Stat(pinned); o.Stale == nil || last == "" || statErr != nil {
			return "", "", err
		}
		o.Stale(err)
		d, err := subdir(pinned, repoPath, "plugin repository "+shown)
		return d, last, err
	} else if sha != "" {
		pinned := filepath.Join(base, "resolved-refs", sha)
		if _, err := os.Stat(pinned); err == nil {
			rememberResolved(base, ref, sha)
			d, err := subdir(pinned, repoPath, "plugin repository "+shown)
			return d, sha, err
		}
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", "", fmt.Errorf("plugin: %w", err)
	}
	tmp, err := os.MkdirTemp(base, ".fetch-")
	if err != nil {
		return "", "", fmt.Errorf("plugin: %w", err)
	}
	defer os.RemoveAll(tmp)
	if _, err := git(ctx, o.Timeout, "", "clone", "--quiet", "--no-checkout", "--", loc, tmp); err != nil {
		return "", "", fmt.Errorf("plugin: fetching %s: %w", shown, err)
	}
	target := "HEAD"
	if ref != "" {
		target = ref
		if _, err := git(ctx, o.Timeout, tmp, "rev-parse", "--verify", "--quiet", "origin/"+ref+"^{commit}"); err == nil {
			target = "origin/" + ref
		}
	}
	if _, err := git(ctx, o.Timeout, tmp, "checkout", "--quiet", "--detach", target); err != nil {
		return "", "", fmt.Errorf("plugin: %s has no ref %q: %w", shown, ref, err)
	}
	out, err := git(ctx, o.Timeout, tmp, "rev-parse", "HEAD")
	if err != nil {
		return "", "", fmt.Errorf("plugin: fetching %s: %w", shown, err)
	}
	sha := strings.TrimSpace(out)
	pinned := filepath.Join(base, "resolved-refs", sha)
	if _, err := subdir(tmp, repoPath, "plugin repository "+shown); err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(filepath.Dir(pinned), 0o755); err != nil {
		return "", "", fmt.Errorf("plugin: %w", err)
	}
	if err := os.Rename(tmp, pinned); err != nil {
		if _, statErr := os.Stat(pinned); statErr != nil {
			return "", "", fmt.Errorf("plugin: %w", err)
		}
		// Another fetch put the same commit in place first.
	}
	if !fullSHA.MatchString(ref) {
		rememberResolved(base, ref, sha)
	}
	d, err := subdir(pinned, repoPath, "plugin repository "+shown)
	return d, sha, err
}

// resolvedFile is where the commit a ref (HEAD when empty) of a cached
// repository last resolved to is kept, under its cache directory base.
func resolvedFile(base, ref string) string {
	if ref == "" {
		ref = "HEAD"
	}
	sum := sha256.Sum256([]byte(ref))
	return filepath.Join(base, "last-resolved", hex.EncodeToString(sum[:])[:16])
}

// rememberResolved records that ref resolved to sha; a failure only loses
// the fallback of FetchOptions.Stale.
func rememberResolved(base, ref, sha string) {
	p := resolvedFile(base, ref)
	if os.MkdirAll(filepath.Dir(p), 0o755) != nil {
		return
	}
	tmp := fmt.Sprintf("%s.%d", p, os.Getpid())
	if err := os.WriteFile(tmp, []byte(sha+"\n"), 0o644); err != nil || os.Rename(tmp, p) != nil {
		os.Remove(tmp)
	}
}

// lastResolved is the commit rememberResolved recorded for ref, or "".
func lastResolved(base, ref string) string {
	data, err := os.ReadFile(resolvedFile(base, ref))
	if sha := strings.TrimSpace(string(data)); err == nil && fullSHA.MatchString(sha) {
		return strings.ToLower(sha)
	}
	return ""
}

type sourceKind int

const (
	sourceLocal sourceKind = iota
	sourceGit
)

// parseSource classifies a source and returns its location (a URL or a
// path) and, for the github: shorthand, the subdirectory it names.
func parseSource(s string) (sourceKind, string, string, error) {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "github:"); ok {
		owner, rest, _ := strings.Cut(rest, "/")
		repo, sub, _ := strings.Cut(rest, "/")
		if owner == "" || repo == "" {
			return 0, "", "", fmt.Errorf("plugin: invalid GitHub shorthand %s: expected github:owner/repo[/path]", s)
		}
		return sourceGit, "https://github.com/" + owner + "/" + repo + ".git", strings.Trim(sub, "/"), nil
	}
	for _, p := range []string{"https://", "http://", "git://", "ssh://", "file://", "git@"} {
		if strings.HasPrefix(s, p) {
			return sourceGit, s, "", nil
		}
	}
	if strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~") || strings.HasPrefix(s, ".") || (strings.Contains(s, "/") && !strings.Contains(s, "://")) || filepath.IsAbs(s) {
		return sourceLocal, s, "", nil
	}
	return 0, "", "", fmt.Errorf("plugin: unable to parse plugin source %q: expected github:owner/repo, a git URL or a local path", s)
}

// subdir is base/sub, which must exist and stay inside base.
func subdir(base, sub, what string) (string, error) {
	sub = strings.Trim(sub, "/")
	if sub == "" {
		return base, nil
	}
	p := filepath.Join(base, filepath.FromSlash(sub))
	rel, err := filepath.Rel(base, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("plugin: subdirectory %q escapes %s", sub, what)
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("plugin: subdirectory %q not found in %s", sub, what)
	}
	return p, nil
}

// cacheName is a repository's cache directory: its name and a hash of its
// URL.
func cacheName(loc string) string {
	sum := sha256.Sum256([]byte(loc))
	name := strings.TrimSuffix(strings.TrimRight(loc, "/"), ".git")
	if i := strings.LastIndexAny(name, "/:"); i >= 0 {
		name = name[i+1:]
	}
	if name == "" {
		name = "repo"
	}
	return name + "-" + hex.EncodeToString(sum[:])[:16]
}

// lsRemote returns the commit ref (HEAD when empty) names at loc, or ""
// when no branch or tag has that name (it may be a commit).
func lsRemote(ctx context.Context, timeout time.Duration, loc, ref string) (string, error) {
	want := ref
	if want == "" {
		want = "HEAD"
	}
	out, err := git(ctx, timeout, "", "ls-remote", "--", loc, want, "refs/tags/"+want+"^{}")
	if err != nil {
		return "", fmt.Errorf("plugin: fetching %s: %w", Redact(loc), err)
	}
	var sha string
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		switch f[1] {
		case "refs/tags/" + want + "^{}":
			return f[0], nil // a tag's commit beats the tag object
		case want, "refs/heads/" + want, "refs/tags/" + want:
			if sha == "" {
				sha = f[0]
			}
		}
	}
	return sha, nil
}

// git runs one git command, bounded by timeout, never asking for
// credentials, and returns its output; its error carries git's message.
func git(ctx context.Context, timeout time.Duration, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "http.lowSpeedLimit=1", "-c", "http.lowSpeedTime=30", "-c", "core.hooksPath=/dev/null"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=", "GIT_SSH_COMMAND=ssh -o BatchMode=yes -o ConnectTimeout=20")
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return "", fmt.Errorf("git %s: no answer within %s", args[0], timeout)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("git %s: %s", args[0], redactAll(msg))
	}
	return stdout.String(), nil
}

// Redact hides the credentials of a URL ("https://****@host/...").
func Redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil || u.Host == "" {
		return s
	}
	u.User = nil
	return u.Scheme + "://****@" + strings.TrimPrefix(u.String(), u.Scheme+"://")
}

var urlCreds = regexp.MustCompile(`([a-z][a-z0-9+.-]*://)[^/@\s]+@`)

// redactAll hides the credentials of every URL in a message.
func redactAll(s string) string { return urlCreds.ReplaceAllString(s, "${1}****@") }
