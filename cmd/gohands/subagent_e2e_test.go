package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/llm/llmtest"
)

// gohands run --max-budget: a task sub-agent shares the run's budget. The
// parent's call spends $0.12 of $0.30; the sub-agent stops at its second
// call ($0.24 of the $0.18 left), before its answer, and the run ends on
// its budget (exit 1, MaxBudgetReached) without the parent's next call.
func TestE2ESubAgentSharesBudget(t *testing.T) {
	t.Parallel()
	usage := llmtest.Usage{PromptTokens: 100, CompletionTokens: 10} // $0.12 a call at the prices below
	look := llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("", "think", map[string]any{"thought": "looking"})}, Usage: usage}
	e := newE2E(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("t1", "task", map[string]any{"prompt": "look around"})}, Usage: usage},
		look, look,
		llmtest.Reply{Text: "summary", Usage: usage},
		finishReply("done"))
	cfg := `{"num_retries": 0, "timeout": 60, "input_cost_per_token": 0.001, "output_cost_per_token": 0.002}`
	if err := os.WriteFile(e.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.mustRun(exitError, e.args("--max-budget", "0.3", "delegate")...)
	if last := lastLine(r.stderr); !strings.Contains(last, "MaxBudgetReached") {
		t.Errorf("last stderr line = %q", last)
	}
	if n := e.srv.Remaining(); n != 2 {
		t.Errorf("%d replies left, want 2 (the sub-agent's answer and the parent's finish); stderr:\n%s", n, r.stderr)
		for _, q := range e.srv.Requests() {
			t.Logf("request: %.300s", q.RawBody[max(0, len(q.RawBody)-300):])
		}
	}
}

// gohands run killed with SIGKILL while its task sub-agent runs a command,
// then run again on the same conversation: the parent and the sub-agent
// each answer their action cut short with the restart error, the model
// resumes the task by its id, and the command is not run a second time.
func TestE2ESubAgentKillAndResume(t *testing.T) {
	t.Parallel()
	const marker = "sleep 6151"
	t.Cleanup(func() {
		// SIGKILL leaves the command the sub-agent started.
		for _, pid := range processesWith(marker) {
			exec.Command("kill", "-9", pid).Run()
		}
	})
	e := newE2E(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("t1", "task", map[string]any{"prompt": "look around"})}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("c1", "terminal", map[string]any{
			"command": "echo once >> ran.txt && touch started && " + marker, "timeout": 7000,
		})}},
	)
	p := e.start(e.args("delegate")...)
	p.waitFile(filepath.Join(e.work, "started"), 2*time.Minute)
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.wait(time.Minute)
	if e.status() != "running" {
		t.Errorf("status after SIGKILL %s, want running", e.status())
	}

	e.srv.Add(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("t2", "task", map[string]any{"prompt": "carry on", "resume": "task_00000001"})}},
		llmtest.Reply{Text: "looked around"},
		finishReply("done"),
	)
	e.mustRun(0, e.args("carry on")...)

	if b, _ := os.ReadFile(filepath.Join(e.work, "ran.txt")); string(b) != "once\n" {
		t.Errorf("ran.txt = %q: the command cut short ran again", b)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d model requests, want 5", len(reqs))
	}
	// Each side's first request after the restart answers its action cut
	// short with the restart error.
	for i, want := range map[int]string{2: "t1", 3: "c1"} {
		ids, texts := toolResults(t, reqs[i])
		if !slices.Contains(ids, want) || !strings.Contains(strings.Join(texts, "\n"), conversation.RestartError) {
			t.Errorf("request %d: results %v %q, want the restart error for %s", i, ids, texts, want)
		}
	}
	ids, texts := toolResults(t, reqs[4])
	if i := slices.Index(ids, "t2"); i < 0 || !strings.Contains(texts[i], "Task ID: task_00000001") || !strings.Contains(texts[i], "looked around") {
		t.Errorf("the parent's last request: results %v %q", ids, texts)
	}
	if e.status() != "finished" {
		t.Errorf("status %s, want finished", e.status())
	}
}
