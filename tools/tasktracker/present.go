package tasktracker

import "github.com/gohands/gohands/tool"

// PresentAction implements tool.ActionPresenter.
func (a Action) PresentAction() tool.ActionView {
	if a.Command == CommandView {
		return tool.ActionView{Summary: "tasks"}
	}
	return tool.ActionView{Summary: "plan tasks"}
}

// PresentObservation implements tool.ObservationPresenter: the list as a
// checklist.
func (o *Observation) PresentObservation() tool.ObservationView {
	v := tool.ObservationView{Tasks: []tool.Task{}}
	for _, t := range o.TaskList {
		v.Tasks = append(v.Tasks, tool.Task{Title: t.Title, Status: tool.TaskStatus(t.Status)})
	}
	return v
}
