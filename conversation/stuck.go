package conversation

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/gohands/gohands/event"
)

// StuckWindow is how many of the latest events of the active branch the
// stuck detector looks at, as in the reference.
const StuckWindow = 20

// StuckThresholds are the repetition counts at which the detector calls the
// agent stuck. The zero value of a field means its default.
type StuckThresholds struct {
	// ActionObservation is the number of identical action/observation pairs
	// in a row (default 4).
	ActionObservation int
	// ActionError is the number of identical actions failing in a row at
	// which the agent is nudged once; one more is stuck (default 3).
	ActionError int
	// Monologue is the number of agent messages in a row with nothing else
	// between them (default 3).
	Monologue int
	// AlternatingPattern is the number of actions (and as many observations)
	// of an A, B, A, B, ... loop (default 6).
	AlternatingPattern int
}

// DefaultStuckThresholds are the reference's thresholds.
var DefaultStuckThresholds = StuckThresholds{ActionObservation: 4, ActionError: 3, Monologue: 3, AlternatingPattern: 6}

func (t StuckThresholds) withDefaults() StuckThresholds {
	d := DefaultStuckThresholds
	if t.ActionObservation > 0 {
		d.ActionObservation = t.ActionObservation
	}
	if t.ActionError > 0 {
		d.ActionError = t.ActionError
	}
	if t.Monologue > 0 {
		d.Monologue = t.Monologue
	}
	if t.AlternatingPattern > 0 {
		d.AlternatingPattern = t.AlternatingPattern
	}
	return d
}

// StuckDetector tells when an agent repeats itself without progress. It
// looks at the active branch after the last user message (see
// StuckWindowEvents) for four patterns of the reference: the same action
// with the same observation, the same action failing, agent messages with
// no action between them, and two actions alternating.
//
// A StuckDetector is safe for concurrent use. Its only state is which error
// it last nudged the agent about; use one per conversation.
type StuckDetector struct {
	th StuckThresholds

	mu         sync.Mutex
	nudgedErr  string // id of the AgentErrorEvent ErrorNudge last fired for
	nudgedOnce bool
}

// NewStuckDetector returns a detector with the given thresholds; nil means
// DefaultStuckThresholds.
func NewStuckDetector(th *StuckThresholds) *StuckDetector {
	var t StuckThresholds
	if th != nil {
		t = *th
	}
	return &StuckDetector{th: t.withDefaults()}
}

// Thresholds returns the detector's thresholds.
func (d *StuckDetector) Thresholds() StuckThresholds { return d.th }

// Check reports whether events show the agent stuck and, if so, why, in a
// sentence fit for the user. events is the active branch, oldest first
// (typically StuckWindowEvents); only the last StuckWindow events after the
// last user message are looked at.
func (d *StuckDetector) Check(events []event.Event) (stuck bool, reason string) {
	events = sinceUser(events)
	th := d.th
	if len(events) < min(th.ActionObservation, th.ActionError, th.Monologue) {
		return false, ""
	}
	// The error streak is checked first only so that the reason names the
	// error; a streak of identical errors also matches the next pattern.
	// One pair more than the error threshold tells a streak that has just
	// reached it (nudge) from one that went on past it (stuck).
	need := max(th.ActionObservation, th.ActionError+1)
	actions, obs := lastActionsAndObservations(events, need, isObservationLike)

	if streak := errorStreak(actions, obs); streak > th.ActionError {
		return true, fmt.Sprintf("the agent repeated the same %s action %d times in a row and got the same error each time: %s", toolName(actions[0]), streak, preview(obs[0].(*event.AgentErrorEvent).Error))
	}
	if n := th.ActionObservation; len(actions) >= n && len(obs) >= n &&
		allEqual(actions[:n]) && allEqual(obs[:n]) {
		return true, fmt.Sprintf("the agent repeated the same %s action %d times in a row and got the same result each time", toolName(actions[0]), n)
	}
	if n := monologue(events); n >= th.Monologue {
		return true, fmt.Sprintf("the agent sent %d messages in a row without taking any action or hearing from the user", n)
	}
	if n := th.AlternatingPattern; len(events) >= n {
		acts, obs := lastActionsAndObservations(events, n, isResult)
		if len(acts) == n && len(obs) == n && alternating(acts) && alternating(obs) {
			return true, fmt.Sprintf("the agent alternated between the same two actions (%s and %s) with the same results %d times", toolName(acts[1]), toolName(acts[0]), n)
		}
	}
	return false, ""
}

