package agent

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/telemetry"
	"github.com/gohands/gohands/tool"
)

// Messages the model sees when its tool calls could not run.
const (
	interruptedText = "Tool call interrupted: the conversation was paused before it completed."
	cancelledText   = "Tool call not run: the conversation was paused."
)

// result is the outcome of one action of a batch.
type result struct {
	ev   event.Event
	done chan struct{}
}

// execute runs a batch of actions and emits their results in the batch's
// order, each as soon as it and all before it are done. Actions in decided
// already have their result (an error, a hook's rejection). The
// PreToolUse hooks of the batch ran when it was stored (see hookActions).
// If the batch finished (a finish action ran), the status becomes
// finished.
func (r *runner) execute(ctx context.Context, batch []*event.ActionEvent, decided map[string]event.Event) error {
	results := make([]result, len(batch))
	finished := false
	var wg sync.WaitGroup
	var sem chan struct{}
	parallel := r.limit > 1 && len(batch) > 1
	if parallel {
		sem = make(chan struct{}, r.limit)
	}
	for i, a := range batch {
		if e, ok := decided[a.ID]; ok {
			results[i].ev = e
			continue
		}
		if a.Action == nil {
			// A pending action always has one; be safe with odd logs.
			results[i].ev = r.errorEvent(a, "Action could not be parsed.", event.AgentActionError)
			continue
		}
		if a.ToolName == FinishToolName {
			finished = true
		}
		if !parallel {
			results[i].ev = r.run(ctx, a)
			continue
		}
		results[i].done = make(chan struct{})
		wg.Go(func() {
			defer close(results[i].done)
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i].ev = r.run(ctx, a)
		})
	}
	var emitErr error
	for i := range results {
		if results[i].done != nil {
			<-results[i].done
		}
		var evs []event.Event
		if emitErr == nil {
			// The PostToolUse hooks' runs go before the observation, as
			// in the reference.
			evs, emitErr = r.postToolUse(ctx, batch[i], results[i].ev)
		}
		if emitErr == nil {
			emitErr = r.sess.EmitAll(append(evs, results[i].ev)...)
		}
	}
	wg.Wait()
	if emitErr != nil {
		return emitErr
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if finished {
		return r.finish(ctx)
	}
	return nil
}

// run executes one action under its resource locks and returns its result
// event. It never fails: failures are AgentErrorEvents.
func (r *runner) run(ctx context.Context, a *event.ActionEvent) (ev event.Event) {
	t, ok := r.byName[a.ToolName]
	if !ok {
		return r.errorEvent(a, fmt.Sprintf("Tool '%s' not found.", a.ToolName), event.AgentActionError)
	}
	if ctx.Err() != nil {
		return r.errorEvent(a, cancelledText, event.AgentActionError)
	}
	unlock := r.lock(t, a.Action)
	defer unlock()
	if ctx.Err() != nil {
		return r.errorEvent(a, cancelledText, event.AgentActionError)
	}
	// Ended after the recovery below has set ev.
	ctx, span := telemetry.StartOp(ctx, telemetry.KindToolCall, "execute_tool", a.ToolName)
	if span.Recording() {
		defer endToolSpan(span, a, &ev)
	}
	defer func() {
		if p := recover(); p != nil {
			r.sess.Logger().Error("tool panicked", "tool", a.ToolName, "panic", p)
			ev = r.errorEvent(a, fmt.Sprintf("Error executing tool '%s': %v", a.ToolName, p), internalError)
		}
	}()
	obs, err := t.Execute(WithCaller(ctx, &Caller{Session: r.sess, Agent: r.a, Model: r.model}), a.Action)
	switch {
	case err != nil && ctx.Err() != nil:
		return r.errorEvent(a, interruptedText, event.AgentActionError)
	case err != nil:
		return r.errorEvent(a, fmt.Sprintf("Error executing tool '%s': %v", a.ToolName, err), event.AgentActionError)
	case obs == nil:
		return r.errorEvent(a, fmt.Sprintf("Error executing tool '%s': no result", a.ToolName), internalError)
	}
	return &event.ObservationEvent{
		Base:        event.NewBase(event.SourceEnvironment),
		ToolName:    a.ToolName,
		ToolCallID:  a.ToolCallID,
		Observation: obs,
		ActionID:    a.ID,
	}
}

