package visioninspect_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/agent/visioninspect"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

// testdata holds the reference 1.58.2's events of this tool (gen.py
// there): each decodes to this package's types and re-encodes byte for
// byte.
func TestReferenceEvents(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.json")
	if len(files) != 3 {
		t.Fatalf("%d fixtures, want 3", len(files))
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			e, err := event.Unmarshal(data)
			if err != nil {
				t.Fatal(err)
			}
			switch e := e.(type) {
			case *event.ActionEvent:
				if a, ok := e.Action.(*visioninspect.Action); !ok || *a.ProfileName != "eye" {
					t.Fatalf("action %#v", e.Action)
				}
			case *event.ObservationEvent:
				if _, ok := e.Observation.(*visioninspect.Observation); !ok {
					t.Fatalf("observation %#v", e.Observation)
				}
			default:
				t.Fatalf("event %T", e)
			}
			out, err := event.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, data) {
				t.Fatalf("re-encoded:\n%s\nreference:\n%s", out, data)
			}
		})
	}
}

type conv struct {
	asked []event.Message
	usage string
	err   error
	reply string
	evs   []event.Event
}

func (c *conv) Consult(_ context.Context, _, usageID string, msgs []event.Message) (event.Message, error) {
	c.asked, c.usage = msgs, usageID
	return event.Message{Role: event.RoleAssistant, Content: event.List[event.Content]{event.Text(c.reply)}}, c.err
}
func (c *conv) SwitchProfile(context.Context, string) (string, error) { return "", errors.New("no") }
func (c *conv) ProfileNames() []string                                { return []string{"eye", "text"} }
func (c *conv) Profile(name string) (tool.ProfileInfo, error) {
	switch name {
	case "eye":
		return tool.ProfileInfo{Model: "openai/gpt-4o", Vision: true}, nil
	case "text":
		return tool.ProfileInfo{Model: "openai/gpt-3.5-turbo"}, nil
	}
	return tool.ProfileInfo{}, errors.New("no such profile")
}
func (c *conv) Events() ([]event.Event, error) { return c.evs, nil }

func user(contents ...event.Content) event.Event {
	return &event.MessageEvent{Base: event.NewBase(event.SourceUser), LLMMessage: event.Message{Role: event.RoleUser, Content: contents}}
}

func TestInspect(t *testing.T) {
	c := &conv{reply: "A red square.", evs: []event.Event{
		user(event.Text("old"), event.Image("data:old")),
		user(event.Text("look"), event.Image("data:a", "data:b")),
		user(event.Text("no image here")),
	}}
	if got := visioninspect.Profiles(c); len(got) != 1 || got[0] != "eye" {
		t.Fatalf("vision profiles %v", got)
	}
	tl := visioninspect.New([]string{"eye"}, c)
	if !strings.Contains(tl.Description(), "- eye") {
		t.Errorf("description %q", tl.Description())
	}
	o, err := tl.Run(context.Background(), &visioninspect.Action{ImageIndex: 1, Question: "What?"})
	if err != nil || o.IsError || *o.Answer != "A red square." || *o.ProfileName != "eye" || *o.Model != "openai/gpt-4o" || o.BaseURL != nil {
		t.Fatalf("observation %+v, %v", o, err)
	}
	if c.usage != "vision-profile:eye" || len(c.asked) != 2 || c.asked[1].Content[1].ImageURLs[0] != "data:b" {
		t.Fatalf("call %q %+v", c.usage, c.asked)
	}
	text := "text"
	for _, a := range []*visioninspect.Action{
		{ImageIndex: 2, Question: "What?"},
		{ImageIndex: -1, Question: "What?"},
		{ImageIndex: 0, Question: " "},
		{ImageIndex: 0, Question: "What?", ProfileName: &text},
	} {
		if o, err := tl.Run(context.Background(), a); err != nil || !o.IsError || o.Answer != nil {
			t.Errorf("%+v: %+v %v", a, o, err)
		}
	}
	c.reply = ""
	if o, _ := tl.Run(context.Background(), &visioninspect.Action{Question: "What?"}); !o.IsError {
		t.Errorf("empty answer: %+v", o)
	}
}

// Without a vision profile there is no tool, as in the reference.
func TestNoProfile(t *testing.T) {
	tools, err := tool.Resolve(tool.Context{}, tool.Spec{Name: visioninspect.Name})
	if err != nil || len(tools) != 0 {
		t.Fatalf("%v %v", tools, err)
	}
	tools, err = tool.Resolve(tool.Context{Conversation: &conv{}}, tool.Spec{Name: visioninspect.Name})
	if err != nil || len(tools) != 1 || tools[0].Name() != visioninspect.Name {
		t.Fatalf("%v %v", tools, err)
	}
}
