// Package finish provides the finish tool, with which the model ends its
// run and gives the user its final message. Executing it moves the
// conversation to the finished state (the conversation recognises the
// action by its type).
//
// The tool is registered as "finish" (kinds FinishTool, FinishAction,
// FinishObservation, as in the reference).
package finish

import (
	"context"
	"encoding/json"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

// Name is the tool's name, and its registry name.
const Name = "finish"

// Action ends the run with a message to the user.
type Action struct {
	Message string `json:"message" desc:"Your final message to the user: what you did and its outcome, anything left to do, or why you could not finish."`
}

// Observation repeats the final message.
type Observation struct {
	event.ObservationBase
}

func init() {
	event.RegisterKind[Action]("FinishAction")
	event.RegisterKind[Observation]("FinishObservation")
	tool.Register(Name, func(tool.Context, json.RawMessage) ([]tool.Tool, error) {
		return []tool.Tool{New()}, nil
	})
}

const description = `Finish the task and hand back to the user. Call it when the task is done, or when you cannot go further (missing information, access or tools). The message is what the user reads: summarise what you did and the result, and ask any question you need answered.`

// New returns the finish tool.
func New() *tool.Typed[Action, *Observation] {
	return tool.New(Name, description, func(_ context.Context, a *Action) (*Observation, error) {
		return &Observation{event.ObservationBase{Content: event.List[event.Content]{event.Text(a.Message)}}}, nil
	}, &tool.Options{
		Kind: "FinishTool",
		Annotations: &event.ToolAnnotations{
			Title:          Name,
			ReadOnlyHint:   true,
			IdempotentHint: true,
		},
	})
}

// PresentAction implements tool.ActionPresenter: the final message is the
// agent's last word, shown as such.
func (a Action) PresentAction() tool.ActionView {
	if a.Message == "" {
		return tool.ActionView{}
	}
	return tool.ActionView{Message: &a.Message}
}
