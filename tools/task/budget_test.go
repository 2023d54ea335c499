package task_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// budgetUsage is what every call of runOnBudget's model costs: $0.12.
var budgetUsage = llmtest.Usage{PromptTokens: 100, CompletionTokens: 10}

// runOnBudget runs a turn of a parent with the task tool on a budget of
// budget dollars a run, its model (the sub-agent's too) answering replies
// at $0.001 an input token and $0.002 an output token. The run must stop
// on the budget; it returns the parent and the model's script.
func runOnBudget(t *testing.T, budget float64, replies ...llmtest.Reply) (*conversation.LocalConversation, *llmtest.Provider) {
	t.Helper()
	cfg := testConfig()
	in, out := 0.001, 0.002
	cfg.InputCostPerToken, cfg.OutputCostPerToken = &in, &out
	p := llmtest.NewProvider(t, replies...)
	l, err := llm.New(cfg, &llm.Options{Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	a := agent.New(cfg, []tool.Spec{{Name: task.ToolSetName}}, &agent.Options{Model: l})
	parent, err := conversation.New(ctx, a, t.TempDir(), &conversation.LocalOptions{
		Backend: filestore.NewBackend(t.TempDir(), nil), MaxBudgetPerRun: budget,
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
	return parent, p
}

// A sub-agent's costs count toward the parent's max_budget_per_run: the
// parent's own call stays below the budget, the sub-agent's pushes the
// total over it, and the parent's run stops with MaxBudgetReached.
func TestSubAgentCostsCountTowardBudget(t *testing.T) {
	parent, _ := runOnBudget(t, 0.2,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("t1", "task", map[string]any{"prompt": "summarise"})}, Usage: budgetUsage},
		llmtest.Reply{Text: "summary", Usage: budgetUsage}, // the sub-agent
		llmtest.Reply{Text: "done", Usage: budgetUsage},
	)
	stats := parent.State().Fields().Stats
	if stats.UsageToMetrics["task:task_00000001"] == nil {
		t.Fatalf("no sub-agent metrics in %v", stats.UsageToMetrics)
	}
	if total := stats.TotalCost(); total < 0.24-1e-9 {
		t.Errorf("total %v", total)
	}
}

// A sub-agent shares what is left of the caller's budget: the parent's
// call spends $0.12 of $0.30, so the sub-agent stops once its own calls
// reach $0.18 (its second), before it finishes, with the reference's
// budget error as the task's result; the parent then stops on its budget.
func TestSubAgentSharesCallersBudget(t *testing.T) {
	look := llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("v", "file_editor", map[string]any{"command": "view", "path": "/"})}, Usage: budgetUsage}
	parent, p := runOnBudget(t, 0.3,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("t1", "task", map[string]any{"prompt": "look around"})}, Usage: budgetUsage},
		look, look, // the sub-agent, stopped after the second
		llmtest.Reply{Text: "summary", Usage: budgetUsage},
		llmtest.Reply{Text: "done", Usage: budgetUsage},
	)
	if o := observations(t, parent)["t1"]; o == nil || !o.IsError || !strings.Contains(text(o), "maximum budget limit ($0.1800)") {
		t.Errorf("task result: %+v", o)
	}
	if n := p.Remaining(); n != 2 {
		t.Errorf("%d replies left, want 2 (the sub-agent's answer and the parent's)", n)
	}
}

// A sub-agent's stuck detector is on or off as its caller's.
func TestSubAgentStuckDetection(t *testing.T) {
	for _, off := range []bool{false, true} {
		p := llmtest.NewProvider(t,
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("t1", "task", map[string]any{"prompt": "say hi"})}},
			llmtest.Reply{Text: "hi"},
			llmtest.Reply{Text: "done"},
		)
		l, err := llm.New(testConfig(), &llm.Options{Provider: p})
		if err != nil {
			t.Fatal(err)
		}
		a := agent.New(testConfig(), []tool.Spec{{Name: task.ToolSetName}}, &agent.Options{Model: l})
		parent, err := conversation.New(ctx, a, t.TempDir(), &conversation.LocalOptions{
			Backend: filestore.NewBackend(t.TempDir(), nil), DisableStuckDetection: off,
		})
		if err != nil {
			t.Fatal(err)
		}
		runTurn(t, parent, "go")
		parent.Close()
		states, _ := filepath.Glob(filepath.Join(parent.Dir(), "subagents", "*", "base_state.json"))
		if len(states) != 1 {
			t.Fatalf("sub-conversations: %v", states)
		}
		b, err := os.ReadFile(states[0])
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Stuck bool `json:"stuck_detection"`
		}
		if err := json.Unmarshal(b, &st); err != nil || st.Stuck == off {
			t.Errorf("caller's stuck detection off=%v: the sub-agent's stuck_detection %v (%v)", off, st.Stuck, err)
		}
	}
}
