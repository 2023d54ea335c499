// Package task is the task tool: the agent hands a piece of work to a
// sub-agent and gets its final answer back as the tool's result.
//
// A task call blocks while a sub-conversation runs: a new agent, built
// from the sub-agent's Definition (its tools, its prompt added to the
// system prompt), with the calling agent's model (a copy with metrics of
// its own and streaming off), workspace, secrets and confirmation policy,
// and the iteration limit of its definition, else of the caller. Its event
// log is stored beside the caller's, under <conversation dir>/subagents/
// (a temporary directory when the caller is not persisted). The result is
// the sub-agent's final answer; when it stops without finishing (an error,
// its iteration limit or budget, stuck) the result is an error naming why,
// with its partial answer. Each task has an id (task_00000001, ...) that a
// later call passes as resume to continue the same sub-conversation.
//
// A sub-conversation's id is derived from the caller's id and the task id,
// so a caller reopened after its process died (a crash, SIGKILL) finds the
// tasks stored under its directory: resume continues the one that was cut
// short, whose unfinished action is answered with an error, not run again
// (see conversation.State.RecoverRunning), and new tasks get new ids.
//
// Several task calls in one reply run at once when the agent's
// tool_concurrency_limit allows (the tool holds no lock). Pausing the
// caller cancels the calls in progress, which pauses the sub-agents; their
// costs are added to the caller's stats under "task:<id>".
//
// Sub-agent kinds come from Available: those added with Register, the
// project's and the user's definition files (.agents/agents,
// .openhands/agents), and the built-ins (general-purpose, code-explorer,
// bash-runner, and web-researcher when a browser can run).
//
// The tool speaks the reference's wire format: registry name
// "task_tool_set" for the tool set (one tool, "task"), kinds TaskAction and
// TaskObservation. Unlike the reference, max_turns, hidden from the model
// as there, is honoured as a further bound on the sub-agent's iterations
// (the reference ignores it), and a definition's max_budget_per_run stops
// the sub-agent after the step where its costs reach it. A sub-agent also
// stops once it has spent what is left of the caller's budget (the
// reference gives it the caller's whole budget), and its stuck detector
// is on or off as the caller's.
package task

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/condenser"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/conversation/open"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/security"
	"github.com/gohands/gohands/skill"
	"github.com/gohands/gohands/telemetry"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/workspace"
)

// Names of the tool set (the spec to ask for) and of its one tool.
const (
	ToolSetName = "task_tool_set"
	Name        = "task"
)

// DefaultSubagent is the sub-agent used when the call names none.
const DefaultSubagent = "general-purpose"

// Statuses of a task in its observation.
const (
	StatusCompleted = "completed"
	StatusError     = "error"
)

// Action is one task call. Its unset optional fields are left out of its
// JSON, as the reference's event files (written without None values) do,
// so a conversation gohands wrote re-dumps byte-equal under the reference.
type Action struct {
	Description  *string `json:"description,omitempty" desc:"A short (3-5 word) label for the task."`
	Prompt       string  `json:"prompt" desc:"The task for the sub-agent: what to do, the files, names or errors involved, and what to report back."`
	SubagentType string  `json:"subagent_type" default:"general-purpose" desc:"The kind of sub-agent to run, one of those listed in the tool description."`
	Resume       *string `json:"resume,omitempty" desc:"The task id of an earlier task, to continue its sub-agent's conversation with this prompt."`
	// MaxTurns bounds the sub-agent's iterations for this call. It is not
	// shown to the model (the reference deprecated it) but is written and
	// accepted (see ParseAction).
	MaxTurns *int `json:"max_turns,omitempty" hidden:"true"`
}

// SetDefaults implements event.Defaulter: a decoded action without
// subagent_type asks for the default sub-agent.
func (a *Action) SetDefaults() { a.SubagentType = DefaultSubagent }

// Observation is a task's outcome. Content holds the sub-agent's answer,
// or why it failed.
type Observation struct {
	event.ObservationBase
	TaskID   string `json:"task_id"`
	Subagent string `json:"subagent"`
	Status   string `json:"status"`
}

