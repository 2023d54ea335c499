// Package think provides the think tool: a place for the model to reason
// out loud. It changes nothing and fetches nothing; the thought is kept in
// the conversation's event log.
//
// The tool is registered as "think" (kinds ThinkTool, ThinkAction,
// ThinkObservation, as in the reference).
package think

import (
	"context"
	"encoding/json"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

// Name is the tool's name, and its registry name.
const Name = "think"

// LoggedText is the observation text the model gets back, the reference's.
const LoggedText = "Your thought has been logged."

// Action is a thought to log.
type Action struct {
	Thought string `json:"thought" desc:"Your reasoning: what you know, what you suspect, and what to try next."`
}

// Observation acknowledges a logged thought.
type Observation struct {
	event.ObservationBase
}

func init() {
	event.RegisterKind[Action]("ThinkAction")
	event.RegisterKind[Observation]("ThinkObservation")
	tool.Register(Name, func(tool.Context, json.RawMessage) ([]tool.Tool, error) {
		return []tool.Tool{New()}, nil
	})
}

const description = `Think before acting. Use this tool to reason step by step: weigh possible causes of a bug, compare ways to implement or fix something, or plan the next steps after new results. It runs nothing and changes nothing; the thought is only recorded.`

// New returns the think tool.
func New() *tool.Typed[Action, *Observation] {
	return tool.New(Name, description, func(context.Context, *Action) (*Observation, error) {
		return &Observation{event.ObservationBase{Content: event.List[event.Content]{event.Text(LoggedText)}}}, nil
	}, &tool.Options{
		Kind: "ThinkTool",
		Annotations: &event.ToolAnnotations{
			ReadOnlyHint:   true,
			IdempotentHint: true,
		},
	})
}
