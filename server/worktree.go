package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/skill"
)

// A start request with worktree true gives the conversation its own git
// worktree of the repository holding its workspace, as the reference
// 1.58.2 does: under Options.ConversationWorktreeRoot, at
// <root>/<conversation id>/<repository name>, on a new branch
// <branch_prefix><conversation id>. The agent works in the worktree (the
// stored workspace is its directory) and is told so in its system prompt;
// deleting the conversation removes the worktree (its branch stays). A
// workspace outside any repository gets no worktree, as in the reference.

// DefaultConversationWorktreeRoot is the reference's default root of
// conversation worktrees.
const DefaultConversationWorktreeRoot = "/tmp/conversation-worktrees"

// worktreeOptions is the reference's ConversationWorktreeOptions.
type worktreeOptions struct {
	Base         string  `json:"base"` // default_branch, head or ref
	Ref          *string `json:"ref"`
	BranchPrefix *string `json:"branch_prefix"`
}

var (
	gitRefPattern          = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]*$`)
	gitBranchPrefixPattern = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9._/-]*)?$`)
)

// decodeWorktreeOptions checks worktree_options as the reference's model
// does: no unknown key, base one of three, ref and branch_prefix names git
// cannot read as options, a ref for base "ref".
func decodeWorktreeOptions(raw json.RawMessage) (*worktreeOptions, error) {
	o := &worktreeOptions{Base: "default_branch"}
	if isNull(raw) {
		return o, nil
	}
	bad := func(typ, msg string, loc ...any) error {
		return &invalidError{loc: append([]any{"body", "worktree_options"}, loc...), typ: typ, msg: msg}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, bad("model_type", "Input should be an object")
	}
	for k := range fields {
		if k != "base" && k != "ref" && k != "branch_prefix" {
			return nil, bad("extra_forbidden", "Extra inputs are not permitted", k)
		}
	}
	if err := json.Unmarshal(raw, o); err != nil {
		return nil, bad("type_error", err.Error())
	}
	if o.Base == "" {
		o.Base = "default_branch"
	}
	switch {
	case o.Base != "default_branch" && o.Base != "head" && o.Base != "ref":
		return nil, bad("literal_error", "Input should be 'default_branch', 'head' or 'ref'", "base")
	case o.Ref != nil && !gitRefPattern.MatchString(*o.Ref):
		return nil, bad("string_pattern_mismatch", "String should match pattern '"+gitRefPattern.String()+"'", "ref")
	case o.BranchPrefix != nil && !gitBranchPrefixPattern.MatchString(*o.BranchPrefix):
		return nil, bad("string_pattern_mismatch", "String should match pattern '"+gitBranchPrefixPattern.String()+"'", "branch_prefix")
	case o.Base == "ref" && o.Ref == nil:
		return nil, bad("value_error", "Value error, A `ref` base needs a `ref`")
	}
	return o, nil
}

// worktreePlan is where a conversation's worktree goes.
type worktreePlan struct {
	repo      string // the repository's top directory
	source    string // the requested workspace
	root      string // the worktree
	workspace string // the agent's directory in it
	branch    string
	opts      *worktreeOptions
}

// planWorktree returns the plan of conversation id's worktree of the
// repository holding workDir, or nil when workDir is in none.
func planWorktree(ctx context.Context, workRoot, id, workDir string, o *worktreeOptions) *worktreePlan {
	source, err := filepath.EvalSymlinks(workDir)
	if err != nil {
		return nil
	}
	top, err := runGit(ctx, source, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil
	}
	repo, err := filepath.EvalSymlinks(top)
	if err != nil {
		return nil
	}
	rel, err := filepath.Rel(repo, source)
	if err != nil || strings.HasPrefix(rel, "..") {
		return nil
	}
	prefix := "openhands/"
	if o.BranchPrefix != nil {
		prefix = *o.BranchPrefix
	}
	root := filepath.Join(workRoot, id, filepath.Base(repo))
	return &worktreePlan{
		repo: repo, source: source, root: root, workspace: filepath.Join(root, rel),
		branch: prefix + id, opts: o,
	}
}

// guidance is the text added to the agent's system prompt: where to work,
// on which branch, and what to leave alone.
func (p *worktreePlan) guidance() string {
	base := "the main (or master) branch"
	switch p.opts.Base {
	case "head":
		base = "the HEAD of " + p.source
	case "ref":
		base = "`" + *p.opts.Ref + "`"
	}
	return "You work in a git worktree of your own: " + p.workspace +
		" (worktree root " + p.root + ", branch " + p.branch + ").\n" +
		"Keep every file and git change inside it, on a new, well-named branch based on " + base +
		". Do not go back to the original checkout, " + p.source + "."
}

