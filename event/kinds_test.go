package event

// Test-only tool kinds with the reference terminal tool's field order, so the
// reference's own examples can be decoded and re-encoded here. The real
// terminal tool lives in its own package.

type terminalAction struct {
	Command string   `json:"command"`
	IsInput bool     `json:"is_input"`
	Timeout *float64 `json:"timeout,omitempty"`
	Reset   bool     `json:"reset"`
}

type cmdOutputMetadata struct {
	ExitCode          int     `json:"exit_code"`
	PID               int     `json:"pid"`
	Username          *string `json:"username,omitempty"`
	Hostname          *string `json:"hostname,omitempty"`
	WorkingDir        *string `json:"working_dir,omitempty"`
	PyInterpreterPath *string `json:"py_interpreter_path,omitempty"`
	Prefix            string  `json:"prefix"`
	Suffix            string  `json:"suffix"`
}

type terminalObservation struct {
	ObservationBase
	Command           *string           `json:"command"` // required but nullable: always written, read when absent
	ExitCode          *int              `json:"exit_code,omitempty"`
	Timeout           bool              `json:"timeout"`
	Metadata          cmdOutputMetadata `json:"metadata"`
	FullOutputSaveDir *string           `json:"full_output_save_dir,omitempty"`
}

// SetDefaults gives absent metadata the reference's -1 exit code and pid.
func (o *terminalObservation) SetDefaults() { o.Metadata = cmdOutputMetadata{ExitCode: -1, PID: -1} }

func init() {
	RegisterKind[terminalAction]("TerminalAction")
	RegisterKind[terminalObservation]("TerminalObservation")
}