// ErrorNudge returns the message the run loop should send the agent, as an
// environment-sourced user message, when the same action has just failed
// exactly ActionError times in a row: a hint to change course before the
// next failure ends the run. It returns "" otherwise, and fires once per
// streak even if called again before a new action is taken.
func (d *StuckDetector) ErrorNudge(events []event.Event) string {
	events = sinceUser(events)
	n := d.th.ActionError
	actions, obs := lastActionsAndObservations(events, n+1, isObservationLike)
	if errorStreak(actions, obs) != n {
		return ""
	}
	act := actions[0].(*event.ActionEvent)
	ev := obs[0].(*event.AgentErrorEvent)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.nudgedOnce && d.nudgedErr == ev.ID {
		return ""
	}
	d.nudgedErr, d.nudgedOnce = ev.ID, true
	return fmt.Sprintf("You have called `%s` with the same arguments %d times in a row and got the same error each time: %s\nCalling it the same way again will fail again. Read the error, then fix the arguments or take another approach.", act.ToolName, n, ev.Error)
}

// StuckWindowEvents returns the last StuckWindow events of s's active
// branch, oldest first, walking back from the HEAD so the cost does not
// grow with the conversation.
func StuckWindowEvents(s *State) ([]event.Event, error) {
	return stuckWindowEvents(s, nil)
}

// stuckWindowEvents is StuckWindowEvents reusing the events decoded for the
// previous window: cache, if not nil, maps event ids to decoded events and
// is left holding this window's.
func stuckWindowEvents(s *State, cache map[string]event.Event) ([]event.Event, error) {
	entries := s.log.Entries()
	var rev []event.Event
	seen := make(map[string]bool, StuckWindow)
	for id := resolveLeaf(s.log, s.Fields()); id != "" && len(rev) < StuckWindow; {
		if seen[id] {
			return nil, fmt.Errorf("conversation: cycle in event tree at %s", id)
		}
		seen[id] = true
		i, ok := s.log.Lookup(id)
		if !ok || i >= len(entries) {
			return nil, fmt.Errorf("%w: %s on the active branch", ErrNotFound, id)
		}
		if entries[i].Kind == event.KindSecurityAnalysis {
			// Not the reference's: its window does not count it.
			id = effectiveParent(entries, i)
			continue
		}
		e, ok := cache[id]
		if !ok {
			var err error
			if e, err = s.log.Event(s.ctx, i); err != nil {
				return nil, err
			}
		}
		rev = append(rev, e)
		id = effectiveParent(entries, i)
	}
	if cache != nil {
		clear(cache)
		for _, e := range rev {
			cache[e.EventBase().ID] = e
		}
	}
	for l, r := 0, len(rev)-1; l < r; l, r = l+1, r-1 {
		rev[l], rev[r] = rev[r], rev[l]
	}
	return rev, nil
}

// sinceUser returns the last StuckWindow events, cut after the last user
// message among them.
func sinceUser(events []event.Event) []event.Event {
	if len(events) > StuckWindow {
		events = events[len(events)-StuckWindow:]
	}
	for i := len(events) - 1; i >= 0; i-- {
		if m, ok := events[i].(*event.MessageEvent); ok && m.Source == event.SourceUser {
			return events[i+1:]
		}
	}
	return events
}

// isObservationLike matches everything that answers an action (the
// reference's ObservationBaseEvent).
func isObservationLike(e event.Event) bool {
	switch e.(type) {
	case *event.ObservationEvent, *event.AgentErrorEvent, *event.UserRejectObservation:
		return true
	}
	return false
}

// isResult matches the answers the alternating pattern looks at.
func isResult(e event.Event) bool {
	switch e.(type) {
	case *event.ObservationEvent, *event.AgentErrorEvent:
		return true
	}
	return false
}