// LLMContent implements event.LLMRenderer: the model sees the task's id,
// sub-agent and status before the answer.
func (o *Observation) LLMContent() []event.Content {
	out := []event.Content{event.Text(fmt.Sprintf("Task ID: %s\nSubagent: %s\nStatus: %s", o.TaskID, o.Subagent, o.Status))}
	if o.IsError {
		out = append(out, event.Text(event.ErrorHeader))
	}
	return append(out, o.Content...)
}

func init() {
	event.RegisterKind[Action]("TaskAction")
	event.RegisterKind[Observation]("TaskObservation")
	tool.Register(ToolSetName, factory)
}

// Options configures New. A nil *Options is the default.
type Options struct {
	// WorkingDir is the project whose definition files are offered (the
	// calling conversation's workspace is used to run them).
	WorkingDir string
	// Home is the user's home, for the user's definition files; empty
	// means os.UserHomeDir.
	Home string
	// Definitions, if not nil, are the sub-agents offered instead of
	// Available(WorkingDir, Home) and the PluginFiles.
	Definitions []*Definition
	// PluginFiles are the definition files of the conversation's plugins
	// (tool.Context.SubAgentFiles; see LoadFiles): they rank after the
	// registered definitions and before the project's, and never replace
	// a built-in.
	PluginFiles []string
	// Confirm decides on the actions a sub-agent waits to have confirmed
	// (its confirmation policy asks for it): true runs them, false rejects
	// them. Nil approves everything, as the reference does without a
	// handler.
	Confirm func(taskID string, pending []*event.ActionEvent) bool
	// Logger receives diagnostics; nil means the calling conversation's.
	Logger *slog.Logger
	// IDPrefix starts the task ids ("task" when empty: task_00000001).
	// Tools whose tasks are stored beside the task tool's, under the same
	// caller, each take their own.
	IDPrefix string
}

func factory(ctx tool.Context, params json.RawMessage) ([]tool.Tool, error) {
	var p map[string]json.RawMessage
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	for k := range p {
		return nil, fmt.Errorf("unknown param %q: the tool set takes no params", k)
	}
	return []tool.Tool{New(&Options{WorkingDir: ctx.WorkingDir, PluginFiles: ctx.SubAgentFiles})}, nil
}

// Tool is the task tool. It keeps the tasks it ran, for resume, until it
// is closed.
type Tool struct {
	*tool.Typed[Action, *Observation]
	m *manager
}

// Resources implements agent.ResourceDeclarer: task calls take no lock, so
// several run at once.
func (t *Tool) Resources(event.Action) []string { return nil }

// ParseAction implements tool.Tool. max_turns is accepted although the
// schema does not show it.
func (t *Tool) ParseAction(args json.RawMessage) (event.Action, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(args, &raw); err == nil {
		if mt, ok := raw["max_turns"]; ok {
			delete(raw, "max_turns")
			rest, err := json.Marshal(raw)
			if err != nil {
				return nil, err
			}
			a, err := t.Parse(rest)
			if err != nil {
				return nil, err
			}
			if !bytes.Equal(bytes.TrimSpace(mt), []byte("null")) {
				var n float64
				if err := json.Unmarshal(mt, &n); err != nil || n < 1 || n != float64(int(n)) {
					return nil, &tool.FieldError{Field: "max_turns", Msg: fmt.Sprintf("field \"max_turns\": %s is not an integer of at least 1", mt)}
				}
				a.MaxTurns = new(int(n))
			}
			return a, nil
		}
	}
	return t.Typed.ParseAction(args)
}

// Close ends the tool's tasks and deletes their temporary directory, if
// any.
func (t *Tool) Close() error { return t.m.close() }

// New returns the task tool.
func New(opts *Options) *Tool {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Home == "" {
		o.Home, _ = os.UserHomeDir()
	}
	m := &manager{opts: o, tasks: map[string]*record{}}
	defs := m.definitions()
	typed := tool.New(Name, description(defs), m.execute, &tool.Options{
		Annotations: &event.ToolAnnotations{Title: Name, DestructiveHint: true, OpenWorldHint: true},
	})
	return &Tool{Typed: typed, m: m}
}

