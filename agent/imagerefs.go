package agent

import (
	"context"
	"fmt"
	"slices"

	"github.com/gohands/gohands/agent/visioninspect"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

// withImageRefs returns the model's input for a step: msgs, or, when the
// model cannot see the images of the latest user message and the agent
// has the vision tool, msgs with those images replaced by references to
// that tool (see referImages). The reference 1.58.2 does the same; without
// the reference the model would not know the message had images at all.
//
// blind reports the case where the model cannot see them and there is no
// vision tool: the step must not call the model (see Step). A router picks
// a model per call (a multimodal one for images), so it is never blind.
func (r *runner) withImageRefs(msgs []event.Message) (out []event.Message, blind bool) {
	if _, ok := r.model.(*llm.Router); ok || llm.FeaturesOf(&r.a.LLM).Vision || !latestUserHasImage(msgs) {
		return msgs, false
	}
	if !slices.ContainsFunc(r.specs, func(s llm.ToolSpec) bool { return s.Name == visioninspect.Name }) {
		return msgs, true
	}
	return referImages(msgs), false
}

// latestUserHasImage reports whether the last user message of msgs has an
// image.
func latestUserHasImage(msgs []event.Message) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == event.RoleUser {
			return slices.ContainsFunc(msgs[i].Content, isImage)
		}
	}
	return false
}

func isImage(c event.Content) bool { return c.Type == event.ContentImage && len(c.ImageURLs) > 0 }

// cannotSee ends the run with a reply telling the user that the model
// cannot see the images they sent, without calling the model: it would
// answer a message whose images it never got. The reference 1.58.2 does
// the same (an agent MessageEvent, status finished), in its own words.
// Stop hooks run as after any answer; a critic does not judge this reply.
func (r *runner) cannotSee(ctx context.Context) error {
	msg := event.Message{Role: event.RoleAssistant, Content: event.List[event.Content]{event.Text(fmt.Sprintf(
		"I cannot look at the image you sent: the model of this conversation (%s) does not read images. "+
			"Switch to a model that can see images and ask again.", r.a.LLM.Model))}}
	if err := r.sess.Emit(&event.MessageEvent{Base: event.NewBase(event.SourceAgent), LLMMessage: msg}); err != nil {
		return err
	}
	return r.end(ctx, false)
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
		if !slices.ContainsFunc(m.Content, isImage) {
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
