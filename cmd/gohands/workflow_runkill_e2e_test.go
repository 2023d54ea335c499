package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/tools/workflow"
)

// gohands run killed with SIGKILL while a workflow's second sub-agent
// runs a command (its first has finished), then run again on the same
// conversation without a message, which is how the CLI resumes: the
// workflow call cut short is answered with the restart error naming the
// finished and the cut-short sub-agent, the model runs the same workflow
// again, which gives the first sub-agent's stored answer without running
// it and resumes the second (its command answered with the restart
// error); the workflow returns both answers, the parent finishes, and
// neither command ran twice. TestE2EServeWorkflowKillAndResume is the same
// through gohands serve.
func TestE2ERunWorkflowKillAndResume(t *testing.T) {
	t.Parallel()
	requireTool(t, "python3")
	const marker = "sleep 6156"
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
			{ToolCalls: []llmtest.ToolCall{call("w1", workflow.Name, wfArgs)}},
			{ToolCalls: []llmtest.ToolCall{call("w2", workflow.Name, wfArgs)}},
			finishReply("done"),
		}},
	)
	if err != nil {
		t.Fatal(err)
	}
	e := newE2E(t)
	model := llmtest.NewResponder(t, pb.Respond, nil)
	e.srv = model
	e.env = append(e.env, "LLM_BASE_URL="+model.URL+"/v1") // the last one wins

	p := e.start(e.args("--tool", workflow.ToolSetName, "orchestrate")...)
	p.waitFile(filepath.Join(e.work, "b-started"), 2*time.Minute)
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.wait(20 * time.Second)

	r := e.mustRun(0, e.args("--tool", workflow.ToolSetName)...)
	if st := e.status(); st != "finished" {
		t.Fatalf("status %s, want finished\nstderr:\n%s", st, r.stderr)
	}
	for _, f := range []string{"a.txt", "b.txt"} {
		if b, _ := os.ReadFile(filepath.Join(e.work, f)); string(b) != "once\n" {
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
