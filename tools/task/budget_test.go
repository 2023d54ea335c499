package task_test

import (
	"errors"
	"testing"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/task"
)

// A sub-agent's costs count toward the parent's max_budget_per_run: the
// parent's own call stays below the budget, the sub-agent's pushes the
// total over it, and the parent's run stops with MaxBudgetReached.
func TestSubAgentCostsCountTowardBudget(t *testing.T) {
	cfg := testConfig()
	in, out := 0.001, 0.002
	cfg.InputCostPerToken, cfg.OutputCostPerToken = &in, &out
	usage := llmtest.Usage{PromptTokens: 100, CompletionTokens: 10} // $0.12 a call
	l, err := llm.New(cfg, &llm.Options{Provider: llmtest.NewProvider(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("t1", "task", map[string]any{"prompt": "summarise"})}, Usage: usage},
		llmtest.Reply{Text: "summary", Usage: usage}, // the sub-agent
		llmtest.Reply{Text: "done", Usage: usage},
	)})
	if err != nil {
		t.Fatal(err)
	}
	a := agent.New(cfg, []tool.Spec{{Name: task.ToolSetName}}, &agent.Options{Model: l})
	parent, err := conversation.New(ctx, a, t.TempDir(), &conversation.LocalOptions{
		Backend: filestore.NewBackend(t.TempDir(), nil), MaxBudgetPerRun: 0.2,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { parent.Close() })
	if err := parent.SendMessage(ctx, event.UserMessage("go")); err != nil {
		t.Fatal(err)
	}
	err = parent.Run(ctx)
	var re *conversation.RunError
	if !errors.As(err, &re) || re.Code != conversation.CodeMaxBudget {
		t.Fatalf("Run: %v, want %s", err, conversation.CodeMaxBudget)
	}
	stats := parent.State().Fields().Stats
	if stats.UsageToMetrics["task:task_00000001"] == nil {
		t.Fatalf("no sub-agent metrics in %v", stats.UsageToMetrics)
	}
	if total := stats.TotalCost(); total < 0.24-1e-9 {
		t.Errorf("total %v", total)
	}
}
