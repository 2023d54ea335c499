// Package workflow is the workflow tool: the agent writes a short Python
// script whose `async def main(wf)` orchestrates sub-agents (one, one per
// item of a list, a reducer over their answers, per-item pipelines), and
// gets what main returns as the tool's result.
//
// The script runs in a python3 process (Options.Python) under a runner of
// this package, which checks it first (no imports, no dunder names, no
// eval/exec/open and the like, only wf's public methods) and gives it a
// small set of builtins; this is a guard against mistakes, not a sandbox,
// so running a workflow is approving code execution, as in the reference.
// Each sub-agent the script starts is a task of the task tool's kind
// (tools/task), run here with the calling conversation's model, budget,
// confirmation policy and stuck detection, its costs added to the
// caller's stats; at most max_concurrency run at once. Pausing the caller
// ends the script and pauses its sub-agents. The same workflow run again
// after a crash or a pause takes up the sub-agents of the run cut short
// rather than starting them over (see restart.go), and the restart error
// of a workflow a crash cut short says so.
//
// The sub-agents' costs are in the caller's stats under
// "task:workflow_00000001", "task:workflow_00000002", ..., numbered across
// the conversation. 1.58.2 starts each workflow run's numbering over at
// task_00000001, the task tool's too, and replaces a key's figure when it
// records one, so a second workflow (or a task) in the same conversation
// wipes out the first's sub-agent costs; this is the one difference the
// live comparison (tests/pyclient TestAgentTools158) allows.
//
// Names and wire format are the reference 1.58's: registry names
// "workflow_tool_set" and "workflow", kinds WorkflowAction and
// WorkflowObservation, the wf methods run_agent, map_agents, reduce_agent,
// pipeline and flatten.
package workflow

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/task"
)

// Names of the tool set and of its one tool (both registered, as in the
// reference).
const (
	ToolSetName = "workflow_tool_set"
	Name        = "workflow"
)

// Statuses of a workflow in its observation.
const (
	StatusCompleted = "completed"
	StatusError     = "error"
)

// MaxConcurrency bounds Action.MaxConcurrency.
const MaxConcurrency = 64

// Timeout bounds one workflow run, as the reference's.
const Timeout = time.Hour

// Action is one workflow run.
type Action struct {
	Name           string `json:"name" desc:"A short name for this workflow."`
	Script         string `json:"script" desc:"The Python script: it defines async def main(wf) and works only through wf."`
	MaxConcurrency int    `json:"max_concurrency" default:"8" desc:"At most this many sub-agents run at once (1 to 64)."`
}

// SetDefaults implements event.Defaulter.
func (a *Action) SetDefaults() { a.MaxConcurrency = 8 }

// Observation is a workflow's outcome: what main returned, as Python's
// str() writes it, or why the workflow failed.
type Observation struct {
	event.ObservationBase
	Name   string `json:"name"`
	Status string `json:"status"`
}

func init() {
	event.RegisterKind[Action]("WorkflowAction")
	event.RegisterKind[Observation]("WorkflowObservation")
	tool.Register(ToolSetName, factory)
	tool.Register(Name, factory)
}

func factory(ctx tool.Context, params json.RawMessage) ([]tool.Tool, error) {
	var p map[string]json.RawMessage
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	for k := range p {
		return nil, fmt.Errorf("unknown param %q: the workflow tool takes no params", k)
	}
	return []tool.Tool{New(&Options{WorkingDir: ctx.WorkingDir})}, nil
}

// Options configures New. A nil *Options is the default.
type Options struct {
	// WorkingDir is the project whose sub-agent definitions are offered
	// (see task.Available).
	WorkingDir string
	// Python is the interpreter that runs scripts; empty means "python3".
	Python string
	// Tasks, if set, runs the sub-agents; nil means a task tool of the
	// workflow's own (task ids workflow_00000001, ...).
	Tasks *task.Tool
	// Logger receives the scripts' print output and diagnostics; nil
	// means the calling conversation's.
	Logger *slog.Logger
}

// Tool is the workflow tool.
type Tool struct {
	*tool.Typed[Action, *Observation]
}

