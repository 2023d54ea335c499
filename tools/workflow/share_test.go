package workflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/security"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/workflow"
)

// scriptedParent is a stored conversation with the workflow tool whose
// model (the sub-agents' too, in call order) answers replies at $0.001 an
// input token and $0.002 an output token, its first message sent.
func scriptedParent(t *testing.T, opts *conversation.LocalOptions, replies ...llmtest.Reply) (*conversation.LocalConversation, *llmtest.Provider) {
	t.Helper()
	testenv.Program(t, "python3")
	cfg := testConfig()
	in, out := 0.001, 0.002
	cfg.InputCostPerToken, cfg.OutputCostPerToken = &in, &out
	p := llmtest.NewProvider(t, replies...)
	l, err := llm.New(cfg, &llm.Options{Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	a := agent.New(cfg, []tool.Spec{{Name: workflow.ToolSetName}}, &agent.Options{Model: l})
	opts.Backend = filestore.NewBackend(t.TempDir(), nil)
	c, err := conversation.New(t.Context(), a, t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.SendMessage(t.Context(), event.UserMessage("go")); err != nil {
		t.Fatal(err)
	}
	return c, p
}

// workflowCall is the parent's call of a workflow running one sub-agent.
var workflowCall = llmtest.ToolCall{ID: "w1", Name: workflow.Name, Arguments: llmtest.Args(map[string]any{
	"name": "look", "script": "async def main(wf):\n    return await wf.run_agent('look around')\n",
})}

// observationOf returns the workflow's observation in c's log.
func observationOf(t *testing.T, c *conversation.LocalConversation) *workflow.Observation {
	t.Helper()
	log := c.State().Events()
	for i := range log.Len() {
		e, err := log.Event(t.Context(), i)
		if err != nil {
			t.Fatal(err)
		}
		if o, ok := e.(*event.ObservationEvent); ok {
			if w, ok := o.Observation.(*workflow.Observation); ok {
				return w
			}
		}
	}
	t.Fatal("no workflow observation")
	return nil
}

// A workflow's sub-agent spends from its caller's budget: the parent's
// call spends $0.12 of $0.30, so the sub-agent stops once its own calls
// reach $0.18 (its second), with the budget error as the workflow's
// error; its costs are in the parent's stats, and the parent stops on its
// budget without calling its model again.
func TestSubAgentSharesCallersBudget(t *testing.T) {
	t.Parallel()
	usage := llmtest.Usage{PromptTokens: 100, CompletionTokens: 10} // $0.12
	look := llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "v", Name: "file_editor", Arguments: `{"command":"view","path":"/"}`}}, Usage: usage}
	c, p := scriptedParent(t, &conversation.LocalOptions{MaxBudgetPerRun: 0.3},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{workflowCall}, Usage: usage},
		look, look, // the sub-agent, stopped after the second
		llmtest.Reply{Text: "summary", Usage: usage},
		llmtest.Reply{Text: "done", Usage: usage},
	)
	err := c.Run(t.Context())
	var re *conversation.RunError
	if !errors.As(err, &re) || re.Code != conversation.CodeMaxBudget {
		t.Fatalf("Run: %v, want %s", err, conversation.CodeMaxBudget)
	}
	if o := observationOf(t, c); !o.IsError || !strings.Contains(event.TextOf(o.Content), "maximum budget limit ($0.1800)") {
		t.Errorf("workflow result %+v: %q", o, event.TextOf(o.Content))
	}
	if n := p.Remaining(); n != 2 {
		t.Errorf("%d replies left, want 2 (the sub-agent's answer and the parent's)", n)
	}
	sub := c.State().Fields().Stats.UsageToMetrics["task:workflow_00000001"]
	if sub == nil || sub.AccumulatedCost < 0.24-1e-9 {
		t.Errorf("the sub-agent's costs in the parent's stats: %+v", sub)
	}
}

