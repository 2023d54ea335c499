package agent_test

import (
	"context"
	"fmt"
	"os"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
)

// A conversation runs an agent in a workspace directory until the agent
// finishes. Here a scripted model stands in for a real one: with a real
// provider, drop Options.Model and set the API key in the config.
func Example() {
	ctx := context.Background()
	model, _ := llm.New(llm.DefaultConfig("openai/gpt-4o"), &llm.Options{Provider: llmtest.NewProvider(nil,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "think", Arguments: `{"thought":"Nothing to do but greet."}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"Hello!"}`}}},
	)})
	a := agent.New(llm.DefaultConfig("openai/gpt-4o"), nil, &agent.Options{Model: model})

	work, _ := os.MkdirTemp("", "gohands-example-")
	defer os.RemoveAll(work)
	conv, err := conversation.New(ctx, a, work, &conversation.LocalOptions{
		OnEvent: func(e event.Event) {
			if a, ok := e.(*event.ActionEvent); ok {
				fmt.Println("action:", a.ToolName)
			}
		},
	})
	if err != nil {
		panic(err)
	}
	defer conv.Close()

	conv.SendMessage(ctx, event.UserMessage("Say hello."))
	if err := conv.Run(ctx); err != nil {
		panic(err)
	}
	fmt.Println("status:", conv.Status())
	// Output:
	// action: think
	// action: finish
	// status: finished
}
