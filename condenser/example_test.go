package condenser_test

import (
	"context"
	"fmt"

	"github.com/gohands/gohands/condenser"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
)

// A conversation outgrows max_size; the condenser forgets the middle and
// the view built from the log shows a summary in its place.
func Example() {
	p := llmtest.NewProvider(nil, llmtest.Reply{Text: "USER_CONTEXT: count to ten"})
	cfg := llm.DefaultConfig("openai/gpt-4o")
	model, err := llm.New(cfg, &llm.Options{Provider: p})
	if err != nil {
		panic(err)
	}
	c := condenser.NewLLMSummarizing(cfg, model)
	c.MaxSize, c.KeepFirst = 8, 1

	log := []event.Event{&event.SystemPromptEvent{Base: event.Base{ID: "sys"}, SystemPrompt: event.Text("You count.")}}
	for i := range 10 {
		log = append(log, &event.MessageEvent{Base: event.Base{ID: fmt.Sprint("m", i), Source: event.SourceUser},
			LLMMessage: event.UserMessage(fmt.Sprint(i))})
	}
	cond, err := c.Condense(context.Background(), condenser.NewView(log), model)
	if err != nil {
		panic(err)
	}
	log = append(log, cond)
	for _, e := range condenser.NewView(log).Events {
		switch e := e.(type) {
		case *event.CondensationSummaryEvent:
			fmt.Println("summary:", e.Summary)
		default:
			fmt.Println(e.EventBase().ID)
		}
	}
	// Output:
	// sys
	// summary: USER_CONTEXT: count to ten
	// m8
	// m9
}
