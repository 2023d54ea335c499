// Package switchllm is the switch_llm tool: the model moves its
// conversation to another of the user's saved LLM profiles (a stronger
// model for a hard step, a cheaper one for routine work). The switch takes
// effect from the next step on; the step that asked finishes on the model
// it started with.
//
// The tool speaks the reference's wire format: kinds SwitchLLMTool,
// SwitchLLMAction and SwitchLLMObservation, with its fields. The agent
// offers it when include_default_tools names SwitchLLMTool.
package switchllm

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

// Name is the tool's name; KindName its class name in
// include_default_tools.
const (
	Name     = "switch_llm"
	KindName = "SwitchLLMTool"
)

// Action names the profile to switch to.
type Action struct {
	ProfileName string `json:"profile_name" desc:"The saved LLM profile to use from the next step on, exactly as listed."`
	Reason      string `json:"reason" desc:"Why this profile suits the next steps better, in a sentence."`
}

// Observation says whether the switch was made.
type Observation struct {
	event.ObservationBase
	ProfileName string  `json:"profile_name"`
	Reason      *string `json:"reason,omitempty"`
	ActiveModel *string `json:"active_model,omitempty"`
}

func init() {
	event.RegisterKind[Action]("SwitchLLMAction")
	event.RegisterKind[Observation]("SwitchLLMObservation")
}

// Switch switches the conversation to the profile name from its next step
// on and returns the model that profile configures.
type Switch func(ctx context.Context, name string) (model string, err error)

// New returns the switch_llm tool offering profiles (listed in its
// description so the model knows its choices); sw makes the switch.
func New(profiles []string, sw Switch) *tool.Typed[Action, *Observation] {
	profiles = slices.Sorted(slices.Values(profiles))
	list := "There are no saved profiles: this tool cannot switch."
	if len(profiles) > 0 {
		list = "Saved profiles:\n- " + strings.Join(profiles, "\n- ")
	}
	desc := "Switch this conversation to another saved LLM profile when it suits the next steps better " +
		"(a stronger model for a hard problem, a cheaper one for routine work). The switch applies from the next step on. " +
		"Give profile_name exactly as listed and a short reason.\n\n" + list
	return tool.New(Name, desc, func(ctx context.Context, a *Action) (*Observation, error) {
		name := strings.TrimSpace(a.ProfileName)
		reason := a.Reason
		o := &Observation{ProfileName: name, Reason: &reason}
		model, err := sw(ctx, name)
		if err != nil {
			text := fmt.Sprintf("Could not switch to LLM profile %q: %v.", name, err)
			if !slices.Contains(profiles, name) {
				text = fmt.Sprintf("There is no LLM profile %q. %s", name, list)
			}
			o.ObservationBase = event.ObservationBase{Content: event.List[event.Content]{event.Text(text)}, IsError: true}
			return o, nil
		}
		o.ActiveModel = &model
		text := fmt.Sprintf("Switched to LLM profile %q (model %s) from the next step on.", name, model)
		o.ObservationBase = event.ObservationBase{Content: event.List[event.Content]{event.Text(text)}}
		return o, nil
	}, &tool.Options{
		Kind:        KindName,
		Annotations: &event.ToolAnnotations{Title: Name},
	})
}
