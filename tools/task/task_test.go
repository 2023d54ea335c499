package task_test

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
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tool/tooltest"
	"github.com/gohands/gohands/tools/task"

	_ "github.com/gohands/gohands/tools/fileeditor"
	_ "github.com/gohands/gohands/tools/tasktracker"
	_ "github.com/gohands/gohands/tools/terminal"
)

var ctx = context.Background()

func testConfig() llm.Config {
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.RetryMinWait, cfg.RetryMaxWait, cfg.RetryMultiplier, cfg.NumRetries = 0, 0, 0, 1
	return cfg
}

func scripted(t *testing.T, replies ...llmtest.Reply) *llm.LLM {
	t.Helper()
	l, err := llm.New(testConfig(), &llm.Options{Provider: llmtest.NewProvider(t, replies...)})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// router is the model of a parent and its sub-agents: it answers each
// conversation from its own script, chosen by a key its first user
// message contains ("" for the parent). A key listed in barrier waits, at
// its first call, until every key of the barrier has called: sub-agents
// that ran one after the other would wait for ever, so the test shows they
// run at the same time without timing anything.
type router struct {
	t       *testing.T
	models  map[string]*llm.LLM
	mu      sync.Mutex
	reqs    map[string][][]event.Message
	barrier map[string]bool
	arrived map[string]bool
	all     chan struct{}
	// block, if set, makes the key's calls wait until their context ends,
	// and is closed when the first one starts.
	block     string
	blockSeen chan struct{}
}

func newRouter(t *testing.T, models map[string]*llm.LLM, barrier ...string) *router {
	r := &router{t: t, models: models, reqs: map[string][][]event.Message{}, barrier: map[string]bool{}, arrived: map[string]bool{}, all: make(chan struct{})}
	for _, k := range barrier {
		r.barrier[k] = true
	}
	if len(barrier) == 0 {
		close(r.all)
	}
	return r
}

func (r *router) key(msgs []event.Message) string {
	for _, m := range msgs {
		if m.Role != event.RoleUser {
			continue
		}
		text := event.TextOf(m.Content)
		for k := range r.models {
			if k != "" && strings.Contains(text, k) {
				return k
			}
		}
		return ""
	}
	return ""
}

func (r *router) Completion(ctx context.Context, msgs []event.Message, tools []llm.ToolSpec, opts *llm.CallOptions) (*llm.Response, error) {
	k := r.key(msgs)
	r.mu.Lock()
	r.reqs[k] = append(r.reqs[k], msgs)
	if r.barrier[k] && !r.arrived[k] {
		r.arrived[k] = true
		if len(r.arrived) == len(r.barrier) {
			close(r.all)
		}
	}
	r.mu.Unlock()
	if r.barrier[k] {
		select {
		case <-r.all:
		case <-time.After(20 * time.Second):
			return nil, errors.New("router: the other sub-agent never called: sub-agents did not run in parallel")
		}
	}
	if k != "" && k == r.block {
		close(r.blockSeen)
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return r.models[k].Completion(ctx, msgs, tools, opts)
}

func (r *router) requests(k string) [][]event.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reqs[k]
}

func call(id, name string, args any) llmtest.ToolCall {
	b, _ := json.Marshal(args)
	return llmtest.ToolCall{ID: id, Name: name, Arguments: string(b)}
}

// parentAgent is an agent with the task tool whose model is m.
func parentAgent(m llm.Model) *agent.Agent {
	a := agent.New(testConfig(), []tool.Spec{{Name: task.ToolSetName}}, &agent.Options{Model: m})
	a.ToolConcurrencyLimit = 4
	return a
}

func newParent(t *testing.T, a *agent.Agent) (*conversation.LocalConversation, string) {
	t.Helper()
	ws := t.TempDir()
	c, err := conversation.New(ctx, a, ws, &conversation.LocalOptions{Backend: filestore.NewBackend(t.TempDir(), nil)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, ws
}

func runTurn(t *testing.T, c *conversation.LocalConversation, text string) {
	t.Helper()
	if err := c.SendMessage(ctx, event.UserMessage(text)); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
}

// observations returns the task observations of a conversation, by task
// call id.
func observations(t *testing.T, c *conversation.LocalConversation) map[string]*task.Observation {
	t.Helper()
	out := map[string]*task.Observation{}
	log := c.State().Events()
	for i := range log.Len() {
		e, err := log.Event(t.Context(), i)
		if err != nil {
			t.Fatal(err)
		}
		if o, ok := e.(*event.ObservationEvent); ok {
			if to, ok := o.Observation.(*task.Observation); ok {
				out[o.ToolCallID] = to
			}
		}
	}
	return out
}

func text(o *task.Observation) string { return event.TextOf(o.Content) }

// A parent delegates two tasks in one reply: both sub-agents run at the
// same time, each writes its file, and both answers reach the parent's
// next request.
func TestParallelTasks(t *testing.T) {
	r := newRouter(t, nil, "TASK-A", "TASK-B")
	parent, ws := func() (*conversation.LocalConversation, string) {
		a := parentAgent(r)
		return newParent(t, a)
	}()
	child := func(name string) *llm.LLM {
		return scripted(t,
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("c1", "file_editor", map[string]any{
				"command": "create", "path": filepath.Join(ws, name), "file_text": "written by " + name + "\n"})}},
			llmtest.Reply{Text: "Created " + name + "."},
		)
	}
	r.models = map[string]*llm.LLM{
		"": scripted(t,
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{
				call("t1", "task", map[string]any{"description": "write a", "prompt": "TASK-A: create a.txt"}),
				call("t2", "task", map[string]any{"description": "write b", "prompt": "TASK-B: create b.txt", "subagent_type": "general-purpose"}),
			}},
			llmtest.Reply{Text: "Both files are written."},
		),
		"TASK-A": child("a.txt"),
		"TASK-B": child("b.txt"),
	}
	runTurn(t, parent, "Write a.txt and b.txt, in parallel.")

	for _, f := range []string{"a.txt", "b.txt"} {
		if b, err := os.ReadFile(filepath.Join(ws, f)); err != nil || string(b) != "written by "+f+"\n" {
			t.Errorf("%s: %q %v", f, b, err)
		}
	}
	obs := observations(t, parent)
	ids := map[string]bool{}
	for callID, want := range map[string]string{"t1": "Created a.txt.", "t2": "Created b.txt."} {
		o := obs[callID]
		if o == nil {
			t.Fatalf("no observation for %s", callID)
		}
		if o.IsError || text(o) != want || o.Status != task.StatusCompleted || o.Subagent != "general-purpose" {
			t.Errorf("%s: %+v %q", callID, o, text(o))
		}
		ids[o.TaskID] = true
	}
	if !ids["task_00000001"] || !ids["task_00000002"] {
		t.Errorf("task ids %v", ids)
	}
	// The answers reach the parent's next request, as the model sees them.
	reqs := r.requests("")
	if len(reqs) != 2 {
		t.Fatalf("%d parent requests", len(reqs))
	}
	var seen []string
	for _, m := range reqs[1] {
		if m.Role == event.RoleTool {
			seen = append(seen, event.TextOf(m.Content))
		}
	}
	joined := strings.Join(seen, "\n")
	for _, want := range []string{"Created a.txt.", "Created b.txt.", "Subagent: general-purpose\nStatus: completed", "Task ID: task_0000000"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the parent's second request lacks %q:\n%s", want, joined)
		}
	}
	// Each sub-conversation is stored beside the parent's.
	dirs, _ := filepath.Glob(filepath.Join(parent.Dir(), "subagents", "*", "base_state.json"))
	if len(dirs) != 2 {
		t.Errorf("sub-conversations stored: %v", dirs)
	}
}