// create makes the worktree, replacing one left at its place.
func (p *worktreePlan) create(ctx context.Context) error {
	if err := os.MkdirAll(filepath.Dir(p.root), 0o755); err != nil {
		return err
	}
	if _, err := os.Lstat(p.root); err == nil {
		if _, err := runGit(ctx, p.repo, "worktree", "remove", "--force", p.root); err != nil {
			os.RemoveAll(p.root)
		}
	}
	if _, err := runGit(ctx, p.repo, "worktree", "prune"); err != nil {
		return err
	}
	if out, _ := runGit(ctx, p.repo, "branch", "--list", p.branch); out != "" {
		if _, err := runGit(ctx, p.repo, "branch", "-D", p.branch); err != nil {
			return err
		}
	}
	start, err := p.startPoint(ctx)
	if err != nil {
		return err
	}
	if _, err := runGit(ctx, p.repo, "worktree", "add", "-b", p.branch, p.root, start); err != nil {
		return err
	}
	return os.MkdirAll(p.workspace, 0o755)
}

// startPoint is what the worktree branches from: HEAD, the given ref, or
// the default branch (origin's, fetched, else main, master, HEAD).
func (p *worktreePlan) startPoint(ctx context.Context) (string, error) {
	hasOrigin := func() bool { _, err := runGit(ctx, p.repo, "remote", "get-url", "origin"); return err == nil }
	fetch := func() {
		fctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		// Cached refs serve when the fetch fails (offline).
		runGit(fctx, p.repo, "fetch", "origin")
	}
	switch p.opts.Base {
	case "head":
		return "HEAD", nil
	case "ref":
		if hasOrigin() {
			fetch()
		}
		return *p.opts.Ref, nil
	}
	if hasOrigin() {
		fetch()
		if ref, err := runGit(ctx, p.repo, "symbolic-ref", "refs/remotes/origin/HEAD"); err == nil {
			if b, ok := strings.CutPrefix(ref, "refs/remotes/origin/"); ok {
				return "origin/" + b, nil
			}
		}
	}
	for _, b := range []string{"main", "master"} {
		if _, err := runGit(ctx, p.repo, "show-ref", "--verify", "--quiet", "refs/heads/"+b); err == nil {
			return b, nil
		}
	}
	return "HEAD", nil
}

// conversationWorktreeDir returns the directory under root holding the
// worktree of a conversation working in workDir, or "" when workDir is
// not under root. (A fork works in its source's worktree.)
func conversationWorktreeDir(root, workDir string) string {
	if root == "" || workDir == "" {
		return ""
	}
	rel, err := filepath.Rel(filepath.Clean(root), filepath.Clean(workDir))
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return ""
	}
	first, _, _ := strings.Cut(rel, string(filepath.Separator))
	return filepath.Join(root, first)
}

// removeConversationWorktrees removes dir, a conversation's directory
// under the worktree root, and the repositories' records of the worktrees
// it held; their branches stay.
func removeConversationWorktrees(ctx context.Context, dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return nil
	}
	var repos []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		wt := filepath.Join(dir, e.Name())
		// A worktree's .git is a file naming its repository.
		if fi, err := os.Lstat(filepath.Join(wt, ".git")); err != nil || !fi.Mode().IsRegular() || !e.IsDir() {
			continue
		}
		if common, err := runGit(ctx, wt, "rev-parse", "--path-format=absolute", "--git-common-dir"); err == nil {
			repos = append(repos, common)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	var errs []error
	for _, r := range repos {
		if _, err := runGit(ctx, r, "worktree", "prune"); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// runGit runs git in dir and returns its output, trimmed. The repository's
// config is the agent's to write: git's fsmonitor hook is turned off so
// that it cannot run a command of the agent's in the server.
func runGit(ctx context.Context, dir string, args ...string) (string, error) {
	full := append([]string{"--no-pager", "--no-optional-locks", "-c", "core.fsmonitor=false", "-C", dir}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// stored is the options as meta.json keeps them (the reference's model,
// every field), or nil.
func (o *worktreeOptions) stored() json.RawMessage {
	if o == nil {
		return nil
	}
	prefix := "openhands/"
	if o.BranchPrefix != nil {
		prefix = *o.BranchPrefix
	}
	b, _ := json.Marshal(struct {
		Base         string  `json:"base"`
		Ref          *string `json:"ref"`
		BranchPrefix string  `json:"branch_prefix"`
	}{o.Base, o.Ref, prefix})
	return b
}

// withSystemSuffix returns ag with text appended to its agent context's
// system_message_suffix (after a blank line), as the reference adds launch
// guidance. Agents of other kinds have no such context and are returned
// unchanged.
func withSystemSuffix(ag conversation.Agent, text string) conversation.Agent {
	a, ok := ag.(*agent.Agent)
	if !ok {
		return ag
	}
	var c skill.AgentContext
	if !isNull(a.AgentContext) {
		if err := json.Unmarshal(a.AgentContext, &c); err != nil {
			return ag
		}
	}
	if s := strings.TrimSpace(c.SystemMessageSuffix); s != "" {
		c.SystemMessageSuffix = s + "\n\n" + text
	} else {
		c.SystemMessageSuffix = text
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return ag
	}
	a.AgentContext = raw
	return a
}
