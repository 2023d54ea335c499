// Package conversationtest is the conformance suite of
// conversation.Conversation: the same scenarios, against a scripted model,
// for every kind of conversation (a LocalConversation, a remote one on an
// agent server).
//
// A test calls Run with a function that opens a new conversation of the
// kind under test:
//
//	conversationtest.Run(t, func(t *testing.T, s *conversationtest.Setup) conversation.Conversation {
//		c, err := conversation.New(t.Context(), agent.New(s.LLM, s.Tools, nil), s.WorkDir, nil)
//		...
//	})
package conversationtest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/goal"
	"github.com/gohands/gohands/conversation/title"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/plugin"
	"github.com/gohands/gohands/security"
	"github.com/gohands/gohands/tool"
)

// Setup is what a scenario asks of the conversation it opens.
type Setup struct {
	// LLM configures the agent's model: a scripted one (package llmtest)
	// answering for the scenario.
	LLM llm.Config
	// Tools are the agent's tools (the terminal).
	Tools []tool.Spec
	// WorkDir is a new, empty directory to work in.
	WorkDir string
	// AgentContext, if set, is the agent's agent_context (it registers
	// the marketplace of the LoadPlugin scenarios).
	AgentContext json.RawMessage
	// Plugins, if set, are the conversation's start plugins
	// (conversation.LocalOptions.Plugins, remote.Options.Plugins).
	Plugins []plugin.Source
}

// Open opens a new conversation of the kind under test, with an agent of
// s.LLM and s.Tools working in s.WorkDir. The suite closes it.
type Open func(t *testing.T, s *Setup) conversation.Conversation

// Scripted replies the scenarios recognise.
const (
	// Title is the scripted model's answer to a title request.
	Title = "🧪 Conformance"
	// answer is the scripted model's reply that ends a run.
	answer = "conformance done"
)

// Run runs every scenario on conversations open opens, each in a subtest.
func Run(t *testing.T, open Open) {
	for _, sc := range []struct {
		name string
		run  func(t *testing.T, open Open)
	}{
		{"SendAndRun", testSendAndRun},
		{"Stats", testStats},
		{"PauseIdle", testPauseIdle},
		{"InterruptRun", testInterruptRun},
		{"Reject", testReject},
		{"Confirm", testConfirm},
		{"AskAgent", testAskAgent},
		{"NavigateAndFork", testNavigateAndFork},
		{"Title", testTitle},
		{"SwitchLLM", testSwitchLLM},
		{"CondenseWithoutCondenser", testCondenseWithoutCondenser},
		{"Goal", testGoal},
		{"Closed", testClosed},
		{"LoadPlugin", testLoadPlugin},
		{"LoadPluginDuringRun", testLoadPluginDuringRun},
		{"StartWithPlugins", testStartWithPlugins},
	} {
		t.Run(sc.name, func(t *testing.T) { sc.run(t, open) })
	}
}

// model is a scripted model: agent steps take the queued replies in
// order (a final answer when none is left); title and judge requests are
// recognised by their prompts.
type model struct {
	srv    *llmtest.Server
	mu     sync.Mutex
	queue  []llmtest.Reply
	judged atomic.Int32
	// hold, if set, delays the agent's steps until the client goes away.
	hold atomic.Bool
	// gate, if set, holds the next agent step's request: it is taken,
	// entered is closed and the reply waits for release to be closed.
	gate atomic.Pointer[gate]
}

type gate struct{ entered, release chan struct{} }

var usage = llmtest.Usage{PromptTokens: 100, CompletionTokens: 7}

