// Package tui is gohands' interactive terminal interface: a full-screen
// Bubble Tea program showing a conversation as cells (the user's messages,
// the agent's streamed text, each action with its live output, diff or
// task list), a prompt at the bottom, a status line, a confirmation panel
// and slash commands.
//
// The Model knows nothing of how conversations are run: it drives a
// Backend and is fed the conversation's events (EventMsg) and a running
// command's output (OutputMsg). That keeps it testable: the tests render
// View at a fixed size against a fake Backend and compare golden screens.
package tui

import (
	"context"

	"github.com/gohands/gohands/event"
)

// Backend runs the conversation the Model shows. Its blocking methods
// are called from commands, off the Model's goroutine; while Send or
// Answer runs, the conversation's events reach the Model as EventMsg.
type Backend interface {
	// Send sends the user's message and runs the agent until it stops.
	Send(ctx context.Context, text string) Outcome
	// Answer answers the actions waiting for confirmation and runs on.
	Answer(ctx context.Context, a Answer) Outcome
	// Pause asks a running agent to stop; Send or Answer then returns.
	Pause()
	// New leaves the current conversation; the next Send starts one.
	New() error
	// Conversations lists the stored conversations of this workspace,
	// most recent first.
	Conversations() ([]Summary, error)
	// Resume makes the conversation id current and returns its events.
	Resume(id string) ([]event.Event, error)
	// Command runs a slash command other than /help, /new, /resume and
	// /exit, returning the text to show.
	Command(ctx context.Context, name, arg string) (string, error)
	// Stats is what the status line shows.
	Stats() Stats
	// Setup saves a first configuration (a model and its key, and for a
	// server of one's own its base URL) and makes it current.
	Setup(model, key, baseURL string) error
}

// Answer is a reply to actions waiting for confirmation.
type Answer int

const (
	// AnswerNo rejects the actions; the agent is told and continues.
	AnswerNo Answer = iota
	// AnswerYes runs them.
	AnswerYes
	// AnswerAlways runs them and stops asking, in this session, about
	// actions of the same tools and commands (Outcome.Always) unless they
	// are rated HIGH.
	AnswerAlways
	// AnswerAuto runs them and from now on asks only about high or
	// unknown risk.
	AnswerAuto
)

// Outcome is how a run stopped.
type Outcome struct {
	// Status is the conversation's execution status (finished, paused,
	// waiting_for_confirmation, error, stuck...).
	Status string
	// Err is the run's error, if it failed.
	Err error
	// Pending are the actions waiting for confirmation.
	Pending []Pending
	// Always says what answering "always" covers: "`go test` commands",
	// "file_editor actions".
	Always string
	// NotSent is true when Send did not send its message because actions
	// were already waiting for an answer (running would approve them):
	// the caller keeps the message and sends it after the answer.
	NotSent bool
}

// Pending is an action waiting for confirmation.
type Pending struct {
	Tool string
	Risk string // LOW, MEDIUM, HIGH or UNKNOWN
	Line string // what it does, on one line
	// Detail is what it does, whole, when Line cannot say it: the diff of
	// an edit, a long command. Lines of a diff start with "@@", "-", "+"
	// or " ".
	Detail []string
}

// Summary is a stored conversation in the /resume picker.
type Summary struct {
	ID, Status, Updated, Title string
}

// Stats is the status line.
type Stats struct {
	Model          string
	ConversationID string
	Confirm        string // never, always or risky
	Tokens         int
	Cost           float64
	// Context is how full the model's context window was at the last
	// call, from 0 to 1; negative when unknown.
	Context float64
}

// Question is an error Command returns when it needs an answer from the
// user first (a key for another provider). The interface asks Prompt,
// hiding the typing if Secret, and shows what Answer returns as it shows
// a command's result. An empty answer cancels.
type Question struct {
	Prompt string
	Secret bool
	Answer func(ctx context.Context, text string) (string, error)
}

func (q *Question) Error() string { return q.Prompt }

// EventMsg carries an event of the conversation (deltas included).
type EventMsg struct{ Event event.Event }

// OutputMsg carries output of the running command.
type OutputMsg struct{ Text string }

// NoticeMsg shows a transient line above the prompt (a retried model call).
type NoticeMsg struct{ Text string }