const descriptionText = `Hand a task to a sub-agent: an agent of its own that works on it autonomously with its own tools and returns only its final answer, which becomes this tool's result. Use it for work that takes many steps and would fill your context (exploring a large codebase, running and triaging a test suite, a self-contained change), not for what one command or one edit does.

Write the prompt as a complete brief: the goal, the files, names or error messages involved, and what the answer should contain (paths, line numbers, counts). Several task calls in one reply run at the same time. The result starts with a task id; pass it as resume to continue that sub-agent's conversation with a new prompt.

Sub-agents:
`

func description(defs []*Definition) string {
	var b strings.Builder
	b.WriteString(descriptionText)
	if len(defs) == 0 {
		b.WriteString("- none available\n")
	}
	for _, d := range defs {
		fmt.Fprintf(&b, "- %s: %s", d.Name, strings.Join(strings.Fields(d.Description), " "))
		if len(d.Tools) > 0 {
			fmt.Fprintf(&b, " (tools: %s)", strings.Join(d.Tools, ", "))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// record is what a task keeps between calls.
type record struct {
	id             string
	conversationID string
	usageID        string // of the sub-agent's model
	running        bool
}

// manager runs the tasks of one calling conversation.
type manager struct {
	opts Options

	mu       sync.Mutex
	tasks    map[string]*record
	parentID string // the caller's conversation id; set on first use
	dir      string // where sub-conversations are stored; set on first use
	tmpDir   string // a temporary dir to delete on close, if dir is one
}

func (m *manager) definitions() []*Definition {
	if m.opts.Definitions != nil {
		return m.opts.Definitions
	}
	plugins, errs := LoadFiles(m.opts.PluginFiles)
	defs, more := available(m.opts.WorkingDir, m.opts.Home, plugins)
	for _, err := range append(errs, more...) {
		m.logger(nil).Warn("task: sub-agent definition not loaded", "err", err)
	}
	return defs
}

func (m *manager) logger(c *agent.Caller) *slog.Logger {
	if m.opts.Logger != nil {
		return m.opts.Logger
	}
	if c != nil {
		return c.Session.Logger()
	}
	return slog.Default()
}

// deprecatedNames are the reference's old sub-agent names.
var deprecatedNames = map[string]string{
	"default":          DefaultSubagent,
	"default cli mode": DefaultSubagent,
	"explore":          "code-explorer",
	"bash":             "bash-runner",
}

func (m *manager) definition(name string) (*Definition, error) {
	if n, ok := deprecatedNames[name]; ok {
		name = n
	}
	if name == "" {
		name = DefaultSubagent
	}
	defs := m.definitions()
	for _, d := range defs {
		if d.Name == name {
			return d, nil
		}
	}
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
	}
	avail := strings.Join(names, ", ")
	if avail == "" {
		avail = "none"
	}
	return nil, modelErr("Unknown agent '%s'. Available types: %s.", name, avail)
}

// modelError is a failure told to the model in the reference's words.
type modelError struct{ msg string }

func (e *modelError) Error() string { return e.msg }

func modelErr(format string, args ...any) error {
	return &modelError{fmt.Sprintf(format, args...)}
}

func errorObs(taskID, subagent, text string) *Observation {
	return &Observation{
		ObservationBase: event.ObservationBase{Content: event.List[event.Content]{event.Text(text)}, IsError: true},
		TaskID:          taskID, Subagent: subagent, Status: StatusError,
	}
}

// callHooks are what Tool.Do adds to a task call.
type callHooks struct {
	started func(id string) // told the task's id before its sub-agent runs
	replay  bool            // a resumed task that finished answers without running
}

// execute runs one task call.
func (m *manager) execute(ctx context.Context, a *Action) (*Observation, error) {
	return m.executeCall(ctx, a, callHooks{})
}

func (m *manager) executeCall(ctx context.Context, a *Action, hooks callHooks) (*Observation, error) {
	caller, ok := agent.CallerFrom(ctx)
	if !ok {
		return errorObs("unknown", a.SubagentType, "Failed to execute task: the task tool runs only in an agent's conversation."), nil
	}
	def, err := m.definition(a.SubagentType)
	if err != nil {
		return errorObs("unknown", a.SubagentType, "Failed to execute task: "+err.Error()), nil
	}
	rec, err := m.start(caller, a, def)
	if err != nil {
		return errorObs("unknown", a.SubagentType, "Failed to execute task: "+err.Error()), nil
	}
	defer func() {
		m.mu.Lock()
		rec.running = false
		m.mu.Unlock()
	}()
	if hooks.started != nil {
		hooks.started(rec.id)
	}
	text, failed, err := m.run(ctx, caller, rec, def, a, hooks.replay)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err // the caller was paused; the sub-agent is paused too
		}
		text, failed = err.Error(), true
	}
	if failed {
		if text == "" {
			text = "Task failed."
		}
		return errorObs(rec.id, a.SubagentType, text), nil
	}
	if text == "" {
		text = "Task completed with no result."
	}
	return &Observation{
		ObservationBase: event.ObservationBase{Content: event.List[event.Content]{event.Text(text)}},
		TaskID:          rec.id, Subagent: a.SubagentType, Status: StatusCompleted,
	}, nil
}