// A task resumed by id continues the same sub-conversation.
func TestResume(t *testing.T) {
	r := newRouter(t, nil)
	parent, _ := newParent(t, parentAgent(r))
	r.models = map[string]*llm.LLM{
		"": scripted(t,
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("t1", "task", map[string]any{"prompt": "TASK-A: count the files"})}},
			llmtest.Reply{Text: "ok"},
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("t2", "task", map[string]any{"prompt": "Now list them", "resume": "task_00000001"})}},
			llmtest.Reply{Text: "fine"},
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("t3", "task", map[string]any{"prompt": "again", "resume": "task_00000009"})}},
			llmtest.Reply{Text: "end"},
		),
		"TASK-A": scripted(t, llmtest.Reply{Text: "There are 3 files."}, llmtest.Reply{Text: "x, y and z."}),
	}
	runTurn(t, parent, "count")
	runTurn(t, parent, "list")
	runTurn(t, parent, "bad id")

	obs := observations(t, parent)
	if o := obs["t2"]; o == nil || o.IsError || o.TaskID != "task_00000001" || text(o) != "x, y and z." {
		t.Fatalf("resumed task: %+v", o)
	}
	reqs := r.requests("TASK-A")
	if len(reqs) != 2 {
		t.Fatalf("%d sub-agent requests", len(reqs))
	}
	var history []string
	for _, m := range reqs[1] {
		history = append(history, event.TextOf(m.Content))
	}
	h := strings.Join(history, "\n")
	for _, want := range []string{"TASK-A: count the files", "There are 3 files.", "Now list them"} {
		if !strings.Contains(h, want) {
			t.Errorf("the resumed sub-agent's request lacks %q:\n%s", want, h)
		}
	}
	if o := obs["t3"]; o == nil || !o.IsError || !strings.Contains(text(o), "Task 'task_00000009' not found. Available tasks: task_00000001") {
		t.Errorf("unknown task id: %+v %q", o, text(o))
	}
}

