package tool_test

import (
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

type shownAction struct{ summary string }

func (a shownAction) PresentAction() tool.ActionView { return tool.ActionView{Summary: a.summary} }

type shownObservation struct {
	event.ObservationBase
}

func (*shownObservation) PresentObservation() tool.ObservationView {
	return tool.ObservationView{Tasks: []tool.Task{{Title: "write it", Status: tool.TaskDone}}}
}

type plainObservation struct{ event.ObservationBase }

func TestPresentAction(t *testing.T) {
	call := event.ToolCall{Name: "lookup", Arguments: `{"q": "a\nb"}`}
	for _, tc := range []struct {
		name string
		e    *event.ActionEvent
		want string
	}{
		{"presenter", &event.ActionEvent{ToolName: "lookup", ToolCall: call, Action: shownAction{"look up \x1b[31ma\nand b"}}, "look up a …"},
		{"presenter without a summary", &event.ActionEvent{ToolName: "lookup", ToolCall: call, Action: shownAction{}, Summary: "find the weather"}, "lookup: find the weather"},
		{"no presenter", &event.ActionEvent{ToolName: "lookup", ToolCall: call, Action: &struct{ Q string }{}}, `lookup {"q": "a\nb"}`},
		{"not parsed", &event.ActionEvent{ToolName: "lookup", ToolCall: call}, `lookup {"q": "a\nb"}`},
	} {
		if got := tool.PresentAction(tc.e).Summary; got != tc.want {
			t.Errorf("%s: summary %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestPresentObservation(t *testing.T) {
	if v := tool.PresentObservation(&shownObservation{}); len(v.Tasks) != 1 || v.Tasks[0].Status != tool.TaskDone {
		t.Errorf("presenter: %+v", v)
	}
	if v := tool.PresentObservation(&plainObservation{}); v.ExitCode != nil || v.Edit != nil || v.Tasks != nil {
		t.Errorf("no presenter: %+v, want the zero view", v)
	}
}
