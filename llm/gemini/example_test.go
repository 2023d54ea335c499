package gemini_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/gemini"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/secret"
)

// A "gemini/" model string selects the Gemini API. A function call's
// thought signature rides on its tool call id, so keeping the message in
// the history is all it takes to send it back. (The server here is a
// scripted stand-in for generativelanguage.googleapis.com.)
func Example() {
	srv := llmtest.NewGemini(nil, llmtest.Reply{
		Reasoning: "I should look at the files.", Signature: "opaque",
		ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"ls"}`}},
		Usage:     llmtest.Usage{PromptTokens: 1000, CompletionTokens: 50, ReasoningTokens: 30},
	})
	defer srv.Close()

	cfg := llm.DefaultConfig("gemini/gemini-2.5-pro")
	cfg.APIKey = secret.New("AIza...")
	cfg.BaseURL = srv.URL // omit to use the Google endpoint
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
	call := r.Message.ToolCalls[0]
	fmt.Println(call.Name, call.Arguments, strings.Contains(call.ID, gemini.ThoughtSeparator))
	fmt.Println(r.Message.ReasoningContent, r.Usage.ReasoningTokens)
	// Output:
	// terminal {"command":"ls"} true
	// I should look at the files. 30
}