// internalError classifies failures of tools themselves.
var internalError = event.ErrorClassification{Kind: event.ErrorKindInternal, UserAction: event.UserActionNone}

func (r *runner) errorEvent(a *event.ActionEvent, msg string, cls event.ErrorClassification) *event.AgentErrorEvent {
	return &event.AgentErrorEvent{
		Base:     event.NewBase(event.SourceAgent),
		ToolName: a.ToolName, ToolCallID: a.ToolCallID, Error: msg, Classification: cls,
	}
}

// lock takes the locks of the resources action uses, in sorted order so
// that two batches never deadlock, and returns their release.
func (r *runner) lock(t tool.Tool, action event.Action) (unlock func()) {
	var keys []string
	if d, ok := t.(ResourceDeclarer); ok {
		keys = slices.Compact(slices.Sorted(slices.Values(d.Resources(action))))
	} else {
		keys = []string{"tool:" + t.Name()}
	}
	if len(keys) == 0 || r.limit == 1 {
		return func() {}
	}
	ms := make([]*sync.Mutex, len(keys))
	r.lockMu.Lock()
	for i, k := range keys {
		m, ok := r.locks[k]
		if !ok {
			m = new(sync.Mutex)
			r.locks[k] = m
		}
		ms[i] = m
	}
	r.lockMu.Unlock()
	for _, m := range ms {
		m.Lock()
	}
	return func() {
		for i := len(ms) - 1; i >= 0; i-- {
			ms[i].Unlock()
		}
	}
}

// endToolSpan ends a tool call's span with what the call gave: its name,
// call id, exit code and whether it failed; never its arguments or output.
func endToolSpan(span telemetry.Span, a *event.ActionEvent, ev *event.Event) {
	span.SetString(telemetry.AttrOperation, "execute_tool")
	span.SetString(telemetry.AttrToolName, a.ToolName)
	span.SetString(telemetry.AttrToolCallID, a.ToolCallID)
	failed := true
	if o, ok := (*ev).(*event.ObservationEvent); ok {
		failed = o.Observation.Obs().IsError
		if c, ok := o.Observation.(telemetry.ExitCoder); ok {
			if code, ok := c.ProcessExitCode(); ok {
				span.SetInt(telemetry.AttrExitCode, int64(code))
			}
		}
	}
	if failed {
		span.SetString(telemetry.AttrToolError, "true")
	}
	span.End(nil)
}

// ExecuteTool implements conversation.ToolExecutor: the tool runs as in a
// step (its lock, its caller, a panic recovered) but nothing is logged
// and no hook, policy or analyzer is consulted.
func (r *runner) ExecuteTool(ctx context.Context, name string, action event.Action) (obs event.Observation, err error) {
	t, ok := r.byName[name]
	if !ok {
		names := make([]string, len(r.tools))
		for i, t := range r.tools {
			names[i] = t.Name()
		}
		return nil, fmt.Errorf("%w %q; the agent has %v", conversation.ErrUnknownTool, name, names)
	}
	unlock := r.lock(t, action)
	defer unlock()
	defer func() {
		if p := recover(); p != nil {
			obs, err = nil, fmt.Errorf("tool %s panicked: %v", name, p)
		}
	}()
	obs, err = t.Execute(WithCaller(ctx, &Caller{Session: r.sess, Agent: r.a, Model: r.model}), action)
	if err == nil && obs == nil {
		err = fmt.Errorf("tool %s returned no result", name)
	}
	return obs, err
}
