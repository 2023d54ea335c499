package conversation

import (
	"fmt"

	"github.com/gohands/gohands/event"
)

// effectiveParent returns the parent of entries[i] in the event tree: none
// for "__root__" or a first event without parent, the explicit parent, or,
// for legacy events without parent_id, the previous event.
func effectiveParent(entries []Entry, i int) string {
	switch p := entries[i].ParentID; {
	case p == event.RootParentID:
		return ""
	case p != "":
		return p
	case i == 0:
		return ""
	default:
		return entries[i-1].ID
	}
}

func isTreeNode(kind string) bool { return kind != event.KindConversationStateUpdate }

// resolveLeaf returns the active leaf: LeafEventID if set; none if the HEAD
// was deliberately emptied; else (a legacy log) the last event that is not
// a state update or conversation error.
func resolveLeaf(store *Log, f *Fields) string {
	if f.LeafEventID != "" {
		return f.LeafEventID
	}
	if f.HeadIsEmpty {
		return ""
	}
	for i := store.Len() - 1; i >= 0; i-- {
		e, err := store.Entry(i)
		if err == nil && e.Kind != event.KindConversationStateUpdate && e.Kind != event.KindConversationError {
			return e.ID
		}
	}
	return ""
}

// fastForward returns the HEAD after replaying, from leaf onwards, the
// tree nodes appended as children of the HEAD of their time. It is how
// Open recovers HEAD moves that were not yet written to the base state.
func fastForward(store *Log, leaf string) string {
	if leaf == "" {
		return leaf
	}
	i, ok := store.Lookup(leaf)
	if !ok {
		return leaf
	}
	entries := store.Entries()
	for j := i + 1; j < len(entries); j++ {
		if isTreeNode(entries[j].Kind) && effectiveParent(entries, j) == leaf {
			leaf = entries[j].ID
		}
	}
	return leaf
}

// ActiveBranch returns the entries of the active branch, root first: the
// path from the HEAD to the root. Abandoned branches are left out.
func (s *State) ActiveBranch() ([]Entry, error) {
	return s.pathToRoot(resolveLeaf(s.log, s.Fields()))
}

// CondensationPending reports whether the active branch's last
// CondensationRequest came after its last Condensation: the condenser
// must act at the next step. It reads the entries only, not the events.
func (s *State) CondensationPending() (bool, error) {
	branch, err := s.ActiveBranch()
	if err != nil {
		return false, err
	}
	for i := len(branch) - 1; i >= 0; i-- {
		switch branch[i].Kind {
		case event.KindCondensation:
			return false, nil
		case event.KindCondensationRequest:
			return true, nil
		}
	}
	return false, nil
}

// pathToRoot returns the entries from the root of the event tree to leaf,
// root first.
func (s *State) pathToRoot(leaf string) ([]Entry, error) {
	entries := s.log.Entries()
	var rev []Entry
	for id := leaf; id != ""; {
		// A path longer than the log visits some event twice. (No set of
		// the ids seen: this runs at every step, over the whole history.)
		if len(rev) == len(entries) {
			return nil, fmt.Errorf("conversation: cycle in event tree at %s", id)
		}
		i, ok := s.log.Lookup(id)
		if !ok || i >= len(entries) {
			return nil, fmt.Errorf("%w: %s on the active branch", ErrNotFound, id)
		}
		rev = append(rev, entries[i])
		id = effectiveParent(entries, i)
	}
	for l, r := 0, len(rev)-1; l < r; l, r = l+1, r-1 {
		rev[l], rev[r] = rev[r], rev[l]
	}
	return rev, nil
}

// UnmatchedActions returns, oldest first, the ActionEvents of entries (with
// a non-null action) that nothing answered: no later ObservationEvent or
// UserRejectObservation with their id as action_id, and no AgentErrorEvent
// with their tool_call_id. This is the reference's rule.
func UnmatchedActions(entries []Entry) []Entry {
	answeredAction := make(map[string]bool)
	erroredCall := make(map[string]bool)
	var out []Entry
	for i := len(entries) - 1; i >= 0; i-- {
		e := &entries[i]
		switch e.Kind {
		case event.KindObservation, event.KindUserRejectObservation:
			answeredAction[e.ActionID] = true
		case event.KindAgentError:
			erroredCall[e.ToolCallID] = true
		case event.KindAction:
			if e.HasAction && !answeredAction[e.ID] && !erroredCall[e.ToolCallID] {
				out = append(out, *e)
			}
		}
	}
	for l, r := 0, len(out)-1; l < r; l, r = l+1, r-1 {
		out[l], out[r] = out[r], out[l]
	}
	return out
}

// PendingActions returns, oldest first, the actions of the active branch
// that nothing answered (see UnmatchedActions): those a run waiting for
// confirmation asks about, or that a crash cut short.
func (s *State) PendingActions() ([]*event.ActionEvent, error) {
	branch, err := s.ActiveBranch()
	if err != nil {
		return nil, err
	}
	var out []*event.ActionEvent
	for _, en := range UnmatchedActions(branch) {
		e, err := s.log.Event(s.ctx, en.Index)
		if err != nil {
			return nil, err
		}
		if a, ok := e.(*event.ActionEvent); ok {
			out = append(out, a)
		}
	}
	return out, nil
}

