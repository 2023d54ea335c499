package conversation

import "fmt"

// ExecutionStatus is where a conversation is in its run cycle. The values are
// the reference's strings.
type ExecutionStatus string

// Execution statuses.
const (
	StatusIdle                   ExecutionStatus = "idle"
	StatusRunning                ExecutionStatus = "running"
	StatusPaused                 ExecutionStatus = "paused"
	StatusWaitingForConfirmation ExecutionStatus = "waiting_for_confirmation"
	StatusFinished               ExecutionStatus = "finished"
	StatusError                  ExecutionStatus = "error"
	StatusStuck                  ExecutionStatus = "stuck"
	// StatusDeleting only appears in agent-server notifications.
	StatusDeleting ExecutionStatus = "deleting"
)

// Valid reports whether s is one of the statuses.
func (s ExecutionStatus) Valid() bool {
	switch s {
	case StatusIdle, StatusRunning, StatusPaused, StatusWaitingForConfirmation,
		StatusFinished, StatusError, StatusStuck, StatusDeleting:
		return true
	}
	return false
}

// IsTerminal reports whether a run has ended in s: finished, error or stuck.
// Idle is not terminal: it is where a conversation starts.
func (s ExecutionStatus) IsTerminal() bool {
	return s == StatusFinished || s == StatusError || s == StatusStuck
}

// UnmarshalText implements encoding.TextUnmarshaler, rejecting unknown
// statuses.
func (s *ExecutionStatus) UnmarshalText(b []byte) error {
	v := ExecutionStatus(b)
	if !v.Valid() {
		return fmt.Errorf("conversation: unknown execution status %q", b)
	}
	*s = v
	return nil
}
