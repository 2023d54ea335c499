package terminal

import (
	"fmt"

	"github.com/gohands/gohands/tool"
)

// PresentAction implements tool.ActionPresenter: a command is shown as a
// prompt line with its flags.
func (a Action) PresentAction() tool.ActionView {
	v := tool.ActionView{Command: &a.Command}
	if a.Command != "" {
		v.Summary = "$ " + a.Command
	}
	if a.IsInput {
		v.Notes = append(v.Notes, tool.Note{Text: "(input to running process)", Tone: tool.ToneNotice})
	}
	if a.Timeout != nil {
		v.Notes = append(v.Notes, tool.Note{Text: fmt.Sprintf("[timeout: %gs]", *a.Timeout), Tone: tool.ToneInfo})
	}
	if a.Reset {
		v.Notes = append(v.Notes, tool.Note{Text: "[reset terminal]", Tone: tool.ToneDanger})
	}
	return v
}

// PresentObservation implements tool.ObservationPresenter: the exit status
// of a command that ended.
func (o *Observation) PresentObservation() tool.ObservationView {
	var v tool.ObservationView
	if o.ExitCode != nil && *o.ExitCode >= 0 {
		v.ExitCode = o.ExitCode
	}
	return v
}
