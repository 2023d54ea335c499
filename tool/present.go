package tool

import (
	"strings"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/termtext"
)

// A tool says how people see its calls by making its action and
// observation types presenters: the TUI and the transcript (the
// visualizer) ask PresentAction and PresentObservation and name no tool.
// Actions and observations that are not presenters are shown generically:
// the tool's name and arguments, the observation's text.

// An ActionPresenter is an action that says how it is shown.
type ActionPresenter interface {
	PresentAction() ActionView
}

// An ObservationPresenter is an observation that says how it is shown.
type ObservationPresenter interface {
	PresentObservation() ObservationView
}

// ActionView is how an action is shown.
type ActionView struct {
	// Summary is one line saying what the action does, for people:
	// "$ go test ./...", "str_replace /src/calc.py", "plan tasks". Empty
	// means the generic line (the tool's name and its arguments).
	Summary string
	// Command, if set, is the shell command line the action runs:
	// transcripts show it as a prompt line, followed by Notes.
	Command *string
	// Notes qualify the command: "(input to running process)",
	// "[timeout: 10s]".
	Notes []Note
	// Message, if set, makes the action a message to the user (the end of
	// a run): it is shown as the agent's words, not as an action.
	Message *string
}

// Note is a remark shown beside a command.
type Note struct {
	Text string
	Tone Tone
}

// Tone is how a note is coloured.
type Tone int

const (
	ToneInfo   Tone = iota // a detail (cyan in transcripts)
	ToneNotice             // worth a look (yellow)
	ToneDanger             // something lost (bold red)
)

// ObservationView is how an observation is shown beyond its text.
type ObservationView struct {
	// ExitCode is the exit status of a command that ended (nil while it
	// runs, or for no command).
	ExitCode *int
	// Edit, if set, is a file's text before and after the change: shown
	// as a diff instead of the text.
	Edit *Edit
	// Tasks, if not nil, is a task list (empty when it was emptied):
	// shown as a checklist instead of the text.
	Tasks []Task
}

// Edit is a change to a file's text. Old is empty for a new file.
type Edit struct {
	Path     string
	Old, New string
	// Created says the change makes the file (it did not exist).
	Created bool
	// Note, if set, qualifies the change: "old_str is not found once in
	// the file as it is now" (the edit will fail; Old and New are what was
	// asked).
	Note string
}

// An ActionPreviewer is an action that can say, before it runs, what it
// will change: the question that confirms it shows the change.
type ActionPreviewer interface {
	// PreviewAction returns the edit the action would make to the files
	// as they are now (relative paths are under workDir), or nil when it
	// changes no file or cannot tell.
	PreviewAction(workDir string) *Edit
}

// Task is one entry of a task list.
type Task struct {
	Title  string
	Status TaskStatus
}

// TaskStatus is where a task stands.
type TaskStatus string

const (
	TaskTodo       TaskStatus = "todo"
	TaskInProgress TaskStatus = "in_progress"
	TaskDone       TaskStatus = "done"
)

// PresentAction returns how e is shown: its action's own view, with the
// generic summary when the action gives none. The summary is one line,
// without control sequences.
func PresentAction(e *event.ActionEvent) ActionView {
	var v ActionView
	if p, ok := e.Action.(ActionPresenter); ok {
		v = p.PresentAction()
	}
	switch {
	case v.Summary != "":
		v.Summary = OneLine(v.Summary)
	case e.Summary != "":
		v.Summary = termtext.Strip(e.ToolName) + ": " + OneLine(e.Summary)
	default:
		v.Summary = termtext.Strip(e.ToolName) + " " + OneLine(e.ToolCall.Arguments)
	}
	return v
}

// PresentObservation returns how o is shown beyond its text (the zero
// view for an observation that is no presenter).
func PresentObservation(o event.Observation) ObservationView {
	if p, ok := o.(ObservationPresenter); ok {
		return p.PresentObservation()
	}
	return ObservationView{}
}

// OneLine is the first line of s, trimmed and without control sequences,
// with " …" when more lines follow.
func OneLine(s string) string {
	s = termtext.Strip(strings.TrimSpace(s))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return s
}
