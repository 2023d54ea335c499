package conversation

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/secret"
)

// Session is what a Runner gets from the conversation it works in: read
// access to the state, the model's view, and the way to emit events and
// change the status. It is safe for concurrent use.
type Session struct {
	c *LocalConversation
}

// ID returns the conversation id.
func (s *Session) ID() string { return s.c.id }

// State returns the conversation's state, for reading.
func (s *Session) State() *State { return s.c.state }

// Fields returns the current fields (an immutable snapshot).
func (s *Session) Fields() *Fields { return s.c.state.Fields() }

// WorkingDir returns the workspace directory.
func (s *Session) WorkingDir() string { return s.c.workDir }

// MaxBudgetPerRun returns the conversation's LocalOptions.MaxBudgetPerRun
// (0: none), for sub-conversations that share it.
func (s *Session) MaxBudgetPerRun() float64 { return s.c.budget }

// Dir returns the conversation's persistence directory, or "" when it is
// kept in memory.
func (s *Session) Dir() string { return s.c.dir }

// Cipher returns the key the conversation keeps its secrets under at
// rest, nil when it has none.
func (s *Session) Cipher() *secret.Cipher { return s.c.state.cipher }

// MCPOAuthWriteBack returns LocalOptions.MCPOAuthWriteBack (nil if unset).
func (s *Session) MCPOAuthWriteBack() func(serverURL string, body []byte) {
	return s.c.opts.MCPOAuthWriteBack
}

// Secrets returns the conversation's secret registry.
func (s *Session) Secrets() *secret.Manager { return s.c.secrets }

// RecordsSecurityAnalysis reports whether the conversation keeps
// SecurityAnalysisEvents (see LocalOptions.OmitSecurityAnalysis).
func (s *Session) RecordsSecurityAnalysis() bool { return !s.c.opts.OmitSecurityAnalysis }

// Logger returns the conversation's logger.
func (s *Session) Logger() *slog.Logger { return s.c.log }

// Emit appends e to the log and delivers it to the subscribers; when it
// returns, the view and the pending actions include e. Secret values in
// any of its strings are replaced by secret.Hidden first (a masked copy is
// persisted; e itself is not changed).
func (s *Session) Emit(e event.Event) error {
	e, err := s.mask(e)
	if err != nil {
		return err
	}
	if _, err := s.c.state.Append(e); err != nil {
		return fmt.Errorf("conversation: emit %T: %w", e, err)
	}
	return nil
}

// Publish delivers a transient event (a StreamingDeltaEvent, say) to the
// subscribers (Subscribe, Watch) without storing it: it is not in the
// log, the view or LocalOptions.OnEvent, as the reference publishes
// token deltas. Secret values in it are masked first.
func (s *Session) Publish(e event.Event) {
	if m, err := s.mask(e); err == nil {
		s.c.events.Publish(m)
	}
}

// EmitAll appends events in order, under one lock, so no other change
// comes between them.
func (s *Session) EmitAll(events ...event.Event) error {
	masked := make([]event.Event, len(events))
	for i, e := range events {
		m, err := s.mask(e)
		if err != nil {
			return err
		}
		masked[i] = m
	}
	events = masked
	err := s.c.state.Do(func(tx *Tx) error {
		for _, e := range events {
			if _, err := tx.Append(e); err != nil {
				return fmt.Errorf("emit %T: %w", e, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("conversation: %w", err)
	}
	return nil
}

// mask returns e with every known secret value in its strings (message,
// action, observation, error, raw JSON) replaced by secret.Hidden, so no
// tool can leak a secret into the log. e itself is returned when it holds
// none; otherwise a masked copy is, and e is left as it was.
func (s *Session) mask(e event.Event) (event.Event, error) {
	m := s.c.secrets
	if m == nil || len(m.Names()) == 0 {
		return e, nil
	}
	masked, err := m.MaskEvent(context.Background(), e)
	if err != nil {
		return nil, fmt.Errorf("conversation: mask %T: %w", e, err)
	}
	return masked, nil
}

// SetStatus sets the execution status.
func (s *Session) SetStatus(st ExecutionStatus) error {
	return s.c.state.Update(func(f *Fields) error {
		f.ExecutionStatus = st
		return nil
	})
}

// View returns the model's view of the conversation: the LLM-visible
// events of the active branch, oldest first, with condensations applied.
// Built from the log on first use, it then follows every emitted event.
//
// When built from the log (a resumed conversation) the view is made
// well-formed as the reference's properties require: only the
// first result per tool call is kept, results without their call are
// dropped, and calls without a result are dropped unless they are still
// pending (they will be executed before the model is asked again).
//
// The returned slice must not be modified; it stays valid (it is never
// written to) after later events are emitted.
func (s *Session) View() ([]event.Event, error) {
	c := s.c
	c.viewMu.Lock()
	defer c.viewMu.Unlock()
	if !c.viewOK {
		v, err := buildView(c.state)
		if err != nil {
			return nil, err
		}
		c.view, c.viewOK = v, true
	}
	return slices.Clip(c.view), nil
}

// Pending returns the actions of the active branch nothing has answered
// yet, oldest first.
func (s *Session) Pending() ([]*event.ActionEvent, error) {
	c := s.c
	c.viewMu.Lock()
	defer c.viewMu.Unlock()
	if !c.pendingOK {
		pending, err := c.state.PendingActions()
		if err != nil {
			return nil, err
		}
		c.pending, c.pendingOK = pending, true
	}
	return slices.Clone(c.pending), nil
}

// applyToPending updates the pending actions with a new event.
func applyToPending(p []*event.ActionEvent, e event.Event) []*event.ActionEvent {
	switch e := e.(type) {
	case *event.ActionEvent:
		if e.Action != nil {
			return append(p, e)
		}
	case *event.ObservationEvent:
		return slices.DeleteFunc(p, func(a *event.ActionEvent) bool { return a.ID == e.ActionID })
	case *event.UserRejectObservation:
		return slices.DeleteFunc(p, func(a *event.ActionEvent) bool { return a.ID == e.ActionID })
	case *event.AgentErrorEvent:
		return slices.DeleteFunc(p, func(a *event.ActionEvent) bool { return a.ToolCallID == e.ToolCallID })
	}
	return p
}

// SwitchProfile switches the conversation to its LLM profile name
// (LocalOptions.Profiles) from the next step on, and returns the profile's
// model: the switch_llm tool calls it in the middle of a step.
func (s *Session) SwitchProfile(ctx context.Context, name string) (model string, err error) {
	cfg, err := s.c.opts.Profiles.Profile(name)
	if err != nil {
		return "", err
	}
	if err := s.c.SwitchLLM(ctx, cfg); err != nil {
		return "", err
	}
	return cfg.Model, nil
}

// Profile returns the conversation's LLM profile name (LocalOptions.Profiles),
// llm.ErrNoProfile if there is none of that name; tools consult one without
// switching to it.
func (s *Session) Profile(name string) (llm.Config, error) { return s.c.opts.Profiles.Profile(name) }

// ProfileNames returns the names of the LLM profiles the conversation can
// switch to, sorted.
func (s *Session) ProfileNames() []string { return s.c.opts.Profiles.Names() }
