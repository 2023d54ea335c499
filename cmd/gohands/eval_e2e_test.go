package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/eval/starter"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/workspace/docker/dockertest"
)

// gohands eval runs the built-in starter suite with a scripted model that
// solves it, prints the summary, resumes, and compares result sets.
func TestE2EEvalStarter(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	p, err := llmtest.ParsePlaybook(starter.Playbook())
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewResponder(t, p.Respond, nil)
	e.env = append(e.env, "LLM_BASE_URL="+srv.URL+"/v1") // the last value wins
	out := filepath.Join(t.TempDir(), "results")

	r := e.mustRun(0, "eval", "--llm-config", e.config, "--out", out, "--parallel", "2")
	if !strings.Contains(r.stdout, "| openai_gpt-4o | openai/gpt-4o | 4/4 | 100% |") {
		t.Errorf("summary:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	if n := strings.Count(r.stderr, ": success"); n != 0 && n != 4 {
		t.Errorf("progress lines:\n%s", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "summary.json")); err != nil {
		t.Error(err)
	}

	// Again with the same --out: every task is taken from the first run.
	r = e.mustRun(0, "eval", "--llm-config", e.config, "--out", out)
	if n := strings.Count(r.stderr, "(from an earlier run)"); n != 4 {
		t.Errorf("resumed %d tasks, want 4:\n%s", n, r.stderr)
	}

	// The conversation of a task is in the standard layout.
	convs := filepath.Join(out, "openai_gpt-4o", "find-fact", "conversations")
	r = e.mustRun(0, "ls", "--persistence-dir", convs)
	if !strings.Contains(r.stdout, "finished") {
		t.Errorf("ls of a task's conversations:\n%s", r.stdout)
	}

	r = e.mustRun(0, "eval", "compare", out, out)
	if !strings.Contains(r.stdout, "| openai_gpt-4o | find-fact | success") {
		t.Errorf("compare:\n%s", r.stdout)
	}

	// Bad usage is a clear error.
	r = e.mustRun(2, "eval", "--out", out, filepath.Join(t.TempDir(), "missing"))
	if !strings.Contains(r.stderr, "no such file") {
		t.Errorf("missing suite: %s", r.stderr)
	}
}

// gohands eval --sandbox docker runs each task in a container of the
// image; the agent there reaches the scripted model on this machine, and
// the task's conversation lands in the results in the standard layout.
func TestE2EEvalDocker(t *testing.T) {
	t.Parallel()
	o := dockertest.Options(t)
	e := newE2E(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("c1", "terminal", map[string]any{"command": "test -f /.dockerenv && echo 8123 > answer.txt"})}},
		finishReply("the answer is in answer.txt"),
	)
	suite := filepath.Join(t.TempDir(), "suite", "boxed")
	os.MkdirAll(filepath.Join(suite, "repo"), 0o755)
	os.WriteFile(filepath.Join(suite, "repo", "README"), []byte("a task\n"), 0o644)
	os.WriteFile(filepath.Join(suite, "task.json"), []byte(`{"instruction": "write the answer", "verify": "grep -qx 8123 answer.txt", "collect": ["answer.txt"]}`), 0o644)
	out := filepath.Join(t.TempDir(), "results")

	r := e.mustRun(0, "eval", "--llm-config", e.config, "--sandbox", "docker", "--image", o.Image, "--out", out, filepath.Dir(suite))
	if !strings.Contains(r.stdout, "| 1/1 | 100% |") {
		t.Errorf("summary:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	task := filepath.Join(out, "openai_gpt-4o", "boxed")
	if b, err := os.ReadFile(filepath.Join(task, "files", "answer.txt")); err != nil || string(b) != "8123\n" {
		t.Errorf("collected answer.txt: %q %v", b, err)
	}
	r = e.mustRun(0, "ls", "--persistence-dir", filepath.Join(task, "conversations"))
	if !strings.Contains(r.stdout, "finished") {
		t.Errorf("ls of the task's conversations:\n%s", r.stdout)
	}

	r = e.mustRun(2, "eval", "--sandbox", "vm", "--out", out, filepath.Dir(suite))
	if !strings.Contains(r.stderr, `--sandbox "vm"`) {
		t.Errorf("unknown sandbox: %s", r.stderr)
	}
}

// gohands eval killed by SIGKILL in the middle of a task resumes: the
// finished task is kept, the interrupted one runs again from the start.
func TestE2EEvalKilled(t *testing.T) {
	t.Parallel()
	marks := t.TempDir()
	e := newE2E(t,
		finishReply("a is done"),
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("c1", "terminal", map[string]any{"command": "touch " + marks + "/started && sleep 60", "timeout": 120})}},
	)
	suite := evalSuite(t, "a", "b")
	out := filepath.Join(t.TempDir(), "results")
	args := []string{"eval", "--llm-config", e.config, "--out", out, suite}

	p := e.start(args...)
	p.waitFile(filepath.Join(marks, "started"), 2*time.Minute)
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.wait(time.Minute)
	if _, err := os.Stat(filepath.Join(out, "openai_gpt-4o", "a", "result.json")); err != nil {
		t.Errorf("the finished task's result: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "openai_gpt-4o", "b", "result.json")); err == nil {
		t.Errorf("the interrupted task has a result")
	}

	e.srv.Add(finishReply("b is done"))
	r := e.mustRun(0, args...)
	if n := strings.Count(r.stderr, "(from an earlier run)"); n != 1 {
		t.Errorf("resumed %d tasks, want 1:\n%s", n, r.stderr)
	}
	if !strings.Contains(r.stdout, "| 2/2 | 100% |") {
		t.Errorf("summary after resuming:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
}

// evalSuite writes a suite of trivial tasks with the given ids (each a
// repository with a README, the instruction "task ID" and a verifier that
// passes) and returns its directory.
func evalSuite(t *testing.T, ids ...string) string {
	t.Helper()
	suite := filepath.Join(t.TempDir(), "suite")
	for _, id := range ids {
		os.MkdirAll(filepath.Join(suite, id, "repo"), 0o755)
		os.WriteFile(filepath.Join(suite, id, "repo", "README"), []byte(id+"\n"), 0o644)
		os.WriteFile(filepath.Join(suite, id, "task.json"), []byte(`{"instruction": "task `+id+`", "verify": "true"}`), 0o644)
	}
	return suite
}
