// Package agenttest is the suite every conversation.Agent passes: the
// contract a conversation relies on (doc/design.md, "Agent"), run through
// a conversation as an application would run the agent.
package agenttest

import (
	"errors"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/conversation/title"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

// Factory makes agents for the suite.
type Factory struct {
	// New returns an agent that answers each user message with one turn
	// that ends the run (status finished), for as many turns as the
	// suite takes (a few).
	New func(t *testing.T) conversation.Agent
}

// Run runs the suite.
func Run(t *testing.T, f Factory) {
	t.Run("Turns", func(t *testing.T) { testTurns(t, f) })
	t.Run("Persisted", func(t *testing.T) { testPersisted(t, f) })
	t.Run("Fork", func(t *testing.T) { testFork(t, f) })
	t.Run("Resume", func(t *testing.T) { testResume(t, f) })
	t.Run("Runner", func(t *testing.T) { testRunner(t, f) })
}

// foreign is an agent of another kind, for Verify to refuse.
type foreign struct {
	Name string `json:"name"`
}

func init() { event.RegisterKind[foreign]("AgenttestForeignAgent") }

func open(t *testing.T, a conversation.Agent, opts *conversation.LocalOptions) *conversation.LocalConversation {
	t.Helper()
	c, err := conversation.New(t.Context(), a, t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// turn sends text and runs the conversation to its end.
func turn(t *testing.T, c conversation.Conversation, text string) {
	t.Helper()
	ctx := t.Context()
	if err := c.SendMessage(ctx, event.UserMessage(text)); err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if st := c.State().Fields().ExecutionStatus; st != conversation.StatusFinished {
		t.Fatalf("status after a turn: %s, want finished", st)
	}
}

// count returns how many events of kind from source the log holds (any
// source if source is "").
func count(t *testing.T, c conversation.Conversation, kind string, source event.Source) int {
	t.Helper()
	n := 0
	for _, en := range c.State().Events().Entries() {
		if en.Kind == kind && (source == "" || en.Source == source) {
			n++
		}
	}
	return n
}

// testTurns: Start emits the one system prompt, each turn answers the
// user after their message, and the log reads back.
func testTurns(t *testing.T, f Factory) {
	c := open(t, f.New(t), nil)
	for i, text := range []string{"first", "second"} {
		turn(t, c, text)
		if n := count(t, c, event.KindSystemPrompt, ""); n != 1 {
			t.Errorf("turn %d: %d system prompts, want 1", i, n)
		}
		log := c.State().Events()
		last, err := log.Entry(log.Len() - 1)
		if err != nil {
			t.Fatal(err)
		}
		if last.Source != event.SourceAgent && last.Source != event.SourceEnvironment {
			t.Errorf("turn %d: the log ends with a %s from %s, not the agent's answer", i, last.Kind, last.Source)
		}
		for j := range log.Len() {
			if _, err := log.Event(t.Context(), j); err != nil {
				t.Fatalf("event %d does not read back: %v", j, err)
			}
		}
	}
}

// testPersisted: the agent is persisted as its kind, and Verify accepts
// a conversation persisted with it and refuses one of another kind.
func testPersisted(t *testing.T, f Factory) {
	a := f.New(t)
	data, err := event.MarshalKinded(a)
	if err != nil {
		t.Fatalf("the agent does not encode as a kind: %v", err)
	}
	back, err := event.DecodeKinded[conversation.Agent](data)
	if err != nil {
		t.Fatalf("the persisted agent does not decode: %v\n%s", err, data)
	}
	if err := a.Verify(back); err != nil {
		t.Errorf("Verify of the agent's own persisted form: %v", err)
	}
	if err := a.Verify(&foreign{Name: "x"}); err == nil {
		t.Error("Verify accepted an agent of another kind")
	}
}

// testFork: ForkAgent returns an agent of the same kind.
func testFork(t *testing.T, f Factory) {
	a := f.New(t)
	b, err := a.ForkAgent()
	if err != nil {
		t.Fatalf("ForkAgent: %v", err)
	}
	ka, _ := event.KindOf(a)
	kb, ok := event.KindOf(b)
	if !ok || kb != ka {
		t.Errorf("ForkAgent returned kind %q, want %q", kb, ka)
	}
}

// testResume: a conversation closed after a turn resumes with the same
// agent, without a second system prompt, and takes another turn.
func testResume(t *testing.T, f Factory) {
	a := f.New(t)
	backend := filestore.NewBackend(t.TempDir(), nil)
	work := t.TempDir()
	c, err := conversation.New(t.Context(), a, work, &conversation.LocalOptions{Backend: backend})
	if err != nil {
		t.Fatal(err)
	}
	turn(t, c, "before")
	id, n := c.ID(), c.State().Events().Len()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c2, err := conversation.New(t.Context(), a, work, &conversation.LocalOptions{Backend: backend, ID: id})
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	defer c2.Close()
	if got := c2.State().Events().Len(); got < n {
		t.Fatalf("resumed with %d events, %d were stored", got, n)
	}
	turn(t, c2, "after")
	if k := count(t, c2, event.KindSystemPrompt, ""); k != 1 {
		t.Errorf("%d system prompts after resume, want 1", k)
	}
	if k := count(t, c2, event.KindMessage, event.SourceUser); k != 2 {
		t.Errorf("%d user messages after resume, want 2", k)
	}
}

// testRunner: what the conversation uses of a runner besides its steps
// answers as the contract says, whatever the agent can do: a model lent
// or none, a model switch or ErrCannotSwitch, a condensation or
// ErrCannotCondense, and a title either way.
func testRunner(t *testing.T, f Factory) {
	a := f.New(t)
	c := open(t, a, nil)
	turn(t, c, "a task to name")
	ctx := t.Context()

	got, err := title.Generate(ctx, c, 0)
	if err != nil || got == "" {
		t.Errorf("title.Generate = %q, %v", got, err)
	}
	m, err := c.AgentModel(ctx)
	if err != nil {
		t.Errorf("AgentModel: %v", err)
	}

	switch err := c.Condense(ctx); {
	case errors.Is(err, conversation.ErrCannotCondense):
	case err != nil:
		t.Errorf("Condense: %v", err)
	}

	cfg := llm.DefaultConfig("openai/gpt-4o-mini")
	switch err := c.SwitchLLM(ctx, cfg); {
	case errors.Is(err, conversation.ErrCannotSwitch):
		if _, err := event.MarshalKinded(c.State().Fields().Agent); err != nil {
			t.Errorf("the persisted agent after a refused switch: %v", err)
		}
	case err != nil:
		t.Errorf("SwitchLLM: %v", err)
	case m == nil:
		t.Error("SwitchLLM succeeded for a runner that lends no model")
	default:
		// The persisted agent records the switch.
		if got := c.State().Fields().Agent; got == nil {
			t.Error("no persisted agent after SwitchLLM")
		} else if kind, _ := event.KindOf(got); kind != kindOf(a) {
			t.Errorf("persisted agent of kind %q after SwitchLLM, want %q", kind, kindOf(a))
		}
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func kindOf(a any) string {
	k, _ := event.KindOf(a)
	return k
}
