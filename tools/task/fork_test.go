package task_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/tools/task"
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

// TestAdoptOldSubConversation: a sub-conversation stored under a random id
// (before the ids were derived) is found after a reopen by the prompt of
// the task that started it, and resumed.
func TestAdoptOldSubConversation(t *testing.T) {
	backend := filestore.NewBackend(t.TempDir(), nil)
	ws := t.TempDir()
	open := func(m llm.Model, id string) *conversation.LocalConversation {
		c, err := conversation.New(ctx, parentAgent(m), ws, &conversation.LocalOptions{ID: id, Backend: backend})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	r1 := newRouter(t, nil)
	first := open(r1, "")
	r1.models = map[string]*llm.LLM{
		"":       scripted(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("t1", "task", map[string]any{"prompt": "TASK-A: count the files"})}}, llmtest.Reply{Text: "ok"}),
		"TASK-A": scripted(t, llmtest.Reply{Text: "There are 3 files."}),
	}
	runTurn(t, first, "count")
	id := first.ID()
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	// Store the sub-conversation as the old code did: under a random id.
	subs := filepath.Join(filestore.Dir(backend.Base(), id), "subagents")
	dirs, _ := os.ReadDir(subs)
	if len(dirs) != 1 {
		t.Fatalf("sub-conversations: %v", dirs)
	}
	task.CopyStoredForTest(t, subs, dirs[0].Name(), "0b9a4c5e-1d2f-4e3a-9b8c-7d6e5f4a3b2c")
	if err := os.RemoveAll(filepath.Join(subs, dirs[0].Name())); err != nil {
		t.Fatal(err)
	}

	r2 := newRouter(t, nil)
	again := open(r2, id)
	t.Cleanup(func() { again.Close() })
	r2.models = map[string]*llm.LLM{
		"":       scripted(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("t2", "task", map[string]any{"prompt": "Now list them", "resume": "task_00000001"})}}, llmtest.Reply{Text: "fine"}),
		"TASK-A": scripted(t, llmtest.Reply{Text: "x, y and z."}),
	}
	runTurn(t, again, "list")
	if o := observations(t, again)["t2"]; o == nil || o.IsError || o.TaskID != "task_00000001" || text(o) != "x, y and z." {
		t.Fatalf("the old task resumed: %+v", o)
	}
	var history []string
	for _, m := range r2.requests("TASK-A")[0] {
		history = append(history, event.TextOf(m.Content))
	}
	if h := strings.Join(history, "\n"); !strings.Contains(h, "There are 3 files.") {
		t.Errorf("the adopted sub-conversation lacks its earlier answer:\n%s", h)
	}
	if _, err := os.Stat(filepath.Join(subs, "0b9a4c5e1d2f4e3a9b8c7d6e5f4a3b2c", filestore.BaseStateFile)); err != nil {
		t.Errorf("the old copy: %v", err)
	}
}