// ParseAction implements tool.Tool: max_concurrency must be within
// bounds.
func (t *Tool) ParseAction(args json.RawMessage) (event.Action, error) {
	a, err := t.Typed.ParseAction(args)
	if err != nil {
		return nil, err
	}
	if w, ok := a.(*Action); ok && (w.MaxConcurrency < 1 || w.MaxConcurrency > MaxConcurrency) {
		return nil, &tool.FieldError{Field: "max_concurrency", Msg: fmt.Sprintf("field \"max_concurrency\": %d is not between 1 and %d", w.MaxConcurrency, MaxConcurrency)}
	}
	return a, nil
}

// Resources implements agent.ResourceDeclarer: a workflow takes no lock.
func (t *Tool) Resources(event.Action) []string { return nil }

//go:embed runner.py
var runner string

const description = `Run a workflow: a Python script that hands work to sub-agents and combines their answers. Use it for large tasks that split into independent parts (an audit of many files or modules, several plans reviewed against each other, a sweep for one kind of bug); the parts' details stay out of this conversation.

The script defines async def main(wf) and returns the result you get back (as str() writes it). It only orchestrates: no imports, no files or commands (sub-agents do the work with their tools), only these wf methods:
- await wf.run_agent(prompt, subagent_type="general-purpose", description=None) -> the sub-agent's answer
- await wf.map_agents(items, prompt, subagent_type="general-purpose", max_concurrency=None, description=None) -> one answer per item, in order; prompt is a function of the item or a string with {item}; if any fails, the call raises one error listing the failures
- await wf.reduce_agent(items, prompt, subagent_type="general-purpose", description=None) -> one sub-agent's answer to prompt followed by items as JSON (cut to 12000 characters)
- await wf.pipeline(items, *stages) -> each item through every stage in turn (a stage is a function, async or not, of the previous value), items independently; an item whose stage raises becomes None
- wf.flatten(values) -> a list of lists made one list

subagent_type is one of the task tool's sub-agent kinds. print() goes to the logs, not to you.

Example:
async def main(wf):
    findings = await wf.map_agents(["api/", "db/", "ui/"], "Find unchecked errors in {item}; list file:line.")
    return await wf.reduce_agent(findings, "Merge these lists and rank them by risk.")`

// New returns the workflow tool.
func New(opts *Options) *Tool {
	var o Options
	if opts != nil {
		o = *opts
	}
	own := o.Tasks == nil
	if own {
		o.Tasks = task.New(&task.Options{WorkingDir: o.WorkingDir, IDPrefix: "workflow"})
	}
	r := &run{opts: o}
	topts := &tool.Options{
		Annotations: &event.ToolAnnotations{Title: Name, DestructiveHint: true, OpenWorldHint: true},
	}
	if own {
		topts.Close = o.Tasks.Close
	}
	return &Tool{Typed: tool.New(Name, description, r.execute, topts)}
}

type run struct{ opts Options }

func result(a *Action, text string, failed bool) *Observation {
	o := &Observation{Name: a.Name, Status: StatusCompleted}
	if failed {
		o.Status, o.IsError = StatusError, true
	}
	o.Content = event.List[event.Content]{event.Text(text)}
	return o
}

// message is a line between the runner and this package.
type message struct {
	Call         int     `json:"call,omitempty"`
	Prompt       string  `json:"prompt,omitempty"`
	SubagentType string  `json:"subagent_type,omitempty"`
	Description  *string `json:"description,omitempty"`
	Result       *string `json:"result,omitempty"`
	Error        *string `json:"error,omitempty"`
}

