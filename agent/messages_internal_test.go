package agent

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gohands/gohands/event"
)

// The cached projection must equal a fresh one after every kind of growth,
// and after the view is replaced (condensed).
func TestMessagesCacheMatchesProjection(t *testing.T) {
	r := &runner{}
	var view []event.Event
	add := func(es ...event.Event) {
		view = append(view, es...)
		if diff := cmp.Diff(orderToolResults(event.LLMMessages(view)), r.messages(view)); diff != "" {
			t.Fatalf("after %d events (-want +got):\n%s", len(view), diff)
		}
	}
	user := func(s string) event.Event {
		return &event.MessageEvent{Base: event.NewBase(event.SourceUser), LLMMessage: event.UserMessage(s)}
	}
	act := func(call, resp string) event.Event {
		return &event.ActionEvent{Base: event.NewBase(event.SourceAgent), ToolCallID: call, LLMResponseID: resp,
			ToolCall: event.ToolCall{ID: call, Name: "think", Arguments: "{}"}}
	}
	res := func(call string) event.Event {
		return &event.AgentErrorEvent{Base: event.NewBase(event.SourceAgent), ToolCallID: call, Error: "e " + call}
	}
	add(&event.SystemPromptEvent{Base: event.NewBase(event.SourceAgent), SystemPrompt: event.Text("sys")})
	add(user("a"))
	add(user("b")) // merged with a
	add(act("c1", "r1"))
	add(act("c2", "r1")) // joins the batch
	add(res("c1"), res("c2"))
	for i := range 5 {
		add(act(fmt.Sprint("d", i), fmt.Sprint("s", i)), res(fmt.Sprint("d", i)))
	}
	// A user message between a call and its result, then calls in order
	// again: the result moves up, whichever step the result arrives in.
	add(act("x1", "rx"))
	add(user("meanwhile"))
	add(res("x1"))
	add(act("y1", "ry"), res("y1"))
	add(act("z1", "rz"), act("z2", "rz"), res("z2"))
	add(user("between"))
	add(res("z1"))
	add(user("c"), user("d"))
	// Condensed: a new, shorter view.
	view = append([]event.Event{view[0]}, view[len(view)-4:]...)
	add()
	add(&event.MessageEvent{Base: event.NewBase(event.SourceAgent), LLMMessage: event.Message{Role: event.RoleAssistant, Content: event.List[event.Content]{event.Text("ok")}}})
	add(user("e"))
}
