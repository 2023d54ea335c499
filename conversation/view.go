package conversation

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/gohands/gohands/condenser"
	"github.com/gohands/gohands/event"
)

// applyToView returns view with e taken into account, as condenser.View
// does: visible events are appended, a Condensation forgets events and
// may insert its summary. view's existing elements are never written to.
func applyToView(view []event.Event, e event.Event) []event.Event {
	v := condenser.View{Events: view}
	v.Append(e)
	return v.Events
}

// buildView builds the model's view from the active branch of s and
// enforces the pairing of tool calls and results (see Session.View).
func buildView(s *State) ([]event.Event, error) {
	branch, err := s.ActiveBranch()
	if err != nil {
		return nil, err
	}
	view, err := viewOf(s.ctx, s.Events(), branch)
	if err != nil {
		return nil, err
	}
	pending := make(map[string]bool)
	for _, en := range UnmatchedActions(branch) {
		pending[en.ID] = true
	}
	return pairCalls(view, pending), nil
}

// viewOf returns the view of branch, entries of log, with condensations
// applied. An event that a later condensation forgets is not decoded: a
// stand-in with its id holds its place (summary offsets count it) until
// that condensation removes it. A long conversation with a condenser is
// mostly such events, and resuming it decodes only what the model sees.
func viewOf(ctx context.Context, log *Log, branch []Entry) ([]event.Event, error) {
	var conds []int
	for _, en := range branch {
		if en.Kind == event.KindCondensation {
			conds = append(conds, en.Index)
		}
	}
	condEvs, err := decodeEvents(ctx, log, conds)
	if err != nil {
		return nil, err
	}
	forgetAt := make(map[string]int) // id -> index of the last condensation forgetting it
	for k, e := range condEvs {
		if c, ok := e.(*event.Condensation); ok {
			for _, id := range c.ForgottenEventIDs {
				forgetAt[id] = conds[k]
			}
		}
	}
	standIn := func(en Entry) bool { // only visible events take a place
		return forgetAt[en.ID] > en.Index && en.Kind != event.KindCondensationRequest
	}
	var idx []int
	for _, en := range branch {
		if condenser.ViewKind(en.Kind) && en.Kind != event.KindCondensation && !standIn(en) {
			idx = append(idx, en.Index)
		}
	}
	evs, err := decodeEvents(ctx, log, idx)
	if err != nil {
		return nil, err
	}
	var view []event.Event
	stand := make(map[event.Event]bool)
	for _, en := range branch {
		var e event.Event
		switch {
		case !condenser.ViewKind(en.Kind):
			continue
		case len(conds) > 0 && en.Index == conds[0]:
			e, condEvs, conds = condEvs[0], condEvs[1:], conds[1:]
		case standIn(en):
			e = &event.MessageEvent{Base: event.Base{ID: en.ID}}
			stand[e] = true
		default:
			e, evs = evs[0], evs[1:]
		}
		view = applyToView(view, e)
	}
	for _, e := range view {
		if stand[e] {
			return nil, fmt.Errorf("conversation: event %s was to be forgotten by a condensation but is in the view", e.EventBase().ID)
		}
	}
	return view, nil
}

// Paired returns view without the tool calls that have no result yet
// (with the other calls of their response and those calls' results), so
// that it can be sent to a model while actions are pending or running:
// providers reject a tool call without its result. view is not modified.
func Paired(view []event.Event) []event.Event {
	return pairCalls(slices.Clip(view), nil)
}

// pairCalls makes every tool call of view answered by exactly one result
// that follows it: the first result of a call is kept and later ones
// dropped, results whose call is not in view are dropped, and calls with
// no result are dropped unless their action is pending. If a call of a
// response is dropped, the other calls of that response (and their
// results) are dropped too, so a response is never half shown.
func pairCalls(view []event.Event, pending map[string]bool) []event.Event {
	for {
		calls := make(map[string]bool)
		answered := make(map[string]bool)
		for _, e := range view {
			if a, ok := e.(*event.ActionEvent); ok {
				calls[a.ToolCallID] = true
			} else if id := condenser.ResultCallID(e); id != "" && calls[id] {
				answered[id] = true
			}
		}
		dropResp := make(map[string]bool)
		for _, e := range view {
			if a, ok := e.(*event.ActionEvent); ok && !answered[a.ToolCallID] && !pending[a.ID] {
				dropResp[a.LLMResponseID] = true
			}
		}
		dropCall := make(map[string]bool)
		for _, e := range view {
			if a, ok := e.(*event.ActionEvent); ok && dropResp[a.LLMResponseID] {
				dropCall[a.ToolCallID] = true
			}
		}
		out := make([]event.Event, 0, len(view))
		seen := make(map[string]bool)
		live := make(map[string]bool)
		for _, e := range view {
			if a, ok := e.(*event.ActionEvent); ok {
				if dropCall[a.ToolCallID] {
					continue
				}
				live[a.ToolCallID] = true
			} else if id := condenser.ResultCallID(e); id != "" {
				if !live[id] || seen[id] {
					continue
				}
				seen[id] = true
			}
			out = append(out, e)
		}
		if len(out) == len(view) {
			return out
		}
		view = out
	}
}

// decodeEvents returns the events at indexes idx of s, decoded on a few
// goroutines when there are many: resuming a long conversation decodes
// its whole view, and reading and decoding a thousand events is most of a
// resume. A Log is safe for concurrent use.
func decodeEvents(ctx context.Context, s *Log, idx []int) ([]event.Event, error) {
	out := make([]event.Event, len(idx))
	workers := min(runtime.GOMAXPROCS(0), 4, len(idx)/128+1)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := len(idx)*w/workers, len(idx)*(w+1)/workers
		wg.Go(func() {
			for k := lo; k < hi; k++ {
				e, err := s.Event(ctx, idx[k])
				if err != nil {
					errs[w] = err
					return
				}
				out[k] = e
			}
		})
	}
	wg.Wait()
	for _, err := range errs { // the first failing index's, as in order
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