func (r *run) execute(ctx context.Context, a *Action) (*Observation, error) {
	caller, ok := agent.CallerFrom(ctx)
	if !ok {
		return result(a, "The workflow tool runs only in an agent's conversation.", true), nil
	}
	log := r.opts.Logger
	if log == nil {
		log = caller.Session.Logger()
	}
	log = log.With("workflow", a.Name)
	python := cmp.Or(r.opts.Python, "python3")
	if _, err := exec.LookPath(python); err != nil {
		return result(a, fmt.Sprintf("Workflows need Python 3 (%s): %v", python, err), true), nil
	}
	jnl, err := openJournal(journalPath(caller.Session.Dir(), a))
	if err != nil {
		log.Warn("workflow: its journal is unreadable: its tasks start over", "err", err)
		jnl = &journal{path: journalPath(caller.Session.Dir(), a)}
	}
	rctx, cancel := context.WithTimeoutCause(ctx, Timeout, fmt.Errorf("the workflow ran longer than %s", Timeout))
	defer cancel()
	cmd := exec.CommandContext(rctx, python, "-I", "-c", runner)
	cmd.Dir = caller.Session.WorkingDir()
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &limited{w: &stderr, n: 64 << 10}
	if err := cmd.Start(); err != nil {
		return result(a, fmt.Sprintf("Starting the workflow: %v", err), true), nil
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex // serialises writes to stdin
		slots = make(chan struct{}, a.MaxConcurrency)
	)
	write := func(m any) error {
		b, err := json.Marshal(m)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		_, err = stdin.Write(append(b, '\n'))
		return err
	}
	final, werr := func() (*message, error) {
		if err := write(map[string]any{"script": a.Script, "max_concurrency": a.MaxConcurrency}); err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var m message
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				return nil, fmt.Errorf("the runner wrote %q: %w", sc.Bytes(), err)
			}
			if m.Call == 0 {
				return &m, nil
			}
			wg.Go(func() {
				select {
				case slots <- struct{}{}:
				case <-rctx.Done():
					return
				}
				defer func() { <-slots }()
				text, err := r.task(rctx, jnl, &m, log)
				if rctx.Err() != nil {
					return // the workflow is over
				}
				reply := message{Call: m.Call, Result: &text}
				if err != nil {
					msg := err.Error()
					reply = message{Call: m.Call, Error: &msg}
				}
				if err := write(reply); err != nil {
					log.Warn("workflow: answering the runner", "err", err)
				}
			})
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
		return nil, io.ErrUnexpectedEOF
	}()
	cancel() // ends the runner, and the sub-agents of a script that returned without waiting for them
	stdin.Close()
	wg.Wait()
	cmd.Wait()
	if s := strings.TrimSpace(stderr.String()); s != "" {
		log.Info("workflow: the script's output", "stderr", s)
	}
	if ctx.Err() == nil {
		if err := jnl.remove(); err != nil {
			log.Warn("workflow: removing its journal", "err", err)
		}
	}
	switch {
	case ctx.Err() != nil:
		return nil, context.Cause(ctx) // the caller was paused
	case final != nil && final.Error != nil:
		return result(a, *final.Error, true), nil
	case final != nil && final.Result != nil:
		return result(a, *final.Result, false), nil
	case errors.Is(context.Cause(rctx), context.Canceled):
		return result(a, fmt.Sprintf("The workflow runner failed: %v\n%s", werr, lastLines(stderr.String(), 20)), true), nil
	default:
		return result(a, fmt.Sprintf("Workflow failed: %v", context.Cause(rctx)), true), nil
	}
}

// task runs the sub-agent of the runner's call m: a task of an earlier
// run of the workflow cut short, taken up, or a new one, recorded in the
// journal.
func (r *run) task(ctx context.Context, jnl *journal, m *message, log *slog.Logger) (string, error) {
	c := &task.Call{Prompt: m.Prompt, SubagentType: m.SubagentType, Description: m.Description}
	if id, ok := jnl.claim(m.Prompt, m.SubagentType); ok {
		// A task recorded just before a crash may have no sub-conversation
		// yet: it starts over.
		if caller, _ := agent.CallerFrom(ctx); caller != nil {
			if _, stored := task.StoredStatus(caller.Session.ID(), caller.Session.Dir(), id); stored {
				c.Resume, c.Replay, c.Prompt = id, true, continuePrompt
				_, text, err := r.opts.Tasks.Do(ctx, c)
				return text, err
			}
		}
	}
	c.Started = func(id string) {
		e := journalEntry{TaskID: id, Prompt: m.Prompt, SubagentType: m.SubagentType}
		if err := jnl.add(e); err != nil {
			log.Warn("workflow: recording a task in its journal", "task", id, "err", err)
		}
	}
	_, text, err := r.opts.Tasks.Do(ctx, c)
	return text, err
}

// limited writes at most n bytes to w and drops the rest.
type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