// RestartError is the error text of the AgentErrorEvent that RecoverRunning
// appends for an action cut short by a crash (the reference's wording).
const RestartError = "A restart occurred while this tool was in progress. " +
	"This may indicate a fatal memory error or system crash. " +
	"The tool execution was interrupted and did not complete."

// AnswerUnanswered appends, for each action of the log that nothing
// answers, the AgentErrorEvent RecoverRunning appends for the action a
// crash cut short, and returns them. LocalConversation calls it when it
// opens a conversation whose status is error: its run stopped (an event
// that could not be written, a crash) with these actions in an unknown
// state, and running them again could repeat what they did. The model is
// told instead, and decides.
func (s *State) AnswerUnanswered() ([]*event.AgentErrorEvent, error) {
	var out []*event.AgentErrorEvent
	err := s.Do(func(tx *Tx) error {
		entries := s.log.Entries()
		answered := make(map[string]bool)
		for i := range entries {
			switch entries[i].Kind {
			case event.KindObservation, event.KindUserRejectObservation, event.KindAgentError:
				answered[entries[i].ToolCallID] = true
			}
		}
		// Every answer is made before any is written: an action that does
		// not read back (a damaged store) fails the call with nothing
		// written.
		var answers []*event.AgentErrorEvent
		for _, a := range UnmatchedActions(entries) {
			if answered[a.ToolCallID] {
				continue
			}
			ev, err := s.restartAnswer(a)
			if err != nil {
				return err
			}
			answered[a.ToolCallID] = true
			answers = append(answers, ev)
		}
		for _, ev := range answers {
			if _, err := tx.Append(ev); err != nil {
				return err
			}
			out = append(out, ev)
		}
		return nil
	})
	return out, err
}

// restartAnswer returns the AgentErrorEvent that answers action a after a
// crash.
func (s *State) restartAnswer(a Entry) (*event.AgentErrorEvent, error) {
	raw, err := s.log.Raw(s.ctx, a.Index)
	if err != nil {
		return nil, err
	}
	var toolName string
	if err := jsonString(topField(raw, "tool_name"), &toolName); err != nil {
		return nil, fmt.Errorf("conversation: action %s: tool_name: %w", a.ID, err)
	}
	msg := RestartError
	if s.opts.RestartNote != nil {
		if note := s.opts.RestartNote(toolName, raw); note != "" {
			msg += " " + note
		}
	}
	return &event.AgentErrorEvent{
		Base:       event.NewBase(event.SourceAgent),
		ToolName:   toolName,
		ToolCallID: a.ToolCallID,
		Error:      msg,
		Classification: event.ErrorClassification{
			Kind: event.ErrorKindInternal, Retryable: false, UserAction: "none",
		},
	}, nil
}

// RecoverRunning settles a conversation whose saved status is running,
// which after a restart means its process died mid-run. As the reference's
// agent server does, it sets the status to error and, if the whole log
// holds an unanswered action with no observation for its tool call id,
// appends an AgentErrorEvent answering the first one. It returns that event,
// or nil. Nothing already written is changed.
//
// Unlike the reference, a log that ends with the observation of the finish
// tool gets status finished: the agent had finished and the process died
// before the status was stored. Set to error, a server that resumes such
// a conversation would ask the model for a step after the finish.
func (s *State) RecoverRunning() (*event.AgentErrorEvent, error) {
	var out *event.AgentErrorEvent
	err := s.Do(func(tx *Tx) error {
		if tx.f.ExecutionStatus != StatusRunning {
			return nil
		}
		finished, err := s.endsWithFinish()
		if err != nil {
			return err
		}
		if finished {
			tx.Fields().ExecutionStatus = StatusFinished
			return nil
		}
		// The answer is made before anything is written: an action that
		// does not read back (a damaged store) fails the call with the
		// status unchanged.
		var ev *event.AgentErrorEvent
		entries := s.log.Entries()
		if unmatched := UnmatchedActions(entries); len(unmatched) > 0 {
			first := unmatched[0]
			answered := false
			for i := range entries {
				switch entries[i].Kind {
				case event.KindObservation, event.KindUserRejectObservation, event.KindAgentError:
					answered = answered || entries[i].ToolCallID == first.ToolCallID
				}
			}
			if !answered {
				var err error
				if ev, err = s.restartAnswer(first); err != nil {
					return err
				}
			}
		}
		tx.Fields().ExecutionStatus = StatusError
		if ev == nil {
			return nil
		}
		if _, err := tx.Append(ev); err != nil {
			return err
		}
		out = ev
		return nil
	})
	return out, err
}

// finishTool is the name of the finish tool (agent/finish.Name), whose
// observation ends a run.
const finishTool = "finish"

// endsWithFinish reports whether the last message, action, observation or
// error of the log is the observation of the finish tool.
func (s *State) endsWithFinish() (bool, error) {
	entries := s.log.Entries()
	for i := len(entries) - 1; i >= 0; i-- {
		switch entries[i].Kind {
		case event.KindObservation:
			raw, err := s.log.Raw(s.ctx, entries[i].Index)
			if err != nil {
				return false, err
			}
			var tool string
			if err := jsonString(topField(raw, "tool_name"), &tool); err != nil {
				return false, fmt.Errorf("conversation: observation %s: tool_name: %w", entries[i].ID, err)
			}
			return tool == finishTool, nil
		case event.KindMessage, event.KindAction, event.KindUserRejectObservation, event.KindAgentError:
			return false, nil
		}
	}
	return false, nil
}
