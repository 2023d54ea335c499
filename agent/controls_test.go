package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/gohands/gohands/conversation/filestore"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/goal"
	"github.com/gohands/gohands/conversation/title"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/secret"
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
	if err := c.Interrupt(t.Context()); err != nil {
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
	if err := c.Interrupt(t.Context()); err != nil {
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

// texts returns the text of each message of a request, system prompt
// left out.
func texts(r llm.Request) []string {
	var out []string
	for _, m := range r.Messages[1:] {
		out = append(out, event.TextOf(m.Content))
	}
	return out
}

// turn sends text and runs the conversation to its end.
func turn(t *testing.T, c conversation.Conversation, text string) {
	t.Helper()
	if err := c.SendMessage(ctx, event.UserMessage(text)); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
}

// agentReply returns the id of the agent's message saying text.
func agentReply(t *testing.T, c *conversation.LocalConversation, text string) string {
	t.Helper()
	for _, e := range logEvents(t, c) {
		if m, ok := e.(*event.MessageEvent); ok && m.Source == event.SourceAgent && event.TextOf(m.LLMMessage.Content) == text {
			return m.ID
		}
	}
	t.Fatalf("no agent message %q", text)
	return ""
}

// A fork from an event copies the branch up to it under a new id, with
// its own title, tags and zeroed metrics, and runs independently: the
// fork's next request holds only the copied branch, and the source goes
// on as if nothing happened. Both are stored and resume.
func TestForkFromEvent(t *testing.T) {
	usage := llmtest.Usage{PromptTokens: 100, CompletionTokens: 10}
	a, p := pricedAgent(t,
		llmtest.Reply{Text: "one", Usage: usage}, llmtest.Reply{Text: "two", Usage: usage},
		llmtest.Reply{Text: "three", Usage: usage}, llmtest.Reply{Text: "four", Usage: usage})
	backend := filestore.NewBackend(t.TempDir(), nil)
	src, _ := newConv(t, a, &conversation.LocalOptions{Backend: backend})
	turn(t, src, "first")
	turn(t, src, "second")
	srcEvents := src.State().Events().Len()

	one := agentReply(t, src, "one")
	fork, err := src.Fork(ctx, &conversation.ForkOptions{FromEventID: one, Title: "Alt", Tags: map[string]string{"team": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	defer fork.Close()
	f := fork.State().Fields()
	if fork.ID() == src.ID() || f.ExecutionStatus != conversation.StatusIdle || f.LeafEventID != one {
		t.Fatalf("fork %s: status %s, leaf %s", fork.ID(), f.ExecutionStatus, f.LeafEventID)
	}
	if f.Tags["title"] != "Alt" || f.Tags["team"] != "x" || f.Stats.TotalCost() != 0 {
		t.Fatalf("fork tags %v, cost %v", f.Tags, f.Stats.TotalCost())
	}
	if src.State().Fields().Stats.TotalCost() == 0 {
		t.Fatal("the source has no costs to reset")
	}
	if _, ok := fork.State().Events().Lookup(one); !ok || fork.State().Events().Len() != 3 {
		t.Fatalf("fork has %d events", fork.State().Events().Len()) // system, first, one… and nothing after
	}

	turn(t, fork, "branch")
	if got := texts(p.Requests()[2]); !slices.Equal(got, []string{"first", "one", "branch"}) {
		t.Fatalf("fork's request %q", got)
	}
	if cost := fork.State().Fields().Stats.TotalCost(); cost < 0.12-1e-9 || cost > 0.12+1e-9 {
		t.Errorf("fork's cost %v, want its one call", cost)
	}
	if n := src.State().Events().Len(); n != srcEvents {
		t.Fatalf("the fork's run changed the source: %d events, had %d", n, srcEvents)
	}
	turn(t, src, "third")
	if got := texts(p.Requests()[3]); !slices.Equal(got, []string{"first", "one", "second", "two", "third"}) {
		t.Fatalf("source's request %q", got)
	}

	// The fork is stored under its id and resumes.
	id := fork.ID()
	fork.Close()
	again, err := conversation.New(ctx, a, t.TempDir(), &conversation.LocalOptions{ID: id, Backend: backend})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.State().Fields().Tags["title"] != "Alt" || again.State().Events().Len() != 5 {
		t.Fatalf("reopened fork: %v, %d events", again.State().Fields().Tags, again.State().Events().Len())
	}

	again.Close()

	// Unknown event, taken id.
	if _, err := src.Fork(ctx, &conversation.ForkOptions{FromEventID: "nope"}); !errors.Is(err, conversation.ErrNotFound) {
		t.Errorf("unknown event: %v", err)
	}
	if _, err := src.Fork(ctx, &conversation.ForkOptions{ID: id}); !errors.Is(err, conversation.ErrExists) {
		t.Errorf("taken id: %v", err)
	}
}

// A whole-log fork keeps the source's HEAD and, asked to, its metrics.
func TestForkWhole(t *testing.T) {
	usage := llmtest.Usage{PromptTokens: 100, CompletionTokens: 10}
	a, _ := pricedAgent(t, llmtest.Reply{Text: "one", Usage: usage})
	src, _ := newConv(t, a, nil)
	turn(t, src, "first")
	fork, err := src.Fork(ctx, &conversation.ForkOptions{KeepMetrics: true})
	if err != nil {
		t.Fatal(err)
	}
	defer fork.Close()
	sf, ff := src.State().Fields(), fork.State().Fields()
	if ff.LeafEventID != sf.LeafEventID || fork.State().Events().Len() != src.State().Events().Len() {
		t.Fatalf("leaf %s vs %s", ff.LeafEventID, sf.LeafEventID)
	}
	if ff.Stats.TotalCost() != sf.Stats.TotalCost() || len(ff.Tags) != 0 {
		t.Fatalf("cost %v vs %v, tags %v", ff.Stats.TotalCost(), sf.Stats.TotalCost(), ff.Tags)
	}
}

// Navigating to an earlier event then sending a message starts a new
// branch: the message's parent is that event, the model's request holds
// only the branch, and the abandoned events stay in the log.
func TestNavigateThenSend(t *testing.T) {
	a, p := newAgent(t, llmtest.Reply{Text: "one"}, llmtest.Reply{Text: "two"}, llmtest.Reply{Text: "three"})
	c, _ := newConv(t, a, nil)
	turn(t, c, "first")
	turn(t, c, "second")
	one := agentReply(t, c, "one")
	n := c.State().Events().Len()
	if err := c.NavigateTo(ctx, one); err != nil {
		t.Fatal(err)
	}
	if c.State().Fields().LeafEventID != one {
		t.Fatalf("leaf %s", c.State().Fields().LeafEventID)
	}
	turn(t, c, "other")
	if got := texts(p.Requests()[2]); !slices.Equal(got, []string{"first", "one", "other"}) {
		t.Fatalf("request after navigate %q", got)
	}
	log := logEvents(t, c)
	if len(log) != n+2 {
		t.Fatalf("%d events, want the %d before and 2 new", len(log), n)
	}
	if m := log[n].(*event.MessageEvent); event.TextOf(m.LLMMessage.Content) != "other" || m.ParentID != one {
		t.Fatalf("new message %q has parent %s, want %s", event.TextOf(m.LLMMessage.Content), m.ParentID, one)
	}
	branch, err := c.State().ActiveBranch()
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range branch {
		if e, _ := c.State().Events().Event(t.Context(), en.Index); e != nil {
			if m, ok := e.(*event.MessageEvent); ok && event.TextOf(m.LLMMessage.Content) == "second" {
				t.Fatal("the abandoned message is on the active branch")
			}
		}
	}
	if err := c.NavigateTo(ctx, "nope"); !errors.Is(err, conversation.ErrNotFound) {
		t.Errorf("unknown event: %v", err)
	}
	// An empty HEAD: the next event has no parent in the tree.
	if err := c.NavigateTo(ctx, ""); err != nil || !c.State().Fields().HeadIsEmpty {
		t.Fatalf("empty HEAD: %v", err)
	}
}

// title.Generate asks the agent's model, or a cheaper one given, for a
// title from the first user message; without a working model the message
// itself, shortened, is the title. SetTitle stores one.
func TestGenerateTitle(t *testing.T) {
	a, p := newAgent(t, llmtest.Reply{Text: "done"}, llmtest.Reply{Text: "  \"🐛 Fix the flaky login test\" "})
	c, _ := newConv(t, a, nil)
	turn(t, c, "The login test fails one time in ten, please fix it")
	got, err := title.Generate(ctx, c, 0)
	if err != nil || got != "🐛 Fix the flaky login test" {
		t.Fatalf("title %q (%v)", got, err)
	}
	req := p.Requests()[1]
	if len(req.Messages) != 2 || req.Messages[0].Role != event.RoleSystem || event.TextOf(req.Messages[1].Content) != "The login test fails one time in ten, please fix it" || len(req.Tools) != 0 {
		t.Fatalf("title request %+v", req.Messages)
	}

	// A cheaper model, and a cut to max length.
	cheap := llmtest.NewProvider(t, llmtest.Reply{Text: "✅ A title much longer than the limit allows"})
	l, err := llm.New(llm.DefaultConfig("openai/gpt-4o-mini"), &llm.Options{Provider: cheap})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := title.FromState(ctx, c.State(), l, 20); err != nil || got != "✅ A title much lo..." {
		t.Fatalf("cheap title %q (%v)", got, err)
	}
	if len(p.Requests()) != 2 || len(cheap.Requests()) != 1 {
		t.Fatalf("calls: agent %d, cheap %d", len(p.Requests()), len(cheap.Requests()))
	}

	// The model fails: the message is the title.
	broken := llmtest.NewProvider(t, llmtest.Reply{Fail: &llmtest.Failure{Status: 400}})
	lb, _ := llm.New(llm.DefaultConfig("openai/gpt-4o-mini"), &llm.Options{Provider: broken})
	if got, err := title.FromState(ctx, c.State(), lb, 30); err != nil || got != "The login test fails one ti..." {
		t.Fatalf("fallback title %q (%v)", got, err)
	}

	if err := c.SetTitle("Login flake"); err != nil || c.Title() != "Login flake" || c.State().Fields().Tags["title"] != "Login flake" {
		t.Fatalf("SetTitle: %v, %q", err, c.Title())
	}

	empty, _ := newConv(t, a, nil)
	if _, err := title.Generate(ctx, empty, 0); !errors.Is(err, title.ErrNoUserMessage) {
		t.Fatalf("no message: %v", err)
	}
}

// SwitchLLM moves the conversation to another model from the next call
// on, and the persisted agent says so; a profile of the user's settings
// is switched to by name.
func TestSwitchLLMAndProfile(t *testing.T) {
	a, p := newAgent(t, llmtest.Reply{Text: "one"}, llmtest.Reply{Text: "two"}, llmtest.Reply{Text: "three"})
	settings := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(settings, []byte(`{"model":"x","llm_profiles":{"fast":{"model":"anthropic/claude-haiku-4-5","temperature":0}}}`), 0o600)
	profiles, err := llm.LoadProfiles(settings)
	if err != nil || len(profiles) != 1 {
		t.Fatalf("profiles %v (%v)", profiles, err)
	}
	c, _ := newConv(t, a, &conversation.LocalOptions{Profiles: profiles})
	turn(t, c, "first")

	cfg := llm.DefaultConfig("openai/gpt-4o-mini")
	cfg.UsageID = "cheap"
	if err := c.SwitchLLM(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	turn(t, c, "second")
	reqs := p.Requests()
	if reqs[0].Config.Model != "openai/gpt-4o" || reqs[1].Config.Model != "openai/gpt-4o-mini" {
		t.Fatalf("models %s, %s", reqs[0].Config.Model, reqs[1].Config.Model)
	}
	if got := c.State().Fields().Agent.(*agent.Agent).LLM; got.Model != "openai/gpt-4o-mini" || got.UsageID != "cheap" {
		t.Fatalf("persisted agent's llm %s/%s", got.Model, got.UsageID)
	}
	if got := texts(reqs[1]); !slices.Equal(got, []string{"first", "one", "second"}) {
		t.Fatalf("history after the switch %q", got)
	}

	if err := c.SwitchProfile(ctx, "fast"); err != nil {
		t.Fatal(err)
	}
	turn(t, c, "third")
	last := p.Requests()[2]
	if last.Config.Model != "anthropic/claude-haiku-4-5" || last.Config.UsageID != "profile:fast" {
		t.Fatalf("profile model %s/%s", last.Config.Model, last.Config.UsageID)
	}
	stats := c.State().Fields().Stats.UsageToMetrics
	for _, id := range []string{"default", "cheap", "profile:fast"} {
		if stats[id] == nil {
			t.Errorf("no metrics for %s in %v", id, stats)
		}
	}
	if err := c.SwitchProfile(ctx, "nope"); !errors.Is(err, llm.ErrNoProfile) {
		t.Errorf("unknown profile: %v", err)
	}
}

// A critic scoring the finished run below its threshold gives the agent
// one more iteration with its feedback, up to the bound; then the run
// finishes.
func TestCriticAsksForOneMoreIteration(t *testing.T) {
	finish := func() llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}}
	}
	a, p := newAgent(t, finish(), finish())
	a.Critic = json.RawMessage(`{"kind":"AgentFinishedCritic","mode":"finish_and_message","iterative_refinement":{"success_threshold":0.6,"max_iterations":1}}`)
	c, _ := newConv(t, a, nil) // no git repository: an empty patch, score 0
	turn(t, c, "change something")
	if n := len(p.Requests()); n != 2 {
		t.Fatalf("%d calls, want the finish and one more iteration", n)
	}
	msgs := p.Requests()[1].Messages
	last := event.TextOf(msgs[len(msgs)-1].Content)
	if !strings.Contains(last, "0%") || !strings.Contains(last, "empty git patch") {
		t.Fatalf("follow-up %q", last)
	}
	if c.Status() != conversation.StatusFinished {
		t.Fatalf("status %s", c.Status())
	}
	if got := c.State().Fields().AgentState[agent.RefinementKey]; got != 1 && got != float64(1) {
		t.Fatalf("agent_state %v", c.State().Fields().AgentState)
	}

	// A passing critic lets the first finish stand.
	a2, p2 := newAgent(t, finish())
	a2.Critic = json.RawMessage(`{"kind":"PassCritic","iterative_refinement":{}}`)
	c2, _ := newConv(t, a2, nil)
	turn(t, c2, "go")
	if len(p2.Requests()) != 1 || c2.Status() != conversation.StatusFinished {
		t.Fatalf("%d calls, status %s", len(p2.Requests()), c2.Status())
	}
}

// A goal met on the second run: the judge (the agent's model) finds the
// first run short, its account of what is missing reaches the agent, and
// the second run satisfies it. Each status is recorded as the reference
// records it.
func TestGoalMetOnSecondRun(t *testing.T) {
	finish := func(msg string) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"` + msg + `"}`}}}
	}
	a, p := newAgent(t,
		finish("wrote calc.go"),
		llmtest.Reply{Text: `Verdict: {"score": 0.4, "complete": false, "missing": "no test was run"}`},
		finish("tests pass"),
		llmtest.Reply{Text: `{"score": 1.0, "complete": true, "missing": ""}`},
	)
	c, _ := newConv(t, a, nil)
	var seen []goal.Status
	out, err := goal.Run(context.Background(), c, "add calc.go with passing tests", &goal.Options{
		MaxIterations: 5, OnStatus: func(s goal.Status) { seen = append(seen, s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != goal.Complete || out.Iterations != 2 || !out.Verdict.Complete {
		t.Fatalf("outcome %+v", out)
	}
	reqs := p.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model calls, want run, judge, run, judge", len(reqs))
	}
	judge := event.TextOf(reqs[1].Messages[0].Content)
	if !strings.Contains(judge, "add calc.go with passing tests") || !strings.Contains(judge, "wrote calc.go") {
		t.Fatalf("judge prompt lacks the objective or the transcript:\n%s", judge)
	}
	if len(reqs[1].Tools) != 0 || strings.Contains(judge, "system:") {
		t.Fatalf("the judge got tools or the system prompt")
	}
	msgs := reqs[2].Messages
	if f := event.TextOf(msgs[len(msgs)-1].Content); !strings.Contains(f, "no test was run") {
		t.Fatalf("follow-up %q", f)
	}
	// Statuses: running, running after the first verdict, complete.
	if len(seen) != 3 || seen[0].Status != "running" || seen[1].Verdict == nil || seen[1].Verdict.Score != 0.4 ||
		seen[2].Status != "complete" || seen[2].Active || seen[2].Iteration != 2 {
		t.Fatalf("statuses %+v", seen)
	}
	var logged int
	for _, e := range logEvents(t, c) {
		if u, ok := e.(*event.ConversationStateUpdateEvent); ok && u.Key == goal.Key {
			logged++
		}
	}
	if logged != 3 {
		t.Fatalf("%d goal statuses in the log, want 3", logged)
	}
	if last, ok := goal.Last(t.Context(), c); !ok || last.Status != "complete" {
		t.Fatalf("last status %+v", last)
	}
	if _, err := goal.Resume(context.Background(), c, nil); !errors.Is(err, goal.ErrNoResumable) {
		t.Fatalf("resume of a complete goal: %v", err)
	}
}

// The bound stops a goal that is never met; a goal stopped by its context
// is recorded interrupted and resumes from the run it had reached.
func TestGoalCappedAndResumed(t *testing.T) {
	finish := llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}}
	no := llmtest.Reply{Text: `{"score": 0.1, "complete": false, "missing": "everything"}`}
	a, _ := newAgent(t, finish, no, finish, no)
	c, _ := newConv(t, a, nil)
	out, err := goal.Run(context.Background(), c, "impossible", &goal.Options{MaxIterations: 2})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != goal.Capped || out.Iterations != 2 {
		t.Fatalf("outcome %+v", out)
	}

	// A judge that fails interrupts the loop; resuming continues it with
	// its objective, bound and count.
	a2, p2 := newAgent(t, finish, llmtest.Reply{Fail: &llmtest.Failure{Status: 400}},
		finish, llmtest.Reply{Text: `{"score": 1, "complete": true}`})
	c2, _ := newConv(t, a2, nil)
	if _, err := goal.Run(context.Background(), c2, "do it", &goal.Options{MaxIterations: 3}); err == nil {
		t.Fatal("a failing judge did not fail the goal")
	}
	last, ok := goal.Last(t.Context(), c2)
	if !ok || last.Status != goal.Interrupted || last.Objective != "do it" || last.MaxIterations != 3 {
		t.Fatalf("last status %+v", last)
	}
	out, err = goal.Resume(context.Background(), c2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != goal.Complete || out.Iterations != 1 {
		t.Fatalf("resumed outcome %+v", out)
	}
	msgs := p2.Requests()[2].Messages
	if f := event.TextOf(msgs[len(msgs)-1].Content); !strings.Contains(f, "interrupted") {
		t.Fatalf("resume message %q", f)
	}
}

// The model-based critic (the reference's APIBasedCritic) sends the run,
// rendered as ChatML with the tools, to a classifier's /classify; a likely
// agent issue gets the agent one more iteration even with a good score,
// and the feedback names it. Its api_key stays out of the agent's JSON.
func TestAPIBasedCritic(t *testing.T) {
	var (
		mu    sync.Mutex
		calls []map[string]any
		auth  []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		calls = append(calls, body)
		auth = append(auth, r.Header.Get("Authorization"))
		n := len(calls)
		mu.Unlock()
		if r.URL.Path != "/vllm/classify" {
			http.NotFound(w, r)
			return
		}
		if n == 1 {
			http.Error(w, "busy", http.StatusInternalServerError) // retried
			return
		}
		// success, 3 sentiments, 13 agent issues (loop_behavior 6th),
		// 2 infrastructure, 8 user follow-ups.
		probs := make([]float64, 27)
		probs[0] = 0.9
		probs[4+5] = 0.8  // loop_behavior
		probs[4+8] = 0.3  // incomplete_implementation
		probs[4+13] = 0.1 // infrastructure_external_issue: below 0.2, not shown
		if n > 2 {
			probs[4+5] = 0
		}
		json.NewEncoder(w).Encode(map[string]any{"data": []any{map[string]any{"probs": probs, "num_classes": 27}}})
	}))
	defer srv.Close()
	finish := func() llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}}
	}
	a, p := newAgent(t, finish(), finish())
	a.Critic = json.RawMessage(`{"kind":"APIBasedCritic","server_url":"` + srv.URL + `/vllm","api_key":"sk-critic-123","model_name":"critic-v2",` +
		`"mode":"finish_and_message","iterative_refinement":{"success_threshold":0.6,"max_iterations":2}}`)
	c, _ := newConv(t, a, nil)
	turn(t, c, "change something")
	if n := len(p.Requests()); n != 2 {
		t.Fatalf("%d model calls, want the finish and one more iteration", n)
	}
	msgs := p.Requests()[1].Messages
	last := event.TextOf(msgs[len(msgs)-1].Content)
	if !strings.Contains(last, "90%") || !strings.Contains(last, "Loop Behavior (80%), Incomplete Implementation (30%)") || strings.Contains(last, "Infrastructure") {
		t.Fatalf("follow-up %q", last)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 3 || auth[1] != "Bearer sk-critic-123" || calls[1]["model"] != "critic-v2" {
		t.Fatalf("classify calls %d, auth %v, model %v", len(calls), auth, calls[1]["model"])
	}
	input, _ := calls[1]["input"].(string)
	for _, want := range []string{"<|im_start|>system\n", "<tools>\n{\"type\":\"function\",\"function\":{\"name\":\"finish\"",
		"<|im_start|>user\nchange something<|im_end|>\n"} {
		if !strings.Contains(input, want) {
			t.Fatalf("classifier input lacks %q:\n%s", want, input)
		}
	}

	// The key is redacted in the agent's JSON unless exposed.
	b, err := event.MarshalJSON(a)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "sk-critic-123") || !strings.Contains(string(b), `"api_key":"**********"`) || !strings.HasSuffix(string(b), `"kind":"Agent"}`) {
		t.Fatalf("agent JSON %s", b)
	}
	exposed, err := a.MapSecrets(func(s secret.String) (secret.String, error) { return s.Expose(), nil })
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := event.MarshalJSON(exposed); !strings.Contains(string(b), `"api_key":"sk-critic-123"`) {
		t.Fatalf("exposed agent JSON %s", b)
	}
}
