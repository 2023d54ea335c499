package agent_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/terminal"
)

// Interrupt cuts a running command short: Run returns (long before the
// command would have ended), the action is answered and the stop is
// recorded as an InterruptEvent, not a PauseEvent.
func TestInterruptLongCommand(t *testing.T) {
	a, p := newAgent(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{
		{Name: "terminal", Arguments: `{"command":"sleep 30","timeout":60}`},
	}})
	a.Tools = append(a.Tools, tool.Spec{Name: terminal.Name})
	c, _ := newConv(t, a, nil)
	started := make(chan struct{}, 1)
	c.Subscribe(func(e event.Event) {
		if _, ok := e.(*event.ActionEvent); ok {
			select {
			case started <- struct{}{}:
			default:
			}
		}
	})
	c.SendMessage(ctx, event.UserMessage("sleep"))
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	<-started
	time.Sleep(200 * time.Millisecond) // let the command start
	t0 := time.Now()
	if err := c.Interrupt(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second): // far below the command's 30 s
		t.Fatal("Run did not return after Interrupt")
	}
	t.Logf("interrupted after %v", time.Since(t0))
	if c.Status() != conversation.StatusPaused {
		t.Fatalf("status %s", c.Status())
	}
	log := logEvents(t, c)
	if _, ok := log[len(log)-1].(*event.InterruptEvent); !ok {
		t.Fatalf("last event %T, want an InterruptEvent", log[len(log)-1])
	}
	for _, e := range log {
		if _, ok := e.(*event.PauseEvent); ok {
			t.Fatal("an interrupt recorded a PauseEvent")
		}
	}
	switch r := log[len(log)-2].(type) {
	case *event.AgentErrorEvent, *event.ObservationEvent:
	default:
		t.Fatalf("interrupted action answered by %T", r)
	}
	p.Add(llmtest.Reply{Text: "Stopped."})
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if c.Status() != conversation.StatusFinished {
		t.Fatalf("status %s", c.Status())
	}
}

// Interrupting an idle conversation pauses it, as the reference does.
func TestInterruptIdle(t *testing.T) {
	a, _ := newAgent(t)
	c, _ := newConv(t, a, nil)
	if err := c.Interrupt(); err != nil {
		t.Fatal(err)
	}
	log := logEvents(t, c)
	if _, ok := log[len(log)-1].(*event.PauseEvent); !ok || c.Status() != conversation.StatusPaused {
		t.Fatalf("last event %T, status %s", log[len(log)-1], c.Status())
	}
}

// pricedAgent is newAgent with a price per token, so each scripted reply
// costs money.
func pricedAgent(t *testing.T, replies ...llmtest.Reply) (*agent.Agent, *llmtest.Provider) {
	p := llmtest.NewProvider(t, replies...)
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.RetryMinWait, cfg.RetryMaxWait, cfg.RetryMultiplier = 0, 0, 0
	in, out := 0.001, 0.002
	cfg.InputCostPerToken, cfg.OutputCostPerToken = &in, &out
	l, err := llm.New(cfg, &llm.Options{Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	return agent.New(cfg, nil, &agent.Options{Model: l}), p
}

// A budget ends the run at the step whose call crosses it, with a
// MaxBudgetReached error and status error; below it the run goes on.
func TestMaxBudgetPerRun(t *testing.T) {
	usage := llmtest.Usage{PromptTokens: 100, CompletionTokens: 10} // $0.12 a call
	think := func() llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "think", Arguments: `{"thought":"hm"}`}}, Usage: usage}
	}
	a, p := pricedAgent(t, think(), think(), think(), llmtest.Reply{Text: "done", Usage: usage})
	c, _ := newConv(t, a, &conversation.LocalOptions{MaxBudgetPerRun: 0.3})
	c.SendMessage(ctx, event.UserMessage("think"))
	err := c.Run(ctx)
	var re *conversation.RunError
	if !errors.As(err, &re) || re.Code != conversation.CodeMaxBudget {
		t.Fatalf("Run: %v, want a %s error", err, conversation.CodeMaxBudget)
	}
	if got := len(p.Requests()); got != 3 {
		t.Errorf("%d calls, want 3 (the third crosses $0.30)", got)
	}
	if c.Status() != conversation.StatusError {
		t.Errorf("status %s", c.Status())
	}
	log := logEvents(t, c)
	ce, ok := log[len(log)-1].(*event.ConversationErrorEvent)
	if !ok || ce.Code != "MaxBudgetReached" || ce.Detail != "Agent reached maximum budget limit ($0.3000); accumulated cost $0.3600." {
		t.Fatalf("last event %#v", log[len(log)-1])
	}
	if cost := c.State().Fields().Stats.TotalCost(); cost < 0.36-1e-9 {
		t.Errorf("stats cost %v", cost)
	}

	// Without a budget the same script runs to the end.
	a2, p2 := pricedAgent(t, think(), think(), think(), llmtest.Reply{Text: "done", Usage: usage})
	c2, _ := newConv(t, a2, nil)
	c2.SendMessage(ctx, event.UserMessage("think"))
	if err := c2.Run(ctx); err != nil || len(p2.Requests()) != 4 {
		t.Fatalf("Run: %v after %d calls", err, len(p2.Requests()))
	}
}

// Persona replaces the opening paragraph of the system prompt; the rest
// (how to work) stays, and the persona is kept in the agent's JSON.
func TestPersona(t *testing.T) {
	a, p := newAgent(t, llmtest.Reply{Text: "Arr."})
	a.Persona = "You are Captain Patch, a pirate who fixes code."
	c, _ := newConv(t, a, nil)
	c.SendMessage(ctx, event.UserMessage("hi"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	sys := event.TextOf(p.Requests()[0].Messages[0].Content)
	if !strings.HasPrefix(sys, a.Persona+"\n\n") || strings.Contains(sys, "You are gohands") || !strings.Contains(sys, "How to work:") {
		t.Fatalf("system prompt:\n%s", sys)
	}
	b, err := json.Marshal(a)
	if err != nil || !strings.Contains(string(b), `"persona":"You are Captain Patch`) {
		t.Fatalf("agent JSON %s (%v)", b, err)
	}
	var back agent.Agent
	if err := json.Unmarshal(b, &back); err != nil || back.Persona != a.Persona {
		t.Fatalf("decoded persona %q (%v)", back.Persona, err)
	}

	// Without one, the built-in persona and no persona key.
	a2, p2 := newAgent(t, llmtest.Reply{Text: "ok"})
	c2, _ := newConv(t, a2, nil)
	c2.SendMessage(ctx, event.UserMessage("hi"))
	if err := c2.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if sys := event.TextOf(p2.Requests()[0].Messages[0].Content); !strings.HasPrefix(sys, "You are gohands") {
		t.Fatalf("default system prompt:\n%s", sys)
	}
	if b, _ := json.Marshal(a2); strings.Contains(string(b), "persona") {
		t.Fatalf("empty persona in JSON: %s", b)
	}
}