// lastActionsAndObservations returns up to n ActionEvents and up to n
// events matching isObs, most recent first.
func lastActionsAndObservations(events []event.Event, n int, isObs func(event.Event) bool) (actions, obs []event.Event) {
	for i := len(events) - 1; i >= 0 && (len(actions) < n || len(obs) < n); i-- {
		switch e := events[i]; {
		case isAction(e):
			if len(actions) < n {
				actions = append(actions, e)
			}
		case isObs(e):
			if len(obs) < n {
				obs = append(obs, e)
			}
		}
	}
	return actions, obs
}

func isAction(e event.Event) bool { _, ok := e.(*event.ActionEvent); return ok }

// errorStreak counts the leading (most recent) pairs in which the action
// equals the most recent one and the answer is an AgentErrorEvent.
func errorStreak(actions, obs []event.Event) int {
	n := 0
	for i := 0; i < len(actions) && i < len(obs); i++ {
		if _, ok := obs[i].(*event.AgentErrorEvent); !ok {
			break
		}
		if !sameEvent(actions[0], actions[i]) {
			break
		}
		n++
	}
	return n
}

// monologue counts agent messages at the end of events. Environment
// messages and condensation summaries are passed over; a user message or
// any other event ends the count.
func monologue(events []event.Event) int {
	n := 0
	for i := len(events) - 1; i >= 0; i-- {
		switch e := events[i].(type) {
		case *event.MessageEvent:
			switch e.Source {
			case event.SourceAgent:
				n++
			case event.SourceUser:
				return n
			}
		case *event.CondensationSummaryEvent:
		default:
			return n
		}
	}
	return n
}

func allEqual(es []event.Event) bool {
	for _, e := range es[1:] {
		if !sameEvent(es[0], e) {
			return false
		}
	}
	return true
}

// alternating reports whether es[i] equals es[i+2] throughout.
func alternating(es []event.Event) bool {
	for i := 0; i+2 < len(es); i++ {
		if !sameEvent(es[i], es[i+2]) {
			return false
		}
	}
	return true
}

// preview shortens an error for a one-line reason.
func preview(s string) string {
	const n = 200
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

func toolName(e event.Event) string {
	if a, ok := e.(*event.ActionEvent); ok && a.ToolName != "" {
		return a.ToolName
	}
	return "tool"
}

// sameEvent compares two events for the detector, ignoring ids,
// timestamps and tool call ids, which differ on every repetition:
// actions compare source, thought, action and tool name; observations
// source, observation and tool name; errors source and text; messages
// source and message. Other events are equal only to themselves.
//
// Unlike the reference, two actions that could not be parsed (nil
// action) are equal only if the model sent the same arguments: otherwise
// a model correcting its arguments after each error would look stuck.
func sameEvent(x, y event.Event) bool {
	if x == y {
		return true
	}
	switch a := x.(type) {
	case *event.ActionEvent:
		b, ok := y.(*event.ActionEvent)
		if !ok || a.Source != b.Source || a.ToolName != b.ToolName || !sameJSON(a.Thought, b.Thought) {
			return false
		}
		if a.Action == nil || b.Action == nil {
			return a.Action == nil && b.Action == nil && a.ToolCall.Arguments == b.ToolCall.Arguments
		}
		return sameKinded(a.Action, b.Action)
	case *event.ObservationEvent:
		b, ok := y.(*event.ObservationEvent)
		return ok && a.Source == b.Source && a.ToolName == b.ToolName && sameKinded(a.Observation, b.Observation)
	case *event.AgentErrorEvent:
		b, ok := y.(*event.AgentErrorEvent)
		return ok && a.Source == b.Source && a.Error == b.Error
	case *event.MessageEvent:
		b, ok := y.(*event.MessageEvent)
		return ok && a.Source == b.Source && sameJSON(a.LLMMessage, b.LLMMessage)
	}
	return x == y
}

// sameKinded compares two registered values by their JSON, which is what
// the reference's model equality amounts to.
func sameKinded(a, b any) bool {
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		return false
	}
	ja, errA := event.MarshalKinded(a)
	jb, errB := event.MarshalKinded(b)
	if errA != nil || errB != nil {
		return reflect.DeepEqual(a, b)
	}
	return bytes.Equal(ja, jb)
}

func sameJSON(a, b any) bool {
	ja, errA := event.MarshalJSON(a)
	jb, errB := event.MarshalJSON(b)
	if errA != nil || errB != nil {
		return reflect.DeepEqual(a, b)
	}
	return bytes.Equal(ja, jb)
}
