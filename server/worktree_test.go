package server_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server"
)

// gitIn runs git in dir and returns its output, trimmed.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// A start request with worktree true gives the conversation a git
// worktree of the workspace's repository under the server's worktree
// root, on branch <prefix><id>; the agent works there (its command runs
// in the worktree, the source checkout is untouched, and its system prompt
// says so), meta.json keeps the options, and DELETE removes the worktree
// but keeps its branch. Bad options are a 422 naming the field; a
// workspace outside any repository runs where it is, as in the reference.
func TestWorktree(t *testing.T) {
	testenv.Program(t, "git")
	repo, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo = filepath.Join(repo, "proj")
	if err := os.MkdirAll(filepath.Join(repo, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "sub", "a.txt"), []byte("on main\n"), 0o644)
	gitIn(t, repo, "add", ".")
	gitIn(t, repo, "commit", "-q", "-m", "first")
	gitIn(t, repo, "checkout", "-q", "-b", "feature")
	os.WriteFile(filepath.Join(repo, "sub", "a.txt"), []byte("on feature\n"), 0o644)
	gitIn(t, repo, "commit", "-q", "-am", "second")

	root := filepath.Join(t.TempDir(), "worktrees")
	ts := newTestServer(t, &server.Options{ConversationWorktreeRoot: root})
	model := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"pwd > where.txt && cat a.txt","security_risk":"LOW"}`}}},
		llmtest.Reply{Text: "done"},
	)
	body := ts.startBody(model, map[string]any{
		"workspace":        map[string]any{"working_dir": filepath.Join(repo, "sub"), "kind": "LocalWorkspace"},
		"worktree":         true,
		"worktree_options": map[string]any{"branch_prefix": "gh/"},
		"initial_message":  userText("work", true),
	})
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", body, &info)
	id := info["id"].(string)
	wt := filepath.Join(root, id, "proj")
	wantDir := filepath.Join(wt, "sub")
	if got := info["workspace"].(map[string]any)["working_dir"]; got != wantDir {
		t.Fatalf("workspace %v, want %s", got, wantDir)
	}
	ts.waitStatus(id, "finished")

	where, err := os.ReadFile(filepath.Join(wantDir, "where.txt"))
	if err != nil || strings.TrimSpace(string(where)) != wantDir {
		t.Errorf("the command ran in %q (%v), want %s", where, err, wantDir)
	}
	if _, err := os.Stat(filepath.Join(repo, "sub", "where.txt")); err == nil {
		t.Error("the command wrote in the source checkout")
	}
	// The default base is the main branch, not the checkout's HEAD.
	if a, _ := os.ReadFile(filepath.Join(wantDir, "a.txt")); string(a) != "on main\n" {
		t.Errorf("worktree's a.txt %q, want main's", a)
	}
	if b := gitIn(t, wt, "branch", "--show-current"); b != "gh/"+id {
		t.Errorf("worktree branch %q, want gh/%s", b, id)
	}
	if !strings.Contains(gitIn(t, repo, "worktree", "list"), wt) {
		t.Errorf("git does not list the worktree %s", wt)
	}
	if body := string(model.Requests()[0].RawBody); !strings.Contains(body, wantDir) || !strings.Contains(body, "gh/"+id) {
		t.Errorf("the system prompt does not name the worktree and its branch")
	}
	meta, err := os.ReadFile(filepath.Join(ts.opts.ConversationsPath, strings.ReplaceAll(id, "-", ""), "meta.json"))
	if err != nil || !strings.Contains(string(meta), `"worktree":true,"worktree_options":{"base":"default_branch","ref":null,"branch_prefix":"gh/"}`) {
		t.Errorf("meta.json (%v): %s", err, meta)
	}

	ts.must(200, "DELETE", "/api/conversations/"+id, nil, nil)
	if _, err := os.Stat(filepath.Join(root, id)); !os.IsNotExist(err) {
		t.Errorf("worktree left after DELETE: %v", err)
	}
	if strings.Contains(gitIn(t, repo, "worktree", "list"), wt) {
		t.Error("git still lists the deleted worktree")
	}
	if gitIn(t, repo, "branch", "--list", "gh/"+id) == "" {
		t.Error("DELETE removed the worktree's branch")
	}

	// base head: the checkout's HEAD.
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{
		"workspace": map[string]any{"working_dir": repo}, "worktree": true,
		"worktree_options": map[string]any{"base": "head"},
	}), &info)
	if a, _ := os.ReadFile(filepath.Join(root, info["id"].(string), "proj", "sub", "a.txt")); string(a) != "on feature\n" {
		t.Errorf("base head: a.txt %q, want the checkout's", a)
	}

	// Outside a repository: no worktree.
	plain := t.TempDir()
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{
		"workspace": map[string]any{"working_dir": plain}, "worktree": true,
	}), &info)
	if got := info["workspace"].(map[string]any)["working_dir"]; got != plain {
		t.Errorf("outside a repository: workspace %v, want %s", got, plain)
	}

	for _, bad := range []map[string]any{
		{"base": "ref"},
		{"base": "tip"},
		{"ref": "-x", "base": "ref"},
		{"branch_prefix": "-p"},
		{"colour": "red"},
	} {
		// Checked even without worktree, as the reference's model does.
		code, out := ts.do("POST", "/api/conversations", ts.startBody(model, map[string]any{
			"workspace": map[string]any{"working_dir": repo}, "worktree_options": bad,
		}))
		if code != 422 || !strings.Contains(string(out), `"worktree_options"`) {
			t.Errorf("worktree_options %v: %d %s, want 422 naming worktree_options", bad, code, out)
		}
	}
}
