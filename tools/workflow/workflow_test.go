package workflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/refenv"
	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/workflow"

	// The general-purpose sub-agent's tools.
	_ "github.com/gohands/gohands/tools/fileeditor"
	_ "github.com/gohands/gohands/tools/tasktracker"
	_ "github.com/gohands/gohands/tools/terminal"
)

func testConfig() llm.Config {
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.RetryMinWait, cfg.RetryMaxWait, cfg.RetryMultiplier, cfg.NumRetries = 0, 0, 0, 1
	return cfg
}

// model answers the parent (whose first message holds "#parent") from its
// script, and each sub-agent from answer, given the sub-agent's task; it
// counts the sub-agents' calls in flight.
type model struct {
	t      *testing.T
	parent *llm.LLM
	answer func(task string) (string, error)
	// hold, if set, answers every sub-agent call instead of answer.
	hold func(ctx context.Context) error
	// gate, if set, is called before answer; an error answers the call.
	gate func(ctx context.Context, task string) error

	mu             sync.Mutex
	inFlight, peak int
	tasks          []string
}

func firstUser(msgs []event.Message) string {
	for _, m := range msgs {
		if m.Role == event.RoleUser {
			return event.TextOf(m.Content)
		}
	}
	return ""
}

func (m *model) Completion(ctx context.Context, msgs []event.Message, tools []llm.ToolSpec, opts *llm.CallOptions) (*llm.Response, error) {
	task := firstUser(msgs)
	if strings.Contains(task, "#parent") {
		return m.parent.Completion(ctx, msgs, tools, opts)
	}
	m.mu.Lock()
	m.inFlight++
	m.peak = max(m.peak, m.inFlight)
	m.tasks = append(m.tasks, task)
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.inFlight--
		m.mu.Unlock()
	}()
	if m.hold != nil {
		return nil, m.hold(ctx)
	}
	if m.gate != nil {
		if err := m.gate(ctx, task); err != nil {
			return nil, err
		}
	}
	text, err := m.answer(task)
	if err != nil {
		return nil, err
	}
	l, err := llm.New(testConfig(), &llm.Options{Provider: llmtest.NewProvider(m.t, llmtest.Reply{Text: text})})
	if err != nil {
		return nil, err
	}
	return l.Completion(ctx, msgs, tools, opts)
}

// runWorkflow runs a parent conversation whose model calls the workflow
// tool with script, and returns the workflow's observation and the
// parent.
func runWorkflow(t *testing.T, m *model, script string, maxConcurrency int) (*workflow.Observation, *conversation.LocalConversation) {
	t.Helper()
	c := newParent(t, m, script, maxConcurrency)
	if err := c.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	log := c.State().Events()
	for i := range log.Len() {
		e, err := log.Event(t.Context(), i)
		if err != nil {
			t.Fatal(err)
		}
		if o, ok := e.(*event.ObservationEvent); ok {
			if w, ok := o.Observation.(*workflow.Observation); ok {
				return w, c
			}
		}
		if ae, ok := e.(*event.AgentErrorEvent); ok {
			t.Fatalf("the workflow call failed: %s", ae.Error)
		}
	}
	t.Fatal("no workflow observation")
	return nil, nil
}

// newParent returns a conversation, its first message sent, whose model
// calls the workflow tool with script.
func newParent(t *testing.T, m *model, script string, maxConcurrency int) *conversation.LocalConversation {
	t.Helper()
	args := map[string]any{"name": "audit", "script": script}
	if maxConcurrency > 0 {
		args["max_concurrency"] = maxConcurrency
	}
	return newParentReplies(t, m,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "w1", Name: workflow.Name, Arguments: llmtest.Args(args)}}},
		llmtest.Reply{Text: "done"},
	)
}

