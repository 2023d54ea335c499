package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
)

// gohands serve killed with SIGKILL while a workflow's second sub-agent
// runs a command (its first has finished), then started again on the
// same conversations: the conversation is in error, the client runs it
// again, the workflow call cut short is answered with the restart error
// naming the finished and the cut-short sub-agent, the model runs the
// same workflow again, which gives the first sub-agent's stored answer
// without running it and resumes the second (its command answered with
// the restart error); the workflow returns both answers, the parent
// finishes, and neither command ran twice.
func TestE2EServeWorkflowKillAndResume(t *testing.T) {
	t.Parallel()
	testenv.Program(t, "python3")
	const marker = "sleep 6155"
	t.Cleanup(func() {
		// SIGKILL leaves the command the sub-agent started.
		for _, pid := range processesWith(marker) {
			exec.Command("kill", "-9", pid).Run()
		}
	})
	script := "async def main(wf):\n" +
		"    a = await wf.run_agent('SUB-A: first')\n" +
		"    b = await wf.run_agent('SUB-B: second')\n" +
		"    return a + ' | ' + b\n"
	wfArgs := map[string]any{"name": "audit", "script": script}
	pb, err := llmtest.NewPlaybook(
		llmtest.Rule{Name: "sub-a", FirstUser: "^SUB-A", Replies: []llmtest.Reply{
			{ToolCalls: []llmtest.ToolCall{call("a1", "terminal", map[string]any{"command": "echo once >> a.txt"})}},
			{Text: "A done"},
		}},
		llmtest.Rule{Name: "sub-b", FirstUser: "^SUB-B", Replies: []llmtest.Reply{
			{ToolCalls: []llmtest.ToolCall{call("b1", "terminal", map[string]any{
				"command": "echo once >> b.txt && touch b-started && " + marker, "timeout": 7000,
			})}},
			{Text: "B done"},
		}},
		llmtest.Rule{Name: "parent", FirstUser: "^orchestrate", Replies: []llmtest.Reply{
			{ToolCalls: []llmtest.ToolCall{call("w1", "workflow", wfArgs)}},
			{ToolCalls: []llmtest.ToolCall{call("w2", "workflow", wfArgs)}},
			finishReply("done"),
		}},
	)
	if err != nil {
		t.Fatal(err)
	}
	model := llmtest.NewResponder(t, pb.Respond, nil)
	home, work := t.TempDir(), t.TempDir()
	const tools = `[{"name":"terminal"},{"name":"workflow_tool_set"}]`
	srv := startServeProc(t, home, work, nil, "--autotitle=false")
	id := srv.startConversation(model.URL, tools, work, "orchestrate")
	waitPath(t, filepath.Join(work, "b-started"), 2*time.Minute)
	srv.kill()

	srv = startServeProc(t, home, work, nil, "--autotitle=false")
	if st := srv.status(id); st != "error" {
		t.Errorf("status after the restart %s, want error", st)
	}
	srv.do("POST", "/api/conversations/"+id+"/run", "", 200, nil)
	if st := srv.waitStatus(id, 2*time.Minute, "finished", "error", "stuck"); st != "finished" {
		t.Fatalf("status %s, want finished\nserver log:\n%s", st, srv.logs())
	}

	checkWorkflowResumed(t, model, work)
}

// checkWorkflowResumed checks a workflow run that was killed while its
// second sub-agent ran and then resumed: no command in work ran twice, the
// restart error names the finished and the cut-short sub-agent, the
// second workflow returned both results and sub-agent B resumed.
func checkWorkflowResumed(t *testing.T, model *llmtest.Server, work string) {
	t.Helper()
	for _, f := range []string{"a.txt", "b.txt"} {
		if b, _ := os.ReadFile(filepath.Join(work, f)); string(b) != "once\n" {
			t.Errorf("%s = %q: a sub-agent's command ran again", f, b)
		}
	}
	var sawNote, sawResult, bResumed bool
	for _, r := range model.Requests() {
		ids, texts := toolResults(t, r)
		for i, cid := range ids {
			switch {
			case cid == "w1" && strings.Contains(texts[i], conversation.RestartError):
				sawNote = strings.Contains(texts[i], "workflow_00000001 (finished)") && strings.Contains(texts[i], "workflow_00000002 (cut short)")
				if !sawNote {
					t.Errorf("the restart error of the workflow: %q", texts[i])
				}
			case cid == "w2":
				sawResult = strings.Contains(texts[i], "A done | B done")
				if !sawResult {
					t.Errorf("the second workflow's result: %q", texts[i])
				}
			case cid == "b1" && strings.Contains(texts[i], conversation.RestartError):
				bResumed = true
			}
		}
	}
	if !sawNote || !sawResult || !bResumed {
		t.Errorf("restart note %v, workflow result %v, sub-agent B resumed after its restart error %v", sawNote, sawResult, bResumed)
	}
}
