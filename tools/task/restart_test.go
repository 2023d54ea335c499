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
)

// TestRestartNamesTask: a caller whose process died while its sub-agent
// ran is told, in the restart error of the cut-short task call, the id of
// the task to resume. The store is copied while the sub-agent waits on
// its model, which is what a SIGKILL at that moment leaves on disk.
func TestRestartNamesTask(t *testing.T) {
	r := newRouter(t, nil)
	r.block, r.blockSeen = "TASK-A", make(chan struct{})
	parent, _ := newParent(t, parentAgent(r))
	r.models = map[string]*llm.LLM{
		"":       scripted(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("t1", "task", map[string]any{"prompt": "TASK-A: wait"})}}),
		"TASK-A": scripted(t),
	}
	if err := parent.SendMessage(ctx, event.UserMessage("go")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- parent.Run(ctx) }()
	<-r.blockSeen
	killed := t.TempDir()
	if err := os.CopyFS(killed, os.DirFS(filepath.Dir(parent.Dir()))); err != nil {
		t.Fatal(err)
	}
	if err := parent.Pause(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	again, err := conversation.New(ctx, parentAgent(newRouter(t, nil)), parent.WorkingDir(), &conversation.LocalOptions{ID: parent.ID(), Backend: filestore.NewBackend(killed, nil)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { again.Close() })
	var msg string
	log := again.State().Events()
	for i := range log.Len() {
		e, err := log.Event(t.Context(), i)
		if err != nil {
			t.Fatal(err)
		}
		if ae, ok := e.(*event.AgentErrorEvent); ok && ae.ToolCallID == "t1" {
			msg = ae.Error
		}
	}
	if !strings.HasPrefix(msg, conversation.RestartError) || !strings.Contains(msg, "task_00000001") || !strings.Contains(msg, "resume") {
		t.Errorf("the restart error of the task call: %q", msg)
	}
}
