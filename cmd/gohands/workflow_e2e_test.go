package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/tools/workflow"
)

// workflowReplies are the scripted model's replies for a workflow of two
// sub-agents in turn: the parent's workflow call, each sub-agent's answer,
// the parent's finish.
func workflowReplies() []llmtest.Reply {
	script := "async def main(wf):\n" +
		"    a = await wf.run_agent('Name a colour.')\n" +
		"    b = await wf.run_agent('Name a fruit.')\n" +
		"    return [a, b]\n"
	return []llmtest.Reply{
		{ToolCalls: []llmtest.ToolCall{call("w1", workflow.Name, map[string]any{"name": "pick", "script": script})}},
		{Text: "blue"},
		{Text: "plum"},
		finishReply("blue and plum"),
	}
}

// checkWorkflowRequests checks the model's requests of a workflow run with
// workflowReplies: the parent has the workflow tool, each sub-agent got
// its prompt, the parent got what main returned, and the
// conversation (in convDir) stored two sub-conversations.
func checkWorkflowRequests(t *testing.T, reqs []llmtest.Request, convDir string) {
	t.Helper()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests, want 4", len(reqs))
	}
	if got := requestTools(t, reqs[0]); !slices.Contains(got, workflow.Name) {
		t.Errorf("the parent's tools %v lack %s", got, workflow.Name)
	}
	for i, prompt := range map[int]string{1: "Name a colour.", 2: "Name a fruit."} {
		if !strings.Contains(string(reqs[i].RawBody), prompt) {
			t.Errorf("request %d is not the sub-agent asked %q: %.400s", i, prompt, reqs[i].RawBody)
		}
	}
	ids, texts := toolResults(t, reqs[3])
	if i := slices.Index(ids, "w1"); i < 0 || texts[i] != "['blue', 'plum']" {
		t.Errorf("the parent's last request: results %v %q, want the workflow's ['blue', 'plum']", ids, texts)
	}
	states, _ := filepath.Glob(filepath.Join(convDir, "subagents", "*", filestore.BaseStateFile))
	if len(states) != 2 {
		t.Errorf("sub-conversations stored: %v, want 2", states)
	}
}

// gohands run --tool workflow_tool_set gives the agent the workflow tool:
// its script's two sub-agents run with the run's model and their answers
// come back as the tool's result. Without the flag the agent has no
// workflow tool, and an unknown --tool is a usage error.
func TestE2EWorkflowRun(t *testing.T) {
	t.Parallel()
	requireTool(t, "python3")
	e := newE2E(t, workflowReplies()...)
	e.mustRun(0, e.args("--tool", workflow.ToolSetName, "pick two things")...)
	checkWorkflowRequests(t, e.srv.Requests(), e.dir())
	if e.status() != "finished" {
		t.Errorf("status %s, want finished", e.status())
	}

	e2 := newE2E(t, finishReply("done"))
	e2.mustRun(0, e2.args("hi")...)
	if got := requestTools(t, e2.srv.Requests()[0]); slices.Contains(got, workflow.Name) {
		t.Errorf("the workflow tool without --tool: %v", got)
	}
	r := e2.mustRun(exitUsage, e2.args("--tool", "no_such_tool", "hi")...)
	if !strings.Contains(r.stderr, `--tool "no_such_tool": no such tool`) {
		t.Errorf("stderr for an unknown --tool:\n%s", r.stderr)
	}
	if n := len(e2.srv.Requests()); n != 1 {
		t.Errorf("%d model requests after the unknown --tool, want 1", n)
	}
}

// gohands serve runs the workflow tool of a start request's tools list.
func TestE2EWorkflowServe(t *testing.T) {
	t.Parallel()
	requireTool(t, "python3")
	model := llmtest.New(t, workflowReplies()...)
	home, work := t.TempDir(), t.TempDir()
	srv := startServeProc(t, home, work, nil, "--autotitle=false")
	id := srv.startConversation(model.URL, `[{"name":"terminal"},{"name":"`+workflow.ToolSetName+`"}]`, work, "pick two things")
	if st := srv.waitStatus(id, 2*time.Minute, "finished", "error", "stuck"); st != "finished" {
		t.Fatalf("status %s, want finished\nserver log:\n%s", st, srv.logs())
	}
	checkWorkflowRequests(t, model.Requests(), filestore.Dir(filepath.Join(home, "convs"), id))
}