// Run runs a new task for the caller ctx carries (see agent.CallerFrom)
// outside a model's task call, as a workflow does, and returns the
// sub-agent's answer, or an error saying why it has none. It fails with
// the context's error when ctx ends first.
func (t *Tool) Run(ctx context.Context, prompt, subagentType string, description *string) (string, error) {
	_, text, err := t.Do(ctx, &Call{Prompt: prompt, SubagentType: subagentType, Description: description})
	return text, err
}

// Call is a task run outside a model's task call (see Tool.Do).
type Call struct {
	Prompt       string
	SubagentType string
	Description  *string
	// Resume, if set, is the id of the task to continue with Prompt.
	Resume string
	// Replay makes a resumed task whose sub-agent had finished give its
	// final answer again without running (Prompt is not sent): for a
	// caller whose process died before it got the answer.
	Replay bool
	// Started, if set, is told the task's id before its sub-agent runs.
	Started func(id string)
}

// Do is Run for a Call: it returns the task's id (empty if none was
// given) with the answer.
func (t *Tool) Do(ctx context.Context, c *Call) (id, answer string, err error) {
	a := &Action{Prompt: c.Prompt, SubagentType: c.SubagentType, Description: c.Description}
	if c.Resume != "" {
		a.Resume = &c.Resume
	}
	obs, err := t.m.executeCall(ctx, a, callHooks{started: c.Started, replay: c.Replay})
	if err != nil {
		return "", "", err
	}
	text := event.TextOf(obs.Content)
	if obs.TaskID != "unknown" {
		id = obs.TaskID
	}
	if obs.IsError {
		return id, "", errors.New(text)
	}
	return id, text, nil
}

// start finds the record of a resumed task, or makes a new one.
func (m *manager) start(caller *agent.Caller, a *Action, def *Definition) (*record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dir == "" {
		m.parentID = caller.Session.ID()
		if d := caller.Session.Dir(); d != "" {
			m.dir = filepath.Join(d, "subagents")
			m.findStored()
			m.adoptOld(context.Background(), caller.Session.State().Events(), m.logger(caller))
			m.findStored()
		} else {
			tmp, err := os.MkdirTemp("", "gohands-tasks-")
			if err != nil {
				return nil, err
			}
			m.dir, m.tmpDir = tmp, tmp
		}
	}
	if a.Resume != nil && *a.Resume != "" {
		rec, ok := m.tasks[*a.Resume]
		if !ok {
			return nil, modelErr("Task '%s' not found. Available tasks: %s", *a.Resume, strings.Join(slices.Sorted(maps.Keys(m.tasks)), ", "))
		}
		if rec.running {
			return nil, modelErr("Task '%s' is still running: wait for its result before resuming it.", *a.Resume)
		}
		rec.running = true
		return rec, nil
	}
	id := m.taskID(len(m.tasks) + 1)
	rec := &record{
		id:             id,
		conversationID: subConversationID(m.parentID, id),
		running:        true,
	}
	m.tasks[rec.id] = rec
	return rec, nil
}

