package fileeditor

import "github.com/gohands/gohands/tool"

// PresentAction implements tool.ActionPresenter: the command and the path.
func (a Action) PresentAction() tool.ActionView {
	if a.Path == "" {
		return tool.ActionView{}
	}
	return tool.ActionView{Summary: tool.OneLine(a.Command) + " " + a.Path}
}

// PresentObservation implements tool.ObservationPresenter: an edit that
// succeeded is shown as the change it made.
func (o *Observation) PresentObservation() tool.ObservationView {
	if o.NewContent == nil || o.IsError || o.Command == "view" {
		return tool.ObservationView{}
	}
	e := &tool.Edit{New: *o.NewContent}
	if o.Path != nil {
		e.Path = *o.Path
	}
	if o.OldContent != nil {
		e.Old = *o.OldContent
	}
	return tool.ObservationView{Edit: e}
}
