// Package visioninspect is the inspect_image_with_vision tool: an agent
// whose model cannot see images asks a saved vision-capable LLM profile a
// question about an image of the latest user message, and gets its text
// answer. The agent attaches it by itself when its model lacks vision and
// such a profile exists, as the reference does; in the model's input each
// image of the latest user message is then a text naming its image_index
// (agent's withImageRefs), or the model would not know it was there.
//
// The tool speaks the reference's wire format: kinds VisionInspectTool,
// VisionInspectAction and VisionInspectObservation, with their fields.
package visioninspect

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

// Name is the tool's name and registry name; KindName its class name in
// include_default_tools; UsagePrefix starts the usage id of a profile's
// calls ("vision-profile:NAME"), as in the reference.
const (
	Name        = "inspect_image_with_vision"
	KindName    = "VisionInspectTool"
	UsagePrefix = "vision-profile:"
)

// Action asks about one image.
type Action struct {
	ImageIndex  int     `json:"image_index" desc:"Which image of the latest user message, counting from 0."`
	Question    string  `json:"question" desc:"What to ask the vision model about the image."`
	ProfileName *string `json:"profile_name,omitempty" desc:"A vision profile listed in the description; the first one if omitted."`
}

// Observation is the vision model's answer.
type Observation struct {
	event.ObservationBase
	ImageIndex  int     `json:"image_index"`
	Question    string  `json:"question"`
	ProfileName *string `json:"profile_name,omitempty"`
	Model       *string `json:"model,omitempty"`
	BaseURL     *string `json:"base_url,omitempty"`
	Answer      *string `json:"answer,omitempty"`
}

func init() {
	event.RegisterKind[Action]("VisionInspectAction")
	event.RegisterKind[Observation]("VisionInspectObservation")
	tool.Register(Name, func(ctx tool.Context, params json.RawMessage) ([]tool.Tool, error) {
		if p := strings.TrimSpace(string(params)); p != "{}" && p != "null" && p != "" {
			return nil, fmt.Errorf("%s takes no params (got %s)", Name, p)
		}
		if ctx.Conversation == nil {
			return nil, nil
		}
		profiles := Profiles(ctx.Conversation)
		if len(profiles) == 0 {
			return nil, nil // as the reference: no vision profile, no tool
		}
		return []tool.Tool{New(profiles, ctx.Conversation)}, nil
	})
}

// Profiles returns the conversation's saved profiles whose models take
// images.
func Profiles(c tool.Conversation) []string {
	var out []string
	for _, n := range c.ProfileNames() {
		if p, err := c.Profile(n); err == nil && p.Vision {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

const systemPrompt = "Answer the question about the attached image in a few plain sentences."

// New returns the tool offering profiles (vision-capable, listed in its
// description) of conversation c.
func New(profiles []string, c tool.Conversation) *tool.Typed[Action, *Observation] {
	desc := "Ask a vision-capable model about an image of the latest user message when your own model cannot see images. " +
		"Give the image's index (from 0) and a precise question; the answer comes back as text.\n\nVision profiles:\n- " +
		strings.Join(profiles, "\n- ")
	return tool.New(Name, desc, func(ctx context.Context, a *Action) (*Observation, error) {
		o := &Observation{ImageIndex: a.ImageIndex, Question: a.Question}
		fail := func(format string, args ...any) (*Observation, error) {
			o.ObservationBase = event.ObservationBase{Content: event.List[event.Content]{event.Text(fmt.Sprintf(format, args...))}, IsError: true}
			return o, nil
		}
		if strings.TrimSpace(a.Question) == "" {
			return fail("Give a question about the image.")
		}
		name := profiles[0]
		if a.ProfileName != nil && *a.ProfileName != "" {
			name = *a.ProfileName
		}
		o.ProfileName = &name
		if !slices.Contains(profiles, name) {
			return fail("%q is not a vision profile of this conversation; use one of: %s.", name, strings.Join(profiles, ", "))
		}
		evs, err := c.Events()
		if err != nil {
			return nil, err
		}
		urls := latestUserImages(evs)
		if a.ImageIndex < 0 || a.ImageIndex >= len(urls) {
			return fail("There is no image %d: the latest user message with images has %d.", a.ImageIndex, len(urls))
		}
		info, err := c.Profile(name)
		if err != nil {
			return fail("Cannot load vision profile %q: %v", name, err)
		}
		o.Model, o.BaseURL = &info.Model, nilIfEmpty(info.BaseURL)
		msgs := []event.Message{
			{Role: event.RoleSystem, Content: event.List[event.Content]{event.Text(systemPrompt)}},
			{Role: event.RoleUser, Content: event.List[event.Content]{event.Text(a.Question), event.Image(urls[a.ImageIndex])}},
		}
		reply, err := c.Consult(ctx, name, UsagePrefix+name, msgs)
		if err != nil {
			if ctx.Err() != nil {
				return nil, context.Cause(ctx)
			}
			return fail("The vision model failed: %v", err)
		}
		var answer string
		for _, ct := range reply.Content {
			if ct.Type == event.ContentText && ct.Text != "" {
				answer = ct.Text
				break
			}
		}
		if answer == "" {
			return fail("The vision model gave no text answer.")
		}
		o.Answer = &answer
		o.ObservationBase = event.ObservationBase{Content: event.List[event.Content]{event.Text(answer)}}
		return o, nil
	}, &tool.Options{
		Kind: KindName,
		Annotations: &event.ToolAnnotations{
			ReadOnlyHint:   true,
			IdempotentHint: true,
			OpenWorldHint:  true,
		},
	})
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// latestUserImages returns the image URLs of the latest user message that
// has any.
func latestUserImages(evs []event.Event) []string {
	for _, e := range slices.Backward(evs) {
		m, ok := e.(*event.MessageEvent)
		if !ok || m.Source != event.SourceUser {
			continue
		}
		var urls []string
		for _, c := range m.LLMMessage.Content {
			if c.Type == event.ContentImage {
				urls = append(urls, c.ImageURLs...)
			}
		}
		if len(urls) > 0 {
			return urls
		}
	}
	return nil
}