func newModel(t *testing.T, replies ...llmtest.Reply) *model {
	m := &model{queue: replies}
	m.srv = llmtest.NewResponder(t, func(req llmtest.Request) (llmtest.Reply, error) {
		body := string(req.RawBody)
		switch {
		case strings.Contains(body, "short title"):
			return llmtest.Reply{Text: Title, Usage: usage}, nil
		case strings.Contains(body, "has reached an objective"):
			if m.judged.Add(1) == 1 {
				return llmtest.Reply{Text: `{"score": 0.4, "complete": false, "missing": "the proof"}`, Usage: usage}, nil
			}
			return llmtest.Reply{Text: `{"score": 1.0, "complete": true}`, Usage: usage}, nil
		}
		if g := m.gate.Swap(nil); g != nil {
			close(g.entered)
			<-g.release
		}
		if m.hold.Load() {
			return llmtest.Reply{Text: answer, Delay: time.Hour}, nil
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		if len(m.queue) == 0 {
			return llmtest.Reply{Text: answer, Usage: usage}, nil
		}
		r := m.queue[0]
		m.queue = m.queue[1:]
		if r.Usage == (llmtest.Usage{}) {
			r.Usage = usage
		}
		return r, nil
	}, nil)
	return m
}

// setup returns the Setup of a conversation of m.
func (m *model) setup(t *testing.T) *Setup {
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.BaseURL, cfg.UsageID, cfg.NumRetries = m.srv.URL+"/v1", "agent", 0
	in, out := 1e-6, 2e-6
	cfg.InputCostPerToken, cfg.OutputCostPerToken = &in, &out
	return &Setup{LLM: cfg, Tools: []tool.Spec{{Name: "terminal"}}, WorkDir: t.TempDir()}
}

// start opens a conversation of m's agent; it is closed when the test
// ends.
func start(t *testing.T, open Open, m *model) conversation.Conversation {
	t.Helper()
	c := open(t, m.setup(t))
	t.Cleanup(func() { c.Close() })
	return c
}

// turn sends text and runs the conversation until the run ends.
func turn(t *testing.T, c conversation.Conversation, text string) {
	t.Helper()
	if err := c.SendMessage(t.Context(), event.UserMessage(text)); err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	if err := c.Run(t.Context()); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// events decodes the conversation's log.
func events(t *testing.T, c conversation.Conversation) []event.Event {
	t.Helper()
	log := c.State().Events()
	out := make([]event.Event, 0, log.Len())
	for i := range log.Len() {
		e, err := log.Event(t.Context(), i)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		out = append(out, e)
	}
	return out
}

// messages returns the texts of the log's messages from source.
func messages(t *testing.T, c conversation.Conversation, source event.Source) []string {
	var out []string
	for _, e := range events(t, c) {
		if m, ok := e.(*event.MessageEvent); ok && m.Source == source {
			out = append(out, event.TextOf(m.LLMMessage.Content))
		}
	}
	return out
}

// eventually waits until cond holds: what a remote conversation hears of
// the server arrives a moment after the call that caused it. The deadline
// only guards against a hang.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func wantStatus(t *testing.T, c conversation.Conversation, want conversation.ExecutionStatus) {
	t.Helper()
	eventually(t, "status "+string(want), func() bool { return c.Status() == want })
	if got := c.State().Fields().ExecutionStatus; got != want {
		t.Fatalf("State().Fields().ExecutionStatus = %s, Status() = %s", got, want)
	}
}

// A message sent and a run: the log holds the message and the agent's
// answer, in order, with unique ids; subscribers get what is committed
// after they subscribe.
func testSendAndRun(t *testing.T, open Open) {
	m := newModel(t)
	c := start(t, open, m)
	if c.ID() == "" {
		t.Fatal("no id")
	}
	var mu sync.Mutex
	var seen []string
	got := make(chan struct{}, 1)
	unsubscribe := c.Subscribe(func(e event.Event) {
		if msg, ok := e.(*event.MessageEvent); ok && msg.Source == event.SourceAgent {
			mu.Lock()
			seen = append(seen, event.TextOf(msg.LLMMessage.Content))
			mu.Unlock()
			select {
			case got <- struct{}{}:
			default:
			}
		}
	})
	defer unsubscribe()
	turn(t, c, "hello")
	if got := c.Status(); got != conversation.StatusFinished {
		t.Fatalf("status after the run %s, want finished", got)
	}
	if got := messages(t, c, event.SourceUser); !slices.Equal(got, []string{"hello"}) {
		t.Fatalf("user messages %q", got)
	}
	if got := messages(t, c, event.SourceAgent); !slices.Equal(got, []string{answer}) {
		t.Fatalf("agent messages %q", got)
	}
	ids := map[string]bool{}
	user, agent := -1, -1
	for i, e := range events(t, c) {
		if ids[e.EventBase().ID] {
			t.Fatalf("event id %s twice", e.EventBase().ID)
		}
		ids[e.EventBase().ID] = true
		if idx, ok := c.State().Events().Lookup(e.EventBase().ID); !ok || idx != i {
			t.Fatalf("Lookup(%s) = %d, %v; want %d", e.EventBase().ID, idx, ok, i)
		}
		if msg, ok := e.(*event.MessageEvent); ok {
			if msg.Source == event.SourceUser {
				user = i
			} else {
				agent = i
			}
		}
	}
	if user < 0 || agent < user {
		t.Fatalf("the user's message at %d, the agent's at %d", user, agent)
	}
	select {
	case <-got:
	case <-time.After(time.Minute):
		t.Fatal("the subscriber got no agent message")
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(seen, []string{answer}) {
		t.Fatalf("the subscriber saw %q", seen)
	}

	// A second message continues the conversation.
	turn(t, c, "again")
	if got := messages(t, c, event.SourceUser); !slices.Equal(got, []string{"hello", "again"}) {
		t.Fatalf("user messages %q", got)
	}
}

// The model's usage and cost are in the state's stats after a run.
func testStats(t *testing.T, open Open) {
	m := newModel(t)
	c := start(t, open, m)
	turn(t, c, "count")
	turn(t, c, "count again")
	var prompt, completion int
	eventually(t, "the stats of two calls", func() bool {
		prompt, completion = c.State().Fields().Stats.Tokens()
		return prompt >= 2*usage.PromptTokens
	})
	if prompt != 2*usage.PromptTokens || completion != 2*usage.CompletionTokens {
		t.Fatalf("tokens %d+%d, want %d+%d", prompt, completion, 2*usage.PromptTokens, 2*usage.CompletionTokens)
	}
	stats := c.State().Fields().Stats
	if stats.UsageToMetrics["agent"] == nil {
		t.Fatalf("no metrics for usage id agent: %v", stats.UsageToMetrics)
	}
	if cost := stats.TotalCost(); cost <= 0 {
		t.Fatalf("cost %v", cost)
	}
}

// Pausing an idle conversation pauses it; a message and a run go on.
func testPauseIdle(t *testing.T, open Open) {
	c := start(t, open, newModel(t))
	if err := c.SendMessage(t.Context(), event.UserMessage("wait")); err != nil {
		t.Fatal(err)
	}
	if err := c.Pause(t.Context()); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, c, conversation.StatusPaused)
	if err := c.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := c.Status(); got != conversation.StatusFinished {
		t.Fatalf("status %s after running a paused conversation", got)
	}
}

// An interrupt during a run stops it at once: Run returns, the status is
// paused. A second Run meanwhile and a navigation fail with ErrRunning.
func testInterruptRun(t *testing.T, open Open) {
	m := newModel(t)
	c := start(t, open, m)
	turn(t, c, "first")
	m.hold.Store(true)
	if err := c.SendMessage(t.Context(), event.UserMessage("this one hangs")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(t.Context()) }()
	wantStatus(t, c, conversation.StatusRunning)
	if err := c.Run(t.Context()); !errors.Is(err, conversation.ErrRunning) {
		t.Fatalf("a second Run: %v, want ErrRunning", err)
	}
	if err := c.NavigateTo(t.Context(), ""); !errors.Is(err, conversation.ErrRunning) {
		t.Fatalf("NavigateTo during a run: %v, want ErrRunning", err)
	}
	if err := c.Interrupt(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the interrupted Run: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Run did not return after the interrupt")
	}
	wantStatus(t, c, conversation.StatusPaused)
	m.hold.Store(false)
	if err := c.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := c.Status(); got != conversation.StatusFinished {
		t.Fatalf("status %s after the run that followed", got)
	}
}

// echo is a terminal call the confirmation scenarios ask about.
var echo = llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"echo conformance-ran"}`}}}

// waitForConfirmation runs c under AlwaysConfirm until its action waits,
// and returns the action.
func waitForConfirmation(t *testing.T, c conversation.Conversation) *event.ActionEvent {
	t.Helper()
	if err := c.SetConfirmationPolicy(t.Context(), &security.AlwaysConfirm{}); err != nil {
		t.Fatal(err)
	}
	turn(t, c, "run it")
	if got := c.Status(); got != conversation.StatusWaitingForConfirmation {
		t.Fatalf("status %s, want waiting_for_confirmation", got)
	}
	pending, err := c.State().PendingActions()
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 || pending[0].ToolName != "terminal" {
		t.Fatalf("pending actions %v", pending)
	}
	return pending[0]
}

// A rejected action is answered with the reason and never runs; the
// conversation becomes idle.
func testReject(t *testing.T, open Open) {
	c := start(t, open, newModel(t, echo))
	action := waitForConfirmation(t, c)
	if err := c.RejectPendingActions(t.Context(), "not now"); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, c, conversation.StatusIdle)
	var rejected *event.UserRejectObservation
	for _, e := range events(t, c) {
		if r, ok := e.(*event.UserRejectObservation); ok {
			rejected = r
		}
		if o, ok := e.(*event.ObservationEvent); ok && o.ActionID == action.ID {
			t.Fatalf("the rejected action ran: %v", o)
		}
	}
	if rejected == nil || rejected.ActionID != action.ID || rejected.RejectionReason != "not now" {
		t.Fatalf("rejection %+v", rejected)
	}
	if pending, err := c.State().PendingActions(); err != nil || len(pending) != 0 {
		t.Fatalf("pending after the rejection: %v, %v", pending, err)
	}
}

// Running a conversation waiting for confirmation runs the action.
func testConfirm(t *testing.T, open Open) {
	c := start(t, open, newModel(t, echo))
	action := waitForConfirmation(t, c)
	if err := c.SetConfirmationPolicy(t.Context(), &security.NeverConfirm{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := c.Status(); got != conversation.StatusFinished {
		t.Fatalf("status %s after confirming", got)
	}
	var ran bool
	for _, e := range events(t, c) {
		if o, ok := e.(*event.ObservationEvent); ok && o.ActionID == action.ID {
			raw, _ := json.Marshal(o.Observation)
			ran = strings.Contains(string(raw), "conformance-ran")
		}
	}
	if !ran {
		t.Fatal("no observation of the confirmed command's output")
	}
}

// AskAgent answers from the history without adding to it.
func testAskAgent(t *testing.T, open Open) {
	m := newModel(t)
	c := start(t, open, m)
	turn(t, c, "hello")
	n := c.State().Events().Len()
	m.mu.Lock()
	m.queue = append(m.queue, llmtest.Reply{Text: "the side answer"})
	m.mu.Unlock()
	got, err := c.AskAgent(t.Context(), "a side question?")
	if err != nil {
		t.Fatal(err)
	}
	if got != "the side answer" {
		t.Fatalf("AskAgent = %q", got)
	}
	if c.State().Events().Len() != n {
		t.Fatalf("AskAgent added %d events", c.State().Events().Len()-n)
	}
}

// NavigateTo moves the HEAD; the next message branches from there. A fork
// from an event is a new conversation with the branch up to it.
func testNavigateAndFork(t *testing.T, open Open) {
	c := start(t, open, newModel(t))
	turn(t, c, "one")
	turn(t, c, "two")
	var first string
	for _, e := range events(t, c) {
		if msg, ok := e.(*event.MessageEvent); ok && msg.Source == event.SourceAgent {
			first = msg.ID
			break
		}
	}
	if err := c.NavigateTo(t.Context(), "no-such-event"); !errors.Is(err, conversation.ErrNotFound) {
		t.Fatalf("NavigateTo an unknown event: %v, want ErrNotFound", err)
	}
	if err := c.NavigateTo(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the HEAD at the first answer", func() bool { return c.State().Fields().LeafEventID == first })
	turn(t, c, "three")
	branch, err := c.State().ActiveBranch()
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, en := range branch {
		if e, err := c.State().Events().Event(t.Context(), en.Index); err == nil {
			if msg, ok := e.(*event.MessageEvent); ok && msg.Source == event.SourceUser {
				texts = append(texts, event.TextOf(msg.LLMMessage.Content))
			}
		}
	}
	if !slices.Equal(texts, []string{"one", "three"}) {
		t.Fatalf("the active branch's user messages %q, want one and three", texts)
	}

	fork, err := c.Fork(t.Context(), &conversation.ForkOptions{FromEventID: first, Title: "Alt"})
	if err != nil {
		t.Fatal(err)
	}
	defer fork.Close()
	if fork.ID() == c.ID() {
		t.Fatal("the fork has the source's id")
	}
	if _, ok := fork.State().Events().Lookup(first); !ok {
		t.Fatal("the fork lacks the event it was forked from")
	}
	if got := messages(t, fork, event.SourceUser); !slices.Equal(got, []string{"one"}) {
		t.Fatalf("the fork's user messages %q", got)
	}
	if _, err := c.Fork(t.Context(), &conversation.ForkOptions{FromEventID: "no-such-event"}); !errors.Is(err, conversation.ErrNotFound) {
		t.Fatalf("a fork from an unknown event: %v, want ErrNotFound", err)
	}
	turn(t, fork, "on the fork")
	if got := messages(t, c, event.SourceUser); slices.Contains(got, "on the fork") {
		t.Fatal("the fork's message reached the source")
	}
}

// A title is made by the agent's model from the first user message; a
// conversation without one has none.
func testTitle(t *testing.T, open Open) {
	c := start(t, open, newModel(t))
	if _, err := title.Generate(t.Context(), c, 0); !errors.Is(err, title.ErrNoUserMessage) {
		t.Fatalf("Generate without a message: %v, want ErrNoUserMessage", err)
	}
	turn(t, c, "make the login test pass")
	got, err := title.Generate(t.Context(), c, 40)
	if err != nil {
		t.Fatal(err)
	}
	if got != Title {
		t.Fatalf("title %q, want %q", got, Title)
	}
}

// A goal loop judged incomplete once and complete the next time ends
// complete after two judged runs, telling its statuses; there is then no
// goal to resume.
func testGoal(t *testing.T, open Open) {
	m := newModel(t)
	c := start(t, open, m)
	var statuses []string
	var mu sync.Mutex
	out, err := goal.Run(t.Context(), c, "prove it", &goal.Options{MaxIterations: 3, OnStatus: func(s goal.Status) {
		mu.Lock()
		statuses = append(statuses, s.Status)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != goal.Complete || out.Iterations != 2 || !out.Verdict.Complete {
		t.Fatalf("outcome %+v", out)
	}
	mu.Lock()
	if want := []string{goal.Running, goal.Running, goal.Complete}; !slices.Equal(statuses, want) {
		t.Fatalf("statuses %q, want %q", statuses, want)
	}
	mu.Unlock()
	if n := m.judged.Load(); n != 2 {
		t.Fatalf("judged %d times", n)
	}
	if got := messages(t, c, event.SourceUser); len(got) != 2 || got[0] != "prove it" {
		t.Fatalf("user messages %q: the objective, then the judge's follow-up", got)
	}
	if last, ok := goal.Last(t.Context(), c); !ok || last.Status != goal.Complete || last.Iteration != 2 {
		t.Fatalf("the log's last goal status: %+v, %v", last, ok)
	}
	if _, err := goal.Resume(t.Context(), c, nil); !errors.Is(err, goal.ErrNoResumable) {
		t.Fatalf("Resume after a complete goal: %v, want ErrNoResumable", err)
	}
}

// A closed conversation refuses what it is asked with
// ErrConversationClosed.
func testClosed(t *testing.T, open Open) {
	c := start(t, open, newModel(t))
	turn(t, c, "hello")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for name, err := range map[string]error{
		"SendMessage": c.SendMessage(ctx, event.UserMessage("late")),
		"Run":         c.Run(ctx),
		"NavigateTo":  c.NavigateTo(ctx, ""),
	} {
		if !errors.Is(err, conversation.ErrConversationClosed) {
			t.Errorf("%s after Close: %v, want ErrConversationClosed", name, err)
		}
	}
	if _, err := title.Generate(ctx, c, 0); !errors.Is(err, conversation.ErrConversationClosed) {
		t.Errorf("title.Generate after Close: %v, want ErrConversationClosed", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

// An agent without a condenser acting on requests cannot condense.
func testCondenseWithoutCondenser(t *testing.T, open Open) {
	c := start(t, open, newModel(t))
	turn(t, c, "hello")
	n := c.State().Events().Len()
	if err := c.Condense(t.Context()); !errors.Is(err, conversation.ErrCannotCondense) {
		t.Fatalf("Condense: %v, want ErrCannotCondense", err)
	}
	if got := c.State().Events().Len(); got != n {
		t.Fatalf("the refused condensation added %d events", got-n)
	}
}

// A model switched to answers from the next run on, its usage counted
// under its own usage id; an unknown profile is llm.ErrNoProfile.
func testSwitchLLM(t *testing.T, open Open) {
	m := newModel(t)
	s := m.setup(t)
	c := open(t, s)
	t.Cleanup(func() { c.Close() })
	turn(t, c, "before")
	cfg := s.LLM
	cfg.UsageID = "switched"
	if err := c.SwitchLLM(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	turn(t, c, "after")
	eventually(t, "the switched model's metrics", func() bool {
		sm := c.State().Fields().Stats.UsageToMetrics["switched"]
		return sm != nil && sm.AccumulatedTokenUsage != nil && sm.AccumulatedTokenUsage.PromptTokens == usage.PromptTokens
	})
	if am := c.State().Fields().Stats.UsageToMetrics["agent"]; am == nil || am.AccumulatedTokenUsage == nil || am.AccumulatedTokenUsage.PromptTokens != usage.PromptTokens {
		t.Fatalf("the first model's metrics %+v", am)
	}
	if err := c.SwitchProfile(t.Context(), "no-such-profile"); !errors.Is(err, llm.ErrNoProfile) {
		t.Fatalf("SwitchProfile to an unknown profile: %v, want llm.ErrNoProfile", err)
	}
}