// newParentReplies is newParent with the parent's replies.
func newParentReplies(t *testing.T, m *model, replies ...llmtest.Reply) *conversation.LocalConversation {
	t.Helper()
	testenv.Program(t, "python3")
	parent, err := llm.New(testConfig(), &llm.Options{Provider: llmtest.NewProvider(t, replies...)})
	if err != nil {
		t.Fatal(err)
	}
	m.t, m.parent = t, parent
	a := agent.New(testConfig(), []tool.Spec{{Name: workflow.ToolSetName}}, &agent.Options{Model: m})
	c, err := conversation.New(t.Context(), a, t.TempDir(), &conversation.LocalOptions{Backend: filestore.NewBackend(t.TempDir(), nil)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.SendMessage(t.Context(), event.UserMessage("#parent: run the audit")); err != nil {
		t.Fatal(err)
	}
	return c
}

// Pausing the parent while a workflow's sub-agent works ends the workflow
// and pauses the sub-agent.
func TestPause(t *testing.T) {
	t.Parallel()
	held := make(chan struct{})
	var once sync.Once
	m := &model{}
	m.hold = func(ctx context.Context) error {
		once.Do(func() { close(held) })
		<-ctx.Done()
		return ctx.Err()
	}
	c := newParent(t, m, "async def main(wf):\n    return await wf.run_agent('wait for ever')\n", 0)
	done := make(chan error, 1)
	go func() { done <- c.Run(t.Context()) }()
	select {
	case <-held:
	case <-time.After(2 * time.Minute): // a hang guard
		t.Fatal("the sub-agent never called its model")
	}
	if err := c.Pause(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the run did not end after the pause")
	}
	if st := c.Status(); st != conversation.StatusPaused {
		t.Errorf("parent status %s, want paused", st)
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
		Status string `json:"execution_status"`
	}
	if err := json.Unmarshal(b, &st); err != nil || st.Status != "paused" {
		t.Errorf("sub-agent status %q (%v), want paused", st.Status, err)
	}
}

// A workflow maps sub-agents over three files, at most two at once, and
// reduces their answers with a fourth; main's return value, as Python
// writes it, is the result. Each sub-agent is a stored sub-conversation
// whose costs are in the parent's stats.
func TestMapReduce(t *testing.T) {
	t.Parallel()
	m := &model{answer: func(task string) (string, error) {
		if f, ok := strings.CutPrefix(task, "Count the TODOs in "); ok {
			return f + ": 2", nil
		}
		if strings.HasPrefix(task, "Add these up.") {
			return "6 in all", nil
		}
		return "", errors.New("unexpected task " + task)
	}}
	obs, parent := runWorkflow(t, m, `
async def main(wf):
    found = await wf.map_agents(["a.go", "b.go", "c.go"], "Count the TODOs in {item}", max_concurrency=2)
    total = await wf.reduce_agent(found, "Add these up.")
    return {"found": found, "total": total}
`, 0)
	want := `{'found': ['a.go: 2', 'b.go: 2', 'c.go: 2'], 'total': '6 in all'}`
	if obs.IsError || obs.Status != workflow.StatusCompleted || obs.Name != "audit" || event.TextOf(obs.Content) != want {
		t.Fatalf("observation %+v %q, want %q", obs, event.TextOf(obs.Content), want)
	}
	if m.peak > 2 {
		t.Errorf("%d sub-agents ran at once, max_concurrency 2", m.peak)
	}
	var reduce string
	for _, task := range m.tasks {
		if strings.HasPrefix(task, "Add these up.") {
			reduce = task
		}
	}
	if wantIn := "Input:\n[\n  \"a.go: 2\",\n  \"b.go: 2\",\n  \"c.go: 2\"\n]"; !strings.Contains(reduce, wantIn) {
		t.Errorf("the reducer's task %q lacks %q", reduce, wantIn)
	}
	dirs, _ := filepath.Glob(filepath.Join(parent.Dir(), "subagents", "*", filestore.BaseStateFile))
	if len(dirs) != 4 {
		t.Errorf("%d sub-conversations stored, want 4", len(dirs))
	}
	stats := parent.State().Fields().Stats.UsageToMetrics
	for _, id := range []string{"workflow_00000001", "workflow_00000004"} {
		if stats["task:"+id] == nil {
			t.Errorf("the parent's stats lack task:%s: %v", id, stats)
		}
	}
}

// Scripts that break the rules, fail or whose sub-agents fail give an
// error observation saying why; nothing runs for a script refused.
func TestScriptErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, script, want string }{
		{"import", "import os\nasync def main(wf):\n    return 1\n", "imports are not allowed"},
		{"no main", "async def run(wf):\n    return 1\n", "async def main(wf)"},
		{"sync main", "def main(wf):\n    return 1\n", "async def main(wf)"},
		{"private", "async def main(wf):\n    return wf._ch\n", "wf._ch is not part of wf"},
		{"open", "async def main(wf):\n    return open('x').read()\n", "open() is not allowed"},
		{"dunder", "async def main(wf):\n    return ().__class__\n", "dunder"},
		{"syntax", "async def main(wf)\n    return 1\n", "syntax error"},
		{"raises", "async def main(wf):\n    raise ValueError('no plan')\n", "no plan"},
		{"sub-agent fails", "async def main(wf):\n    return await wf.map_agents(['ok', 'FAIL'], 'check {item}')\n",
			"map_agents: one or more sub-agents failed:\n  [1] [item 2] "},
		{"pipeline drops", "async def main(wf):\n    return await wf.pipeline(['ok', 'FAIL'], lambda x: wf.run_agent('check ' + x), len)\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m := &model{answer: func(task string) (string, error) {
				if strings.Contains(task, "FAIL") {
					return "", errors.New("the model is down")
				}
				return "fine", nil
			}}
			obs, _ := runWorkflow(t, m, c.script, 0)
			text := event.TextOf(obs.Content)
			if c.want == "" { // pipeline: the failed item is None, the other goes on
				if obs.IsError || text != "[4, None]" {
					t.Errorf("pipeline: %+v %q", obs, text)
				}
				return
			}
			if !obs.IsError || obs.Status != workflow.StatusError || !strings.Contains(text, c.want) {
				t.Errorf("observation %+v %q, want an error with %q", obs, text, c.want)
			}
			if strings.HasPrefix(c.name, "import") || c.name == "open" || c.name == "private" {
				if len(m.tasks) > 0 {
					t.Errorf("sub-agents ran for a refused script: %v", m.tasks)
				}
			}
		})
	}
}