// taskID is the id of the manager's nth task.
func (m *manager) taskID(n int) string {
	return fmt.Sprintf("%s_%08x", cmp.Or(m.opts.IDPrefix, "task"), n)
}

// taskSpace is the namespace of the sub-conversation ids derived by
// subConversationID.
var taskSpace = uuid.MustParse("6820be1b-f4e2-4449-b78d-ee392f35dd98")

// subConversationID is the id of the sub-conversation of task taskID of
// the conversation parentID.
func subConversationID(parentID, taskID string) string {
	return uuid.NewSHA1(taskSpace, []byte(parentID+"/"+taskID)).String()
}

// findStored adds the records of the tasks whose sub-conversations are
// stored in m.dir, task_00000001 on while they exist: the tasks of an
// earlier process of the same caller.
func (m *manager) findStored() {
	for n := len(m.tasks) + 1; ; n++ {
		id := m.taskID(n)
		cid := subConversationID(m.parentID, id)
		if _, err := os.Stat(filepath.Join(filestore.Dir(m.dir, cid), filestore.BaseStateFile)); err != nil {
			return
		}
		m.tasks[id] = &record{id: id, conversationID: cid}
	}
}

// run runs the sub-conversation of rec with the prompt of a and returns
// its answer, or why it failed.
func (m *manager) run(ctx context.Context, caller *agent.Caller, rec *record, def *Definition, a *Action, replay bool) (text string, failed bool, err error) {
	log := m.logger(caller).With("task", rec.id, "subagent", def.Name)
	sub, model, err := m.subAgent(caller, def, log)
	if err != nil {
		return "", true, err
	}
	parent := caller.Session.Fields()
	opts := &conversation.LocalOptions{
		ID:         rec.conversationID,
		HookConfig: def.Hooks,
		Secrets:    maps.Clone(parent.SecretRegistry.Sources),
		Logger:     log,
		// The caller's stuck detector setting holds for its sub-agents.
		DisableStuckDetection: !parent.StuckDetection,
	}
	if m.dir != "" {
		opts.Backend = filestore.NewBackend(m.dir, nil)
	}
	if def.MaxIterationPerRun != nil {
		opts.MaxIterations = *def.MaxIterationPerRun
	} else {
		opts.MaxIterations = parent.MaxIterations
	}
	if a.MaxTurns != nil && (opts.MaxIterations == 0 || *a.MaxTurns < opts.MaxIterations) {
		opts.MaxIterations = *a.MaxTurns
	}
	// A budget ends the sub-agent's run after the step that spends it: its
	// definition's, and what is left of the caller's, which its costs count
	// toward (the reference gives a sub-agent the caller's whole budget
	// when its definition has none). The sub-conversation's budget covers
	// its whole log, so a resumed task's earlier costs are added.
	limit := math.Inf(1)
	if def.MaxBudgetPerRun != nil {
		limit = *def.MaxBudgetPerRun
	}
	if b := caller.Session.MaxBudgetPerRun(); b > 0 {
		if limit = min(limit, b-callerSpent(caller)); limit <= 0 {
			return fmt.Sprintf("Sub-agent not started: the budget ($%.4f) is spent.", b), true, nil
		}
	}
	if !math.IsInf(limit, 1) {
		var earlier float64
		if mt := parent.Stats.UsageToMetrics["task:"+rec.id]; mt != nil {
			earlier = mt.AccumulatedCost
		}
		opts.MaxBudgetPerRun = limit + earlier
	}
	opts.ConfirmationPolicy = parent.ConfirmationPolicy
	if def.PermissionMode != nil {
		opts.ConfirmationPolicy = policy(*def.PermissionMode)
	}
	child, err := open.Conversation(ctx, sub, &workspace.Local{WorkingDir: caller.Session.WorkingDir()}, opts)
	if err != nil {
		return "", true, err
	}
	defer func() {
		if cerr := child.Close(); cerr != nil {
			log.Warn("task: closing the sub-conversation", "err", cerr)
		}
	}()
	if opts.ConfirmationPolicy == nil {
		// A resumed sub-conversation keeps its persisted policy otherwise.
		if err := child.SetConfirmationPolicy(ctx, security.NeverConfirm{}); err != nil {
			return "", true, err
		}
	}
	if l, ok := model.(*llm.LLM); ok {
		rec.usageID = l.UsageID()
		if prev, ok := child.State().Fields().Stats.UsageToMetrics[l.UsageID()]; ok && prev != nil {
			l.RestoreMetrics(*prev) // costs add up across resumes
		}
	}
	defer m.rollUp(caller, rec, child, model, log)

	if replay && child.Status() == conversation.StatusFinished {
		final, _ := agent.FinalResponse(ctx, child.State())
		return final, false, nil
	}
	if err := child.SendMessage(ctx, event.UserMessage(a.Prompt)); err != nil {
		return "", true, err
	}
	sctx, span := telemetry.StartOp(ctx, telemetry.KindSubAgent, "invoke_agent", a.SubagentType)
	err = m.runUntilDone(sctx, rec.id, child)
	if span.Recording() {
		span.SetString(telemetry.AttrOperation, "invoke_agent")
		span.SetString(telemetry.AttrAgentName, a.SubagentType)
		span.SetString(telemetry.AttrConversationID, rec.id)
		span.SetString(telemetry.AttrStatus, string(child.Status()))
		span.End(err)
	}
	if err != nil {
		var re *conversation.RunError
		if !errors.As(err, &re) {
			return "", true, err
		}
	}
	st := child.Status()
	if st == conversation.StatusFinished {
		final, _ := agent.FinalResponse(ctx, child.State())
		return final, false, nil
	}
	reason := lastError(ctx, child.State())
	if reason == "" {
		reason = fmt.Sprintf("Sub-agent stopped without finishing (status: %s).", st)
	}
	if partial, _ := agent.FinalResponse(ctx, child.State()); partial != "" {
		reason += "\nPartial result:\n" + partial
	}
	return reason, true, nil
}

