package event_test

import (
	"fmt"

	"github.com/gohands/gohands/event"
)

// GreetAction is the typed arguments of a hypothetical "greet" tool.
type GreetAction struct {
	Name  string   `json:"name" required:"true"`
	Times int      `json:"times"`
	Delay *float64 `json:"delay,omitempty"`
}

// SetDefaults gives Times the default the tool declares, so that JSON without
// "times" decodes to 1.
func (a *GreetAction) SetDefaults() { a.Times = 1 }

func init() { event.RegisterKind[GreetAction]("GreetAction") }

func ExampleRegisterKind() {
	delay := 2.0
	b, _ := event.MarshalKinded(&GreetAction{Name: "Ada", Times: 3, Delay: &delay})
	fmt.Println(string(b))

	a, err := event.DecodeKinded[*GreetAction]([]byte(`{"name":"Bob","kind":"GreetAction"}`))
	fmt.Println(a.Name, a.Times, err)

	_, err = event.DecodeKinded[*GreetAction]([]byte(`{"name":"Bob","loud":true,"kind":"GreetAction"}`))
	fmt.Println(err)
	// Output:
	// {"name":"Ada","times":3,"delay":2.0,"kind":"GreetAction"}
	// Bob 1 <nil>
	// event: decoding GreetAction: unknown field "loud"
}

func ExampleMarshal() {
	e := &event.MessageEvent{
		Base:       event.Base{ID: "6f1c2a8e-8a3b-4a57-9a0e-2f4d1c9b7e21", Timestamp: "2026-08-22T10:15:03.482911", Source: event.SourceUser},
		LLMMessage: event.UserMessage("List the files"),
	}
	b, _ := event.Marshal(e)
	fmt.Println(string(b))

	back, _ := event.Unmarshal(b)
	fmt.Println(event.TextOf(back.(*event.MessageEvent).LLMMessage.Content))
	// Output:
	// {"id":"6f1c2a8e-8a3b-4a57-9a0e-2f4d1c9b7e21","timestamp":"2026-08-22T10:15:03.482911","source":"user","llm_message":{"role":"user","content":[{"cache_prompt":false,"type":"text","text":"List the files"}],"thinking_blocks":[]},"activated_skills":[],"extended_content":[],"kind":"MessageEvent"}
	// List the files
}
