package llm

import (
	"slices"

	"github.com/gohands/gohands/event"
)

// ToolImageNote is the text of the user message that carries the images
// of tool results on APIs that take no image in a tool result.
const ToolImageNote = "The tool results above returned these images:"

// toolImageStub replaces a tool result that was only images.
const toolImageStub = "(The result is an image, in the next message.)"

// MoveToolImages returns msgs with the images of tool results moved into
// a user message after each run of consecutive tool results, for APIs whose
// tool results take text only (Chat Completions). The message comes after
// the whole run because those APIs want an assistant turn's results right
// after it. A tool result left without text says where its image went.
// With no image in a tool result, msgs itself is returned; otherwise the
// copies share the image URL lists of msgs (so a MessageCache finds them
// the same from call to call).
func MoveToolImages(msgs []event.Message) []event.Message {
	hasImage := func(m *event.Message) bool {
		return m.Role == event.RoleTool && slices.ContainsFunc(m.Content, func(c event.Content) bool {
			return c.Type == event.ContentImage && len(c.ImageURLs) > 0
		})
	}
	if !slices.ContainsFunc(msgs, func(m event.Message) bool { return hasImage(&m) }) {
		return msgs
	}
	out := make([]event.Message, 0, len(msgs)+1)
	var images []event.Content
	for i, m := range msgs {
		if hasImage(&m) {
			var kept []event.Content
			for _, c := range m.Content {
				if c.Type == event.ContentImage {
					images = append(images, c)
				} else {
					kept = append(kept, c)
				}
			}
			if event.TextOf(kept) == "" {
				kept = append(kept, event.Text(toolImageStub))
			}
			m.Content = kept
		}
		out = append(out, m)
		runEnds := i+1 == len(msgs) || msgs[i+1].Role != event.RoleTool
		if m.Role == event.RoleTool && runEnds && len(images) > 0 {
			content := append([]event.Content{event.Text(ToolImageNote)}, images...)
			out = append(out, event.Message{Role: event.RoleUser, Content: content})
			images = nil
		}
	}
	return out
}