// runUntilDone runs the sub-conversation, settling confirmations with
// Options.Confirm, until it stops for another reason.
func (m *manager) runUntilDone(ctx context.Context, id string, child conversation.Conversation) error {
	for {
		if err := child.Run(ctx); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if child.Status() != conversation.StatusWaitingForConfirmation {
			return nil
		}
		if m.opts.Confirm != nil {
			pending, err := child.State().PendingActions()
			if err != nil {
				return err
			}
			if !m.opts.Confirm(id, pending) {
				if err := child.RejectPendingActions(ctx, "User rejected the actions"); err != nil {
					return err
				}
			}
		}
	}
}

func policy(mode string) security.ConfirmationPolicy {
	switch mode {
	case AlwaysConfirm:
		return security.AlwaysConfirm{}
	case ConfirmRisky:
		return security.NewConfirmRisky()
	}
	return security.NeverConfirm{}
}

// subAgent builds the sub-agent of def on the caller's model.
func (m *manager) subAgent(caller *agent.Caller, def *Definition, log *slog.Logger) (*agent.Agent, llm.Model, error) {
	if def.Model != "" && def.Model != "inherit" {
		return nil, nil, fmt.Errorf("sub-agent %q asks for the LLM profile %q: gohands has no profile store; use model: inherit", def.Name, def.Model)
	}
	cfg := caller.Agent.LLM
	cfg.Stream = false
	var model llm.Model
	switch p := caller.Model.(type) {
	case *llm.LLM:
		c := p.Config()
		c.Stream = false
		l, err := p.Derive(c)
		if err != nil {
			return nil, nil, err
		}
		cfg, model = c, l
	case nil:
		l, err := llm.New(cfg, nil)
		if err != nil {
			return nil, nil, err
		}
		model = l
	default:
		// A model of the application's own (a router, a fallback chain):
		// shared, so its costs are not told apart.
		model = p
	}
	var specs []tool.Spec
	for _, n := range def.Tools {
		specs = append(specs, tool.Spec{Name: n})
	}
	sub := agent.New(cfg, specs, &agent.Options{Model: model})
	// A sub-agent runs with exactly its caller's MCP servers (plugin ones
	// included); those its definition names are not started, as 1.58.2
	// drops them for a delegated sub-agent.
	sub.MCPConfig = maps.Clone(caller.Agent.MCPConfig)
	if len(def.MCPConfig) > 0 {
		log.Info("the sub-agent's own MCP servers are not started: it uses its caller's", "declared", slices.Sorted(maps.Keys(def.MCPConfig)))
	}
	ac, err := agentContext(caller.Session.WorkingDir(), m.opts.Home, def)
	if err != nil {
		return nil, nil, err
	}
	sub.AgentContext = ac
	sub.Condenser = def.Condenser
	if len(sub.Condenser) == 0 {
		ccfg := cfg
		ccfg.UsageID = "condenser"
		if sub.Condenser, err = event.MarshalKinded(condenser.NewLLMSummarizing(ccfg, nil)); err != nil {
			return nil, nil, err
		}
	}
	return sub, model, nil
}

