package agent

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

// A model that cannot see gets, in place of each image of the latest user
// message, a text naming its image_index for inspect_image_with_vision,
// when the agent has that tool; the messages given are not changed.
func TestImageRefs(t *testing.T) {
	withImages := func(text string, urls ...[]string) event.Message {
		m := event.UserMessage(text)
		for _, u := range urls {
			m.Content = append(m.Content, event.Image(u...))
		}
		return m
	}
	build := func() []event.Message {
		return []event.Message{
			{Role: event.RoleSystem, Content: event.List[event.Content]{event.Text("sys")}},
			withImages("old", []string{"data:old"}),
			{Role: event.RoleAssistant, Content: event.List[event.Content]{event.Text("ok")}},
			withImages("look", []string{"data:a", "data:b"}, []string{"data:c"}),
			{Role: event.RoleTool, ToolCallID: "c1", Content: event.List[event.Content]{event.Text("result")}},
		}
	}
	msgs := build()

	r := &runner{a: &Agent{}, specs: []llm.ToolSpec{{Name: "inspect_image_with_vision"}}}
	r.a.LLM.Model = "openai/gpt-3.5-turbo"
	got, blind := r.withImageRefs(msgs)
	if blind {
		t.Fatal("blind with the vision tool")
	}
	var texts []string
	for _, c := range got[3].Content {
		if c.Type != event.ContentText {
			t.Fatalf("an image left in the latest user message: %+v", got[3].Content)
		}
		texts = append(texts, c.Text)
	}
	if len(texts) != 4 || texts[0] != "look" {
		t.Fatalf("latest user message: %q", texts)
	}
	for i, s := range texts[1:] {
		if want := "image_index=" + string(rune('0'+i)); !strings.Contains(s, want) || !strings.Contains(s, "inspect_image_with_vision") {
			t.Errorf("reference %d: %q, want %s and the tool", i, s, want)
		}
	}
	if diff := cmp.Diff(msgs[1], got[1]); diff != "" {
		t.Errorf("an earlier user message changed:\n%s", diff)
	}
	if diff := cmp.Diff(build(), msgs); diff != "" {
		t.Errorf("the messages given were changed:\n%s", diff)
	}

	// Not for a model that sees, nor without the tool, nor when the
	// latest user message has no image.
	for name, r := range map[string]*runner{
		"vision model": {a: &Agent{}, specs: r.specs},
		"no tool":      {a: &Agent{}},
	} {
		if name == "vision model" {
			r.a.LLM.Model = "openai/gpt-4o"
		} else {
			r.a.LLM.Model = "openai/gpt-3.5-turbo"
		}
		got, blind := r.withImageRefs(msgs)
		if diff := cmp.Diff(msgs, got); diff != "" {
			t.Errorf("%s: messages changed:\n%s", name, diff)
		}
		if want := name == "no tool"; blind != want {
			t.Errorf("%s: blind %v, want %v", name, blind, want)
		}
	}
	later := append(msgs[:len(msgs):len(msgs)], event.UserMessage("and now?"))
	for name, r := range map[string]*runner{"tool": r, "no tool": {a: r.a}} {
		got, blind := r.withImageRefs(later)
		if diff := cmp.Diff(later, got); diff != "" || blind {
			t.Errorf("%s: the latest user message has no image, yet blind %v or messages changed:\n%s", name, blind, diff)
		}
	}
}
