package anthropic_test

import (
	"context"
	"fmt"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	_ "github.com/gohands/gohands/llm/anthropic" // registers the provider
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/secret"
)

// An "anthropic/" model string is all it takes to use the Messages API.
// Thinking blocks come back on the message, to be sent back unchanged with
// the rest of the history on the next turn. (The server here is a scripted
// stand-in for api.anthropic.com.)
func Example() {
	srv := llmtest.NewAnthropic(nil, llmtest.Reply{
		Reasoning: "The user wants a listing.", Signature: "c2lnbmF0dXJl",
		ToolCalls: []llmtest.ToolCall{{ID: "toolu_01", Name: "terminal", Arguments: `{"command":"ls"}`}},
	})
	defer srv.Close()

	cfg := llm.DefaultConfig("anthropic/claude-sonnet-4-5")
	cfg.APIKey = secret.New("sk-ant-...")
	cfg.BaseURL = srv.URL // omit to use https://api.anthropic.com
	l, err := llm.New(cfg, nil)
	if err != nil {
		panic(err)
	}
	terminal := llm.ToolSpec{Name: "terminal", Description: "Run a command.",
		Parameters: []byte(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)}
	r, err := l.Completion(context.Background(), []event.Message{event.UserMessage("What is here?")}, []llm.ToolSpec{terminal}, nil)
	if err != nil {
		panic(err)
	}
	tb := r.Message.ThinkingBlocks[0]
	fmt.Println(r.FinishReason, r.Message.ToolCalls[0].Name, r.Message.ToolCalls[0].Arguments)
	fmt.Println(tb.Thinking, *tb.Signature)
	// Output:
	// tool_calls terminal {"command":"ls"}
	// The user wants a listing. c2lnbmF0dXJl
}
