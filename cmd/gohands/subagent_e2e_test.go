package main

import (
	"os"
	"strings"
	"testing"

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
