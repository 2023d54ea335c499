package main

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"

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
	checkWorkflowResumed(t, model, e.work)
}
