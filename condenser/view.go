package condenser

import (
	"slices"

	"github.com/gohands/gohands/event"
)

// View is the model's view of a conversation's active branch: the events
// the model sees, in order, with every Condensation applied, and whether a
// CondensationRequest is still waiting for a condenser. It is built from
// the event list; the log itself is never rewritten.
type View struct {
	// Events are the LLM-visible events.
	Events []event.Event
	// UnhandledRequest is true when a CondensationRequest came after the
	// last Condensation.
	UnhandledRequest bool
	// ConversationID, when set, is the conversation's id: a summary call
	// sends it as the agent's calls do (prompt_cache_key where the
	// provider takes one).
	ConversationID string
}

// NewView builds the view of events, the active branch oldest first.
// Events that are already a view (no Condensation events) give the same
// list back.
func NewView(events []event.Event) *View {
	v := &View{Events: make([]event.Event, 0, len(events))}
	for _, e := range events {
		v.Append(e)
	}
	return v
}

// Len returns the number of events in the view.
func (v *View) Len() int { return len(v.Events) }

// Append takes e into account: LLM-visible events are appended, a
// Condensation is applied (clearing the request flag), a
// CondensationRequest sets the request flag and other events are ignored.
// Slices previously taken from v.Events are never written to.
func (v *View) Append(e event.Event) {
	switch e := e.(type) {
	case *event.Condensation:
		v.Events = Apply(v.Events, e)
		v.UnhandledRequest = false
	case *event.CondensationRequest:
		v.UnhandledRequest = true
	default:
		if Visible(e) {
			v.Events = append(v.Events, e)
		}
	}
}

// Visible reports whether the model sees e (reference: LLMConvertibleEvent).
func Visible(e event.Event) bool {
	switch e.(type) {
	case *event.SystemPromptEvent, *event.MessageEvent, *event.ActionEvent, *event.ObservationEvent,
		*event.UserRejectObservation, *event.AgentErrorEvent, *event.CondensationSummaryEvent:
		return true
	}
	return false
}

// Apply returns a new list: view without the events c forgets, and with
// c's summary inserted at its offset (as a CondensationSummaryEvent with
// id "<c.ID>-summary") when both are set. view is not modified.
func Apply(view []event.Event, c *event.Condensation) []event.Event {
	forget := make(map[string]bool, len(c.ForgottenEventIDs))
	for _, id := range c.ForgottenEventIDs {
		forget[id] = true
	}
	out := make([]event.Event, 0, len(view)+1)
	for _, e := range view {
		if !forget[e.EventBase().ID] {
			out = append(out, e)
		}
	}
	if c.Summary != nil && c.SummaryOffset != nil {
		off := min(max(*c.SummaryOffset, 0), len(out))
		s := &event.CondensationSummaryEvent{
			Base:    event.Base{ID: c.ID + "-summary", Timestamp: c.Timestamp, Source: event.SourceEnvironment},
			Summary: *c.Summary,
		}
		out = slices.Insert(out, off, event.Event(s))
	}
	return out
}

// ViewKind reports whether an event of kind changes a View: it is Visible,
// or it is a Condensation or CondensationRequest. Readers of a stored log
// use it to decode only what the view needs.
func ViewKind(kind string) bool {
	switch kind {
	case event.KindSystemPrompt, event.KindMessage, event.KindAction, event.KindObservation,
		event.KindUserRejectObservation, event.KindAgentError, event.KindCondensationSummary,
		event.KindCondensation, event.KindCondensationRequest:
		return true
	}
	return false
}

// ResultCallID returns the tool call id that e answers when e is a
// result (an observation, a rejection or an agent error), or "".
func ResultCallID(e event.Event) string {
	switch e := e.(type) {
	case *event.ObservationEvent:
		return e.ToolCallID
	case *event.UserRejectObservation:
		return e.ToolCallID
	case *event.AgentErrorEvent:
		return e.ToolCallID
	}
	return ""
}

// ManipulationIndices returns, in increasing order, the indices i in
// [0, len(events)] where events may be cut: an event may be inserted
// before events[i], and events[i:j] removed when i and j are both in the
// set. No index falls
//
//   - between two ActionEvents of one LLM response (a tool-call batch),
//   - between an action and the result of its tool call,
//   - inside a tool loop: from an action with thinking blocks over the
//     actions and results that follow it.
func ManipulationIndices(events []event.Event) []int {
	ok := make([]bool, len(events)+1)
	for i := range ok {
		ok[i] = true
	}
	pending := make(map[string]bool)
	inLoop := false
	for i, e := range events {
		// Index i is the cut before events[i]: calls still open there
		// would be split from their results.
		if len(pending) > 0 {
			ok[i] = false
		}
		if i > 0 {
			if a, isA := e.(*event.ActionEvent); isA {
				if p, isP := events[i-1].(*event.ActionEvent); isP && p.LLMResponseID == a.LLMResponseID {
					ok[i] = false
				}
			}
		}
		switch e := e.(type) {
		case *event.ActionEvent:
			if len(e.ThinkingBlocks) > 0 {
				inLoop = true
			} else if inLoop {
				ok[i] = false
			}
			pending[e.ToolCallID] = true
		case *event.ObservationEvent, *event.UserRejectObservation, *event.AgentErrorEvent:
			if inLoop {
				ok[i] = false
			}
			delete(pending, ResultCallID(e))
		default:
			inLoop = false
		}
	}
	if len(pending) > 0 {
		ok[len(events)] = false
	}
	out := make([]int, 0, len(ok))
	for i, b := range ok {
		if b {
			out = append(out, i)
		}
	}
	return out
}

// nextIndex returns the smallest index of idx at or above threshold.
func nextIndex(idx []int, threshold int) (int, bool) {
	i, _ := slices.BinarySearch(idx, threshold)
	if i == len(idx) {
		return 0, false
	}
	return idx[i], true
}