// A sub-agent that fails gives the parent an error naming the failure.
func TestFailingChild(t *testing.T) {
	r := newRouter(t, nil)
	parent, _ := newParent(t, parentAgent(r))
	r.models = map[string]*llm.LLM{
		"": scripted(t,
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{
				call("t1", "task", map[string]any{"prompt": "TASK-A: do it"}),
				call("t2", "task", map[string]any{"prompt": "do it", "subagent_type": "no-such-agent"}),
			}},
			llmtest.Reply{Text: "It failed."},
		),
		"TASK-A": scripted(t, llmtest.Reply{Fail: &llmtest.Failure{Status: 400, Message: "the model refuses this request"}}),
	}
	runTurn(t, parent, "go")
	obs := observations(t, parent)
	o := obs["t1"]
	if o == nil || !o.IsError || o.Status != task.StatusError || o.TaskID != "task_00000001" {
		t.Fatalf("failing child: %+v", o)
	}
	if !strings.Contains(text(o), "the model refuses this request") {
		t.Errorf("error text %q does not say why", text(o))
	}
	llmText := event.TextOf(o.LLMContent())
	if !strings.HasPrefix(llmText, "Task ID: task_00000001\nSubagent: general-purpose\nStatus: error") || !strings.Contains(llmText, event.ErrorHeader) {
		t.Errorf("the model sees %q", llmText)
	}
	o = obs["t2"]
	if o == nil || !o.IsError || !strings.Contains(text(o), "Unknown agent 'no-such-agent'. Available types: bash-runner, code-explorer, general-purpose.") {
		t.Errorf("unknown sub-agent: %+v %q", o, text(o))
	}
	if parent.Status() != conversation.StatusFinished {
		t.Errorf("parent status %s", parent.Status())
	}
}

