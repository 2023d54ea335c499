// Package terminal is the terminal tool: a persistent bash session in a
// pseudo-terminal. The working directory, environment, shell functions
// and background jobs carry over from one call to the next. Commands that
// go quiet are left running and can be read again, typed into or
// interrupted by later calls.
//
// The tool is registered as "terminal" (kinds TerminalTool, TerminalAction
// and TerminalObservation, with the reference's JSON). Its spec params are
// the reference's: no_change_timeout_seconds, shell_path, env,
// terminal_type ("tmux" and "subprocess" both mean the pty session) and
// username (only the current user).
//
// How completion is detected is described in session_linux.go: each
// command is sourced from a file and the shell's PROMPT_COMMAND prints a
// marker carrying a per-session secret nonce, which the pty reader spots as
// the bytes arrive (no polling).
//
// Differences from the reference, on purpose:
//   - One session, read continuously; no tmux pane pool, so is_input after a
//     timeout always reaches the running program (the reference's pool mode
//     interrupts it).
//   - Commands run as one unit whatever their length or number of lines, so
//     the reference's refusal of several newline-separated statements and
//     its backslash doubling (a tmux send-keys workaround) are not needed.
//   - Every escape sequence is removed from output (tmux's screen capture
//     shows none either); carriage returns and backspaces are applied.
//   - timeout is true for both the no-output and the hard timeout.
//   - A command that timed out and finished before the next command reports
//     its exit code and last output in the next observation's prefix.
//   - The full output is saved from the complete output (the reference saves
//     text it has already cut), and full_output_save_dir is set whenever
//     the conversation has a directory.
//   - The exit code is stated once in the model's text, not twice.
//   - The agent server's credentials (SESSION_API_KEY, OH_SECRET_KEY,
//     OH_SESSION_API_KEYS_*) are removed from the shell's environment.
//   - The refusal of timeouts beyond OH_RUNTIME_IDLE_TIMEOUT_SECONDS is not
//     implemented.
package terminal

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gohands/gohands/event"
)

// Name is the tool's name.
const Name = "terminal"

// MaxOutput is the most characters of output an observation shows the
// model; longer output is cut in the middle and saved in full to a file.
const MaxOutput = 30000

// Action is a call of the terminal tool.
type Action struct {
	Command string   `json:"command" desc:"The command to run. Send an empty string to read more output of a command that is still running (exit code -1). With is_input, the text to type into the running program, or one key: C-c, C-d, C-z or any C-<letter>, UP, DOWN, LEFT, RIGHT, HOME, END, PGUP, PGDN, TAB, ESC, BS, ENTER."`
	IsInput bool     `json:"is_input" default:"false" desc:"If true, send command to the program that is still running instead of running a new command. Default false."`
	Timeout *float64 `json:"timeout,omitempty" desc:"Hard limit in seconds: wait this long for the command, however much it prints, then return with it still running. Without it, the call returns once the command has printed nothing for a while. Set it for long builds, installs and test runs."`
	Reset   bool     `json:"reset" default:"false" desc:"If true, kill the shell and start a fresh one (environment, working directory and jobs are lost) before running command. Only for a terminal that no longer responds. Not allowed with is_input."`
}

// Metadata describes the shell after a command, as the reference's
// CmdOutputMetadata. ExitCode and PID are -1 when unknown. The prompt's
// fields are nil when unknown, and may be known and empty: the reference
// writes py_interpreter_path "" when there is no python.
type Metadata struct {
	ExitCode          int     `json:"exit_code"`
	PID               int     `json:"pid"`
	Username          *string `json:"username,omitempty"`
	Hostname          *string `json:"hostname,omitempty"`
	WorkingDir        *string `json:"working_dir,omitempty"`
	PyInterpreterPath *string `json:"py_interpreter_path,omitempty"`
	Prefix            string  `json:"prefix"`
	Suffix            string  `json:"suffix"`
}

// Observation is the result of a terminal call. Content holds the
// command's output as one text block; Metadata's Prefix and Suffix frame
// it for the model.
type Observation struct {
	event.ObservationBase
	// Command is the command the observation answers. The reference
	// requires the key, so it is always written (null when nil).
	Command *string `json:"command"`
	// ExitCode is the command's exit status; -1 while it is still running.
	ExitCode *int `json:"exit_code,omitempty"`
	// Timeout reports that the call returned because a timeout expired.
	Timeout  bool     `json:"timeout"`
	Metadata Metadata `json:"metadata"`
	// FullOutputSaveDir is the directory where output too long to show
	// is saved.
	FullOutputSaveDir string `json:"full_output_save_dir,omitempty"`
}

// SetDefaults implements event.Defaulter: the metadata's exit code and
// pid are unknown (-1) unless the JSON says otherwise.
func (o *Observation) SetDefaults() { o.Metadata.ExitCode, o.Metadata.PID = -1, -1 }

// ProcessExitCode implements telemetry.ExitCoder: a tool call's span
// records the command's exit status.
func (o *Observation) ProcessExitCode() (int, bool) {
	if o.ExitCode == nil {
		return 0, false
	}
	return *o.ExitCode, true
}

func init() {
	event.RegisterKind[Action]("TerminalAction")
	event.RegisterKind[Observation]("TerminalObservation")
}

// Text returns the observation's output text.
func (o *Observation) Text() string { return event.TextOf(o.Content) }

// LLMContent implements event.LLMRenderer: the output framed by the
// metadata's prefix and suffix, then the working directory, the python
// interpreter and the exit code.
func (o *Observation) LLMContent() []event.Content {
	// Observations made here are already within the limit; this guards
	// ones read from elsewhere.
	text := truncateMiddle(o.llmText(), MaxOutput, func(int) string {
		return "\n<response clipped: the middle of this output was cut to fit the output limit>\n"
	})
	var out []event.Content
	if o.IsError {
		out = append(out, event.Text(event.ErrorHeader))
	}
	return append(out, event.Text(text))
}

// llmText is the model's text of o before any cut.
func (o *Observation) llmText() string {
	var b strings.Builder
	b.WriteString(o.Metadata.Prefix)
	b.WriteString(o.Text())
	b.WriteString(o.Metadata.Suffix)
	if d := o.Metadata.WorkingDir; d != nil && *d != "" {
		fmt.Fprintf(&b, "\n[Current working directory: %s]", *d)
	}
	if p := o.Metadata.PyInterpreterPath; p != nil && *p != "" {
		fmt.Fprintf(&b, "\n[Python interpreter: %s]", *p)
	}
	if c := o.Metadata.ExitCode; c != -1 {
		fmt.Fprintf(&b, "\n[Command finished with exit code %d]", c)
	}
	return b.String()
}

// newObservation returns an observation of command with text as output.
func newObservation(command, text string) *Observation {
	if len(command) >= event.LargeArgumentBytes {
		// The action holds it: stored once.
		cut := 200
		for cut > 0 && !utf8.RuneStart(command[cut]) {
			cut--
		}
		command = fmt.Sprintf("%s… [%d bytes, in the action]", command[:cut], len(command))
	}
	return &Observation{
		ObservationBase: event.ObservationBase{Content: event.List[event.Content]{event.Text(text)}},
		Command:         &command,
		Metadata:        Metadata{ExitCode: -1, PID: -1},
	}
}

// errorObservation returns an error observation of command.
func errorObservation(command, text string) *Observation {
	o := newObservation(command, text)
	o.IsError = true
	return o
}
