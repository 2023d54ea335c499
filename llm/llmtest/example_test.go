package llmtest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
)

// A test scripts the model's turns, points the provider at srv.URL and
// asserts on what was sent. Here a bare HTTP client stands in for the
// provider; in a test, pass t instead of nil and the server closes itself.
func ExampleNewChat() {
	srv := llmtest.NewChat(nil,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{Name: "terminal", Arguments: `{"command":"ls"}`},
			{Name: "terminal", Arguments: `{"command":"pwd"}`},
		}},
		llmtest.Reply{Text: "Done."},
	)
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"gpt-4o","messages":[{"role":"user","content":"look around"}]}`))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(strings.Contains(string(body), `"finish_reason":"tool_calls"`))
	fmt.Println(srv.LastRequest().Body["model"], srv.Remaining())
	// Output:
	// true
	// gpt-4o 1
}

// The in-process Provider drives an LLM with no HTTP at all, for tests of
// code above the LLM (agents, condensers) and their benchmarks.
func ExampleNewProvider() {
	p := llmtest.NewProvider(nil,
		llmtest.RateLimited(0),
		llmtest.Reply{Text: "Hello!", Usage: llmtest.Usage{PromptTokens: 12, CompletionTokens: 3}},
	)
	cfg := llm.DefaultConfig("anthropic/claude-sonnet-4-5")
	cfg.RetryMinWait, cfg.RetryMaxWait = 0, 0
	l, err := llm.New(cfg, &llm.Options{Provider: p})
	if err != nil {
		panic(err)
	}
	r, err := l.Completion(context.Background(), []event.Message{event.UserMessage("hi")}, nil, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(event.TextOf(r.Message.Content), len(p.Requests()), r.Usage.PerTurnToken)
	// Output: Hello! 2 15
}