// max_turns, hidden from the model, bounds the sub-agent's iterations.
func TestMaxTurns(t *testing.T) {
	r := newRouter(t, nil)
	parent, ws := newParent(t, parentAgent(r))
	look := llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("c", "file_editor", map[string]any{"command": "view", "path": "/"})}}
	_ = ws
	r.models = map[string]*llm.LLM{
		"": scripted(t,
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("t1", "task", map[string]any{"prompt": "TASK-A: look around", "max_turns": 2})}},
			llmtest.Reply{Text: "stopped"},
		),
		"TASK-A": scripted(t, look, look),
	}
	runTurn(t, parent, "go")
	o := observations(t, parent)["t1"]
	if o == nil || !o.IsError || !strings.Contains(text(o), "maximum iterations limit (2)") {
		t.Fatalf("%+v %q", o, text(o))
	}
}

// Pausing the parent pauses the sub-agent it is waiting for.
func TestPauseReachesChild(t *testing.T) {
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
	if err := parent.Pause(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if st := parent.Status(); st != conversation.StatusPaused {
		t.Errorf("parent status %s", st)
	}
	states, _ := filepath.Glob(filepath.Join(parent.Dir(), "subagents", "*", "base_state.json"))
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
		t.Errorf("sub-agent status %q (%v)", st.Status, err)
	}
}

// The sub-agent's costs are added to the parent's stats.
func TestCostsRollUp(t *testing.T) {
	cfg := testConfig()
	in, out := 0.001, 0.002
	cfg.InputCostPerToken, cfg.OutputCostPerToken = &in, &out
	usage := llmtest.Usage{PromptTokens: 100, CompletionTokens: 10}
	l, err := llm.New(cfg, &llm.Options{Provider: llmtest.NewProvider(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("t1", "task", map[string]any{"prompt": "summarise"})}, Usage: usage},
		llmtest.Reply{Text: "summary", Usage: usage}, // the sub-agent
		llmtest.Reply{Text: "done", Usage: usage},
	)})
	if err != nil {
		t.Fatal(err)
	}
	a := agent.New(cfg, []tool.Spec{{Name: task.ToolSetName}}, &agent.Options{Model: l})
	parent, _ := newParent(t, a)
	runTurn(t, parent, "go")
	stats := parent.State().Fields().Stats
	sub := stats.UsageToMetrics["task:task_00000001"]
	if sub == nil {
		t.Fatalf("no task metrics in %v", stats.UsageToMetrics)
	}
	want := 100*in + 10*out
	if diff := sub.AccumulatedCost - want; diff > 1e-9 || diff < -1e-9 {
		t.Errorf("sub-agent cost %v, want %v", sub.AccumulatedCost, want)
	}
	if own := stats.UsageToMetrics[cfg.UsageID]; own == nil || own.AccumulatedCost < 2*want-1e-9 {
		t.Errorf("the parent's own metrics: %+v", own)
	}
	if total := stats.TotalCost(); total < 3*want-1e-9 {
		t.Errorf("total cost %v, want at least %v", total, 3*want)
	}
}

