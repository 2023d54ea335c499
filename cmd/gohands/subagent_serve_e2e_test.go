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

// gohands serve killed with SIGKILL while a conversation's task sub-agent
// runs a command, then started again on the same conversations: the
// conversation is in error, the client runs it again, the parent and the
// sub-agent each answer their action cut short with the restart error, the
// model resumes the task by its id, both finish, and the command is not
// run a second time.
func TestE2EServeSubAgentKillAndResume(t *testing.T) {
	t.Parallel()
	const marker = "sleep 6152"
	t.Cleanup(func() {
		// SIGKILL leaves the command the sub-agent started.
		for _, pid := range processesWith(marker) {
			exec.Command("kill", "-9", pid).Run()
		}
	})
	model := llmtest.New(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("t1", "task", map[string]any{"prompt": "look around"})}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("c1", "terminal", map[string]any{
			"command": "echo once >> ran.txt && touch started && " + marker, "timeout": 7000,
		})}},
	)
	home, work := t.TempDir(), t.TempDir()
	const tools = `[{"name":"terminal"},{"name":"task_tool_set"}]`
	srv := startServeProc(t, home, work, nil, "--autotitle=false")
	id := srv.startConversation(model.URL, tools, work, "delegate")
	waitPath(t, filepath.Join(work, "started"), 2*time.Minute)
	srv.kill()

	model.Add(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("t2", "task", map[string]any{"prompt": "carry on", "resume": "task_00000001"})}},
		llmtest.Reply{Text: "looked around"},
		finishReply("done"),
	)
	srv = startServeProc(t, home, work, nil, "--autotitle=false")
	if st := srv.status(id); st != "error" {
		t.Errorf("status after the restart %s, want error", st)
	}
	srv.do("POST", "/api/conversations/"+id+"/run", "", 200, nil)
	if st := srv.waitStatus(id, 2*time.Minute, "finished", "error", "stuck"); st != "finished" {
		t.Fatalf("status %s, want finished\nserver log:\n%s", st, srv.logs())
	}

	if b, _ := os.ReadFile(filepath.Join(work, "ran.txt")); string(b) != "once\n" {
		t.Errorf("ran.txt = %q: the command cut short ran again", b)
	}
	reqs := model.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d model requests, want 5", len(reqs))
	}
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
}
