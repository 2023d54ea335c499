package agent

import (
	"fmt"
	"slices"

	"github.com/gohands/gohands/agent/visioninspect"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

// withImageRefs returns the model's input for a step: msgs, or, when the
// model cannot see images and the agent has the vision tool, msgs with
// the images of the latest user message replaced by references to that
// tool (see referImages). The reference 1.58.2 does the same; without the
// reference the model would not know the message had images at all.
func (r *runner) withImageRefs(msgs []event.Message) []event.Message {
	if llm.FeaturesOf(&r.a.LLM).Vision ||
		!slices.ContainsFunc(r.specs, func(s llm.ToolSpec) bool { return s.Name == visioninspect.Name }) {
		return msgs
	}
	return referImages(msgs)
}

// referImages returns msgs with each image of the latest user message, if
// it has any, replaced by a text naming its image_index for the vision
// tool, counting from 0 in the message's order (the tool's numbering).
// msgs and its messages are not changed.
func referImages(msgs []event.Message) []event.Message {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != event.RoleUser {
			continue
		}
		m := msgs[i]
		if !slices.ContainsFunc(m.Content, func(c event.Content) bool { return c.Type == event.ContentImage && len(c.ImageURLs) > 0 }) {
			return msgs
		}
		content := make(event.List[event.Content], 0, len(m.Content))
		n := 0
		for _, c := range m.Content {
			if c.Type != event.ContentImage {
				content = append(content, c)
				continue
			}
			for range c.ImageURLs {
				content = append(content, event.Text(fmt.Sprintf(
					"[This message has image %d, which you cannot see: call %s with image_index=%d to ask about it.]", n, visioninspect.Name, n)))
				n++
			}
		}
		m.Content = content
		out := slices.Clone(msgs)
		out[i] = m
		return out
	}
	return msgs
}