// The parameters are the reference's (max_turns hidden), and the action
// and observation encode as the reference's.
func TestWire(t *testing.T) {
	tl := task.New(&task.Options{Definitions: task.Builtins()})
	if tl.Name() != "task" || tl.Definition().Kind != "TaskTool" {
		t.Errorf("%s %s", tl.Name(), tl.Definition().Kind)
	}
	tooltest.ReferenceParameters(t, tl)
	var wire map[string]json.RawMessage
	data, err := os.ReadFile(filepath.Join("testdata", "reference_wire.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &wire); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"action", "action_full", "observation", "observation_error"} {
		var ref string
		json.Unmarshal(wire[k], &ref)
		v, err := event.DecodeKinded[any]([]byte(ref))
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		again, err := event.MarshalKinded(v)
		if err != nil || string(again) != ref {
			t.Errorf("%s re-encodes as\n %s\nwant %s", k, again, ref)
		}
		if o, ok := v.(*task.Observation); ok {
			var want []string
			json.Unmarshal(wire[k+"_llm"], &want)
			var got []string
			for _, c := range o.LLMContent() {
				got = append(got, c.Text)
			}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("%s: the model sees %q, want %q", k, got, want)
			}
		}
	}
	a, err := tl.ParseAction([]byte(`{"prompt":"p","max_turns":3}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := event.MarshalKinded(a)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"prompt":"p","subagent_type":"general-purpose","max_turns":3,"kind":"TaskAction"}`; string(b) != want {
		t.Errorf("action\n got %s\nwant %s", b, want)
	}
	back, err := event.DecodeKinded[event.Action](b)
	if err != nil || back.(*task.Action).MaxTurns == nil || *back.(*task.Action).MaxTurns != 3 {
		t.Errorf("decoded %+v %v", back, err)
	}
	// Decoding applies the default sub-agent and refuses unknown keys.
	if a, err := event.DecodeKinded[*task.Action]([]byte(`{"prompt":"p","kind":"TaskAction"}`)); err != nil || a.SubagentType != task.DefaultSubagent {
		t.Errorf("decoded without subagent_type: %+v, %v", a, err)
	}
	if _, err := event.DecodeKinded[*task.Action]([]byte(`{"prompt":"p","bogus":1,"kind":"TaskAction"}`)); err == nil {
		t.Error("decoded an unknown key")
	}
	if _, err := tl.ParseAction([]byte(`{"prompt":"p","max_turns":0}`)); err == nil {
		t.Error("max_turns 0 accepted")
	}
	if _, err := tl.ParseAction([]byte(`{"prompt":"p","bogus":1}`)); err == nil {
		t.Error("unknown field accepted")
	}
	for _, d := range []string{"general-purpose", "code-explorer", "bash-runner"} {
		if !strings.Contains(tl.Description(), "- "+d+": ") {
			t.Errorf("description does not list %s", d)
		}
	}
}

// The tasks of a caller reopened in a new process (a new tool, the same
// persisted conversation) are found: resume continues task_00000001 with
// its history, and the next new task is task_00000002, stored apart.
func TestResumeAfterReopen(t *testing.T) {
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
		"": scripted(t,
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("t1", "task", map[string]any{"prompt": "TASK-A: count the files"})}},
			llmtest.Reply{Text: "ok"}),
		"TASK-A": scripted(t, llmtest.Reply{Text: "There are 3 files."}),
	}
	runTurn(t, first, "count")
	id := first.ID()
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	r2 := newRouter(t, nil)
	again := open(r2, id)
	t.Cleanup(func() { again.Close() })
	r2.models = map[string]*llm.LLM{
		"": scripted(t,
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{
				call("t2", "task", map[string]any{"prompt": "Now list them", "resume": "task_00000001"}),
				call("t3", "task", map[string]any{"prompt": "TASK-B: read the README"}),
			}},
			llmtest.Reply{Text: "fine"}),
		"TASK-A": scripted(t, llmtest.Reply{Text: "x, y and z."}),
		"TASK-B": scripted(t, llmtest.Reply{Text: "It is short."}),
	}
	runTurn(t, again, "list")
	obs := observations(t, again)
	if o := obs["t2"]; o == nil || o.IsError || o.TaskID != "task_00000001" || text(o) != "x, y and z." {
		t.Fatalf("task resumed after reopening: %+v", o)
	}
	if o := obs["t3"]; o == nil || o.IsError || o.TaskID != "task_00000002" || text(o) != "It is short." {
		t.Fatalf("new task after reopening: %+v", o)
	}
	var history []string
	for _, m := range r2.requests("TASK-A")[0] {
		history = append(history, event.TextOf(m.Content))
	}
	if h := strings.Join(history, "\n"); !strings.Contains(h, "There are 3 files.") {
		t.Errorf("the resumed sub-agent's request lacks its earlier answer:\n%s", h)
	}
	subs, err := os.ReadDir(filepath.Join(filestore.Dir(backend.Base(), id), "subagents"))
	if err != nil || len(subs) != 2 {
		t.Errorf("stored sub-conversations: %v %v", subs, err)
	}
}