// agentContext is the sub-agent's context: its definition's prompt as the
// system message suffix, and its skills.
func agentContext(workDir, home string, def *Definition) (json.RawMessage, error) {
	if def.SystemPrompt == "" && len(def.Skills) == 0 {
		return nil, nil
	}
	ac := &skill.AgentContext{SystemMessageSuffix: def.SystemPrompt}
	if len(def.Skills) > 0 {
		project, _ := skill.LoadProject(workDir)
		user, _ := skill.LoadUser(home)
		all := skill.Merge(nil, user, project) // the project's win
		for _, name := range def.Skills {
			i := slices.IndexFunc(all, func(s skill.Skill) bool { return s.Name == name })
			if i < 0 {
				return nil, modelErr("Skill '%s' not found but was given to agent '%s'.", name, def.Name)
			}
			ac.Skills = append(ac.Skills, all[i])
		}
	}
	return json.Marshal(ac)
}

// rollUp records the sub-agent's costs in the caller's stats under
// "task:<id>", replacing the previous figure (it is cumulative).
func (m *manager) rollUp(caller *agent.Caller, rec *record, child conversation.Conversation, model llm.Model, log *slog.Logger) {
	var total llm.Metrics
	live, _ := model.(*llm.LLM)
	for id, mt := range child.State().Fields().Stats.UsageToMetrics {
		if mt != nil && (live == nil || id != live.UsageID()) {
			total.Merge(*mt)
		}
	}
	if live != nil {
		total.Merge(live.Metrics())
		total.ModelName = live.Config().Model
	}
	err := caller.Session.State().Update(func(f *conversation.Fields) error {
		next := maps.Clone(f.Stats.UsageToMetrics)
		if next == nil {
			next = event.Map[string, *llm.Metrics]{}
		}
		next["task:"+rec.id] = &total
		f.Stats.UsageToMetrics = next
		return nil
	})
	if err != nil {
		log.Warn("task: recording the sub-agent's costs", "err", err)
	}
}

// callerSpent is what the caller's conversation has spent: its stored
// stats, with its model's live metrics for the model's own usage id (the
// stats are saved after the step). Sub-agents running beside this one
// count once they end.
func callerSpent(caller *agent.Caller) float64 {
	live, _ := caller.Model.(*llm.LLM)
	var spent float64
	for id, mt := range caller.Session.Fields().Stats.UsageToMetrics {
		if mt != nil && (live == nil || id != live.UsageID()) {
			spent += mt.AccumulatedCost
		}
	}
	if live != nil {
		spent += live.Metrics().AccumulatedCost
	}
	return spent
}

// lastError returns the detail of a conversation's last
// ConversationErrorEvent, or "".
func lastError(ctx context.Context, st *conversation.State) string {
	p, err := st.Events().Search(conversation.Query{Kind: event.KindConversationError, Descending: true, Limit: 1})
	if err != nil || len(p.Entries) == 0 {
		return ""
	}
	e, err := st.Events().Event(ctx, p.Entries[0].Index)
	if err != nil {
		return ""
	}
	if ce, ok := e.(*event.ConversationErrorEvent); ok {
		return ce.Detail
	}
	return ""
}

func (m *manager) close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tasks = map[string]*record{}
	// The next use finds the stored tasks again (findStored).
	dir := m.tmpDir
	m.tmpDir, m.dir = "", ""
	if dir != "" {
		return os.RemoveAll(dir)
	}
	return nil
}