// A workflow's sub-agent runs under its caller's confirmation policy and
// stuck detection setting.
func TestSubAgentInheritsPolicyAndStuckDetection(t *testing.T) {
	t.Parallel()
	policy := &security.ConfirmRisky{Threshold: event.RiskHigh} // unknown risks are not confirmed: nothing waits
	c, _ := scriptedParent(t, &conversation.LocalOptions{ConfirmationPolicy: policy, DisableStuckDetection: true},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{workflowCall}},
		llmtest.Reply{Text: "looked"},
		llmtest.Reply{Text: "done"},
	)
	if err := c.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if o := observationOf(t, c); o.IsError || event.TextOf(o.Content) != "looked" {
		t.Fatalf("workflow result %q", event.TextOf(o.Content))
	}
	states, _ := filepath.Glob(filepath.Join(c.Dir(), "subagents", "*", filestore.BaseStateFile))
	if len(states) != 1 {
		t.Fatalf("sub-conversations: %v", states)
	}
	b, err := os.ReadFile(states[0])
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Stuck  bool            `json:"stuck_detection"`
		Policy json.RawMessage `json:"confirmation_policy"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	want, _ := event.MarshalKinded(policy)
	if st.Stuck || !equalJSON(json.RawMessage(want), st.Policy) {
		t.Errorf("the sub-agent's stuck_detection %v and policy %s, want false and %s", st.Stuck, st.Policy, want)
	}
	// A workflow that ended leaves no journal.
	if left, _ := filepath.Glob(filepath.Join(c.Dir(), "workflows", "*")); len(left) != 0 {
		t.Errorf("journals left: %v", left)
	}
}

// A workflow paused while its second sub-agent works, then run again (the
// same name and script), takes up its sub-agents: the first, finished,
// gives its stored answer without a model call, the second, paused, is
// resumed; the result has both answers and the journal is gone.
func TestRerunTakesUpSubAgents(t *testing.T) {
	t.Parallel()
	held := make(chan struct{})
	var once sync.Once
	m := &model{answer: func(task string) (string, error) {
		if strings.HasPrefix(task, "first") {
			return "A", nil
		}
		return "B", nil
	}}
	m.gate = func(ctx context.Context, task string) error {
		if !strings.HasPrefix(task, "second") {
			return nil
		}
		first := false
		once.Do(func() { first = true; close(held) })
		if first {
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}
	args := llmtest.Args(map[string]any{"name": "two", "script": "async def main(wf):\n    a = await wf.run_agent('first')\n    b = await wf.run_agent('second')\n    return a + '|' + b\n"})
	c := newParentReplies(t, m,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "w1", Name: workflow.Name, Arguments: args}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "w2", Name: workflow.Name, Arguments: args}}},
		llmtest.Reply{Text: "done"},
	)
	done := make(chan error, 1)
	go func() { done <- c.Run(t.Context()) }()
	select {
	case <-held:
	case <-time.After(2 * time.Minute): // a hang guard
		t.Fatal("the second sub-agent never called its model")
	}
	if err := c.Pause(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(c.Dir(), "workflows", "*.json")); len(left) != 1 {
		t.Fatalf("journals after the pause: %v, want one", left)
	}
	if err := c.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	var results []string
	log := c.State().Events()
	for i := range log.Len() {
		e, _ := log.Event(t.Context(), i)
		if o, ok := e.(*event.ObservationEvent); ok {
			if w, ok := o.Observation.(*workflow.Observation); ok {
				results = append(results, o.ToolCallID+": "+event.TextOf(w.Content))
			}
		}
	}
	if len(results) == 0 || results[len(results)-1] != "w2: A|B" {
		t.Errorf("workflow results %q, want the last w2: A|B", results)
	}
	var firsts, seconds int
	for _, task := range m.tasks {
		if strings.HasPrefix(task, "first") {
			firsts++
		}
		if strings.HasPrefix(task, "second") {
			seconds++
		}
	}
	if firsts != 1 || seconds != 2 {
		t.Errorf("sub-agent calls: first %d, second %d, want 1 and 2 (the paused one resumed)", firsts, seconds)
	}
	if left, _ := filepath.Glob(filepath.Join(c.Dir(), "workflows", "*.json")); len(left) != 0 {
		t.Errorf("journals left: %v", left)
	}
}
