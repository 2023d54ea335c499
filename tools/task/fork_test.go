package task_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
)

// TestForkCopiesTasks: a fork finds the sub-conversations of the tasks
// its copied history names: resume continues a copy (the source's stays
// as it was) and a new task gets the next id.
func TestForkCopiesTasks(t *testing.T) {
	r := newRouter(t, nil)
	parent, _ := newParent(t, parentAgent(r))
	r.models = map[string]*llm.LLM{
		"":       scripted(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("t1", "task", map[string]any{"prompt": "TASK-A: count the files"})}}, llmtest.Reply{Text: "ok"}),
		"TASK-A": scripted(t, llmtest.Reply{Text: "There are 3 files."}),
	}
	runTurn(t, parent, "count")
	srcSubs, _ := filepath.Glob(filepath.Join(parent.Dir(), "subagents", "*", "events", "*.json"))

	fc, err := parent.Fork(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	fork := fc.(*conversation.LocalConversation)
	t.Cleanup(func() { fork.Close() })
	r.models = map[string]*llm.LLM{
		"": scripted(t,
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{
				call("t2", "task", map[string]any{"prompt": "Now list them", "resume": "task_00000001"}),
				call("t3", "task", map[string]any{"prompt": "TASK-B: read the README"}),
			}},
			llmtest.Reply{Text: "fine"}),
		"TASK-A": scripted(t, llmtest.Reply{Text: "x, y and z."}),
		"TASK-B": scripted(t, llmtest.Reply{Text: "It is short."}),
	}
	runTurn(t, fork, "list")
	obs := observations(t, fork)
	if o := obs["t2"]; o == nil || o.IsError || o.TaskID != "task_00000001" || text(o) != "x, y and z." {
		t.Fatalf("task resumed in the fork: %+v", o)
	}
	if o := obs["t3"]; o == nil || o.IsError || o.TaskID != "task_00000002" || text(o) != "It is short." {
		t.Fatalf("new task in the fork: %+v", o)
	}
	reqs := r.requests("TASK-A")
	var history []string
	for _, m := range reqs[len(reqs)-1] {
		history = append(history, event.TextOf(m.Content))
	}
	if h := strings.Join(history, "\n"); !strings.Contains(h, "There are 3 files.") {
		t.Errorf("the resumed copy lacks the source task's answer:\n%s", h)
	}
	if after, _ := filepath.Glob(filepath.Join(parent.Dir(), "subagents", "*", "events", "*.json")); len(after) != len(srcSubs) || len(srcSubs) == 0 {
		t.Errorf("the source's sub-conversation events: %d before, %d after", len(srcSubs), len(after))
	}
	if subs, err := os.ReadDir(filepath.Join(fork.Dir(), "subagents")); err != nil || len(subs) != 2 {
		t.Errorf("the fork's sub-conversations: %v %v", subs, err)
	}
}