// The action and observation are the reference 1.58.2's JSON.
func TestWire(t *testing.T) {
	t.Parallel()
	a, err := event.MarshalKinded(&workflow.Action{Name: "x", Script: "s", MaxConcurrency: 8})
	if err != nil {
		t.Fatal(err)
	}
	var got, want map[string]any
	json.Unmarshal(a, &got)
	json.Unmarshal([]byte(`{"name":"x","script":"s","max_concurrency":8,"kind":"WorkflowAction"}`), &want)
	if !equalJSON(got, want) {
		t.Errorf("action %s", a)
	}
	// max_concurrency defaults to 8 and stays within 1..64.
	tl := workflow.New(nil)
	defer tl.Close()
	act, err := tl.ParseAction(json.RawMessage(`{"name":"x","script":"s"}`))
	if err != nil || act.(*workflow.Action).MaxConcurrency != 8 {
		t.Errorf("default max_concurrency: %+v %v", act, err)
	}
	for _, bad := range []string{`0`, `65`} {
		if _, err := tl.ParseAction(json.RawMessage(`{"name":"x","script":"s","max_concurrency":` + bad + `}`)); err == nil || !strings.Contains(err.Error(), "max_concurrency") {
			t.Errorf("max_concurrency %s: %v", bad, err)
		}
	}
	o := &workflow.Observation{Name: "x", Status: workflow.StatusCompleted}
	o.Content = event.List[event.Content]{event.Text("r")}
	b, err := event.MarshalKinded(o)
	if err != nil {
		t.Fatal(err)
	}
	got, want = nil, nil
	json.Unmarshal(b, &got)
	json.Unmarshal([]byte(`{"content":[{"cache_prompt":false,"type":"text","text":"r"}],"is_error":false,"name":"x","status":"completed","kind":"WorkflowObservation"}`), &want)
	if !equalJSON(got, want) {
		t.Errorf("observation %s", b)
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// The scripts the reference 1.58.2 refuses to run are those refused here,
// and the others run: the same rules, told in our words.
func TestChecksMatchReference(t *testing.T) {
	t.Parallel()
	py := testenv.Reference158Python(t)
	scripts := []string{
		"async def main(wf):\n    return 1\n",
		"async def main(wf):\n    xs = [len(str(i)) for i in range(3)]\n    return sorted(xs)\n",
		"import json\nasync def main(wf):\n    return 1\n",
		"from os import path\nasync def main(wf):\n    return 1\n",
		"def main(wf):\n    return 1\n",
		"async def main(wf, extra):\n    return 1\n",
		"async def main(wf=None):\n    return 1\n",
		"async def main(wf):\n    return 1\nasync def main(wf):\n    return 2\n",
		"async def main(wf):\n    return wf._limit\n",
		"async def main(wf):\n    wf.close()\n",
		"async def main(wf):\n    return eval('1')\n",
		"async def main(wf):\n    return getattr(wf, 'x')\n",
		"async def main(wf):\n    return os.getcwd()\n",
		"async def main(wf):\n    return __name__\n",
		"async def main(wf):\n    return (1).__class__\n",
		"async def main(wf):\n    return 1 +\n",
		"async def main(wf):\n    return '" + strings.Repeat("x", 20_001) + "'\n",
	}
	arg, err := json.Marshal(scripts)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), py, "-c", `import json, sys
from openhands.tools.workflow.impl import validate_workflow_script
for s in json.loads(sys.argv[1]):
    try:
        validate_workflow_script(s)
        print("ok")
    except Exception as e:
        print("refused")`, string(arg))
	home := t.TempDir()
	t.Cleanup(func() { refenv.Cleanup(home) })
	cmd.Env = refenv.Env(home)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reference: %v", err)
	}
	verdicts := strings.Fields(string(out))
	if len(verdicts) != len(scripts) {
		t.Fatalf("the reference gave %d verdicts for %d scripts: %s", len(verdicts), len(scripts), out)
	}
	for i, s := range scripts {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			m := &model{answer: func(string) (string, error) { return "fine", nil }}
			obs, _ := runWorkflow(t, m, s, 0)
			text := event.TextOf(obs.Content)
			got := "ok"
			if strings.HasPrefix(text, "Invalid workflow script") {
				got = "refused"
			}
			if got != verdicts[i] {
				t.Errorf("script %.80q: %s here (%.200s), %s by the reference", s, got, text, verdicts[i])
			}
		})
	}
}
