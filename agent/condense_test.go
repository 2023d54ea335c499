package agent_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/condenser"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
)

func think(n int) llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "think", Arguments: fmt.Sprintf(`{"thought":"step %d"}`, n)}}}
}

// summarizer returns an LLMSummarizing condenser, as the agent's JSON
// configuration carries it, whose summaries come from a scripted model.
func summarizer(t *testing.T, maxSize, keepFirst int, summaries int) *condenser.LLMSummarizing {
	t.Helper()
	var replies []llmtest.Reply
	for i := range summaries {
		replies = append(replies, llmtest.Reply{Text: fmt.Sprintf("summary %d", i)})
	}
	p := llmtest.NewProvider(t, replies...)
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.UsageID = "condenser"
	m, err := llm.New(cfg, &llm.Options{Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	c := condenser.NewLLMSummarizing(cfg, m)
	c.MaxSize, c.KeepFirst = maxSize, keepFirst
	return c
}

// checkPaired fails unless every tool call of req is answered by exactly
// one tool result and every result answers a call.
func checkPaired(t *testing.T, i int, req llm.Request) {
	t.Helper()
	calls := map[string]int{}
	for _, m := range req.Messages {
		for _, tc := range m.ToolCalls {
			calls[tc.ID]++
		}
	}
	for _, m := range req.Messages {
		if m.Role == event.RoleTool {
			if calls[m.ToolCallID] != 1 {
				t.Fatalf("request %d: result for %q answers %d calls", i, m.ToolCallID, calls[m.ToolCallID])
			}
			calls[m.ToolCallID] = -1
		}
	}
	for id, n := range calls {
		if n != -1 {
			t.Fatalf("request %d: call %q has no single result", i, id)
		}
	}
}

func TestContextWindowErrorCondensesAndRecovers(t *testing.T) {
	replies := []llmtest.Reply{think(1), think(2), think(3), think(4), think(5), think(6),
		{Fail: &llmtest.Failure{ContextWindow: true}},
		{Text: "Done."},
	}
	a, p := newAgent(t, replies...)
	// A large max_size: only the request makes it condense.
	c := summarizer(t, 1000, 1, 1)
	raw, err := event.MarshalKinded(c)
	if err != nil {
		t.Fatal(err)
	}
	a.Condenser = json.RawMessage(raw)
	// The decoded configuration has no scripted model: give the agent the
	// same condenser with it (TestCondenserConfigDecoded covers decoding).
	a = a.WithOptions(&agent.Options{Model: a.Options().Model, Condenser: c})
	conv, rec := newConv(t, a, nil)
	conv.SendMessage(ctx, event.UserMessage("think a lot"))
	if err := conv.Run(ctx); err != nil {
		t.Fatal(err)
	}
	kinds := rec.kinds()
	var req, cond int
	for _, k := range kinds {
		switch k {
		case "CondensationRequest":
			req++
		case "Condensation":
			cond++
		}
	}
	if req != 1 || cond != 1 {
		t.Fatalf("%d requests, %d condensations: %v", req, cond, kinds)
	}
	rs := p.Requests()
	if len(rs) != len(replies) {
		t.Fatalf("%d requests, want %d", len(rs), len(replies))
	}
	failed, next := rs[len(rs)-2], rs[len(rs)-1]
	if len(next.Messages) >= len(failed.Messages) {
		t.Fatalf("request after condensation has %d messages, the failed one %d", len(next.Messages), len(failed.Messages))
	}
	for i, r := range rs {
		checkPaired(t, i, r)
	}
	if st := conv.State().Fields().ExecutionStatus; st != "finished" {
		t.Fatalf("status %s", st)
	}
}

func TestContextWindowErrorWithoutCondenserFails(t *testing.T) {
	a, _ := newAgent(t, think(1), llmtest.Reply{Fail: &llmtest.Failure{ContextWindow: true}})
	conv, _ := newConv(t, a, nil)
	conv.SendMessage(ctx, event.UserMessage("think"))
	if err := conv.Run(ctx); err == nil {
		t.Fatal("run succeeded")
	}
}

// A 1,000-step run under an event-count condenser: no request the model
// gets exceeds the configured size, and every one is well-formed.
func TestLongRunStaysUnderLimit(t *testing.T) {
	const steps, maxSize = 1000, 40
	var replies []llmtest.Reply
	for i := range steps {
		replies = append(replies, think(i))
	}
	replies = append(replies, llmtest.Reply{Text: "Done."})
	a, p := newAgent(t, replies...)
	a = a.WithOptions(&agent.Options{Model: a.Options().Model, Condenser: summarizer(t, maxSize, 2, steps)})
	conv, _ := newConv(t, a, &conversation.LocalOptions{MaxIterations: 2 * steps})
	conv.SendMessage(ctx, event.UserMessage("think a lot"))
	if err := conv.Run(ctx); err != nil {
		t.Fatal(err)
	}
	rs := p.Requests()
	if len(rs) != len(replies) {
		t.Fatalf("%d requests, want %d", len(rs), len(replies))
	}
	for i, r := range rs {
		// Messages: system + view; a view may reach maxSize+1 events before
		// it is condensed.
		if len(r.Messages) > maxSize+2 {
			t.Fatalf("request %d has %d messages", i, len(r.Messages))
		}
		checkPaired(t, i, r)
	}
}

// The agent's condenser configuration is decoded and checked when the
// agent starts: a bad one is a clear error, not a silent no-op.
func TestCondenserConfigDecoded(t *testing.T) {
	a, _ := newAgent(t, llmtest.Reply{Text: "Done."})
	a.Condenser = json.RawMessage(`{"kind":"LLMSummarizingCondenser","llm":{"model":"openai/gpt-4o","usage_id":"condenser"},"max_size":4,"keep_first":4}`)
	conv, _ := newConv(t, a, nil)
	conv.SendMessage(ctx, event.UserMessage("hi"))
	err := conv.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "max_size") {
		t.Fatalf("run with a bad condenser: %v", err)
	}
	a2, _ := newAgent(t, llmtest.Reply{Text: "Done."})
	a2.Condenser = json.RawMessage(`{"kind":"NoOpCondenser"}`)
	conv2, _ := newConv(t, a2, nil)
	conv2.SendMessage(ctx, event.UserMessage("hi"))
	if err := conv2.Run(ctx); err != nil {
		t.Fatal(err)
	}
}
