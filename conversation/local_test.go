package conversation_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/gohands/gohands/llm"
	"os"
	"strings"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/plugin"
)

// echoAgent is the smallest Agent: it answers every user message with its
// text and finishes. fail makes its step fail; panic makes it panic.
type echoAgent struct {
	Greeting string `json:"greeting"`
	fail     error
	panic    bool
	// hold, when not nil, keeps the step from returning after it stored
	// "finished" until it is closed.
	hold chan struct{}
}

func init() { event.RegisterKind[echoAgent]("EchoTestAgent") }

func (a *echoAgent) Start(ctx context.Context, s *conversation.Session) (conversation.Started, error) {
	return conversation.Started{Runner: &echoRunner{a: a, s: s}}, nil
}

func (a *echoAgent) Verify(persisted any) error {
	if _, ok := persisted.(*echoAgent); !ok {
		return fmt.Errorf("persisted agent %T is not an echoAgent", persisted)
	}
	return nil
}

func (a *echoAgent) ForkAgent() (conversation.Agent, error)       { return a, nil }
func (a *echoAgent) Marketplaces() ([]plugin.Registration, error) { return nil, nil }
func (a *echoAgent) AddPlugins(*plugin.Set) (conversation.Agent, error) {
	return nil, conversation.ErrUnsupported
}

type echoRunner struct {
	a *echoAgent
	s *conversation.Session
}

func (r *echoRunner) Step(ctx context.Context) error {
	if r.a.panic {
		panic("broken agent")
	}
	if r.a.fail != nil {
		return r.a.fail
	}
	view, err := r.s.View()
	if err != nil {
		return err
	}
	last := view[len(view)-1].(*event.MessageEvent)
	reply := event.Message{Role: event.RoleAssistant, Content: event.List[event.Content]{
		event.Text(r.a.Greeting + event.TextOf(last.LLMMessage.Content))}}
	if err := r.s.Emit(&event.MessageEvent{Base: event.NewBase(event.SourceAgent), LLMMessage: reply}); err != nil {
		return err
	}
	if err := r.s.SetStatus(conversation.StatusFinished); err != nil {
		return err
	}
	if r.a.hold != nil {
		<-r.a.hold
	}
	return nil
}

func (r *echoRunner) Ask(ctx context.Context, view []event.Event, q string) (string, error) {
	return fmt.Sprintf("%d events so far", len(view)), nil
}

func (r *echoRunner) PrepareMessage(context.Context, *event.MessageEvent) error { return nil }
func (r *echoRunner) Model() llm.Model                                          { return nil }
func (r *echoRunner) SaveStats() error                                          { return nil }
func (r *echoRunner) Close() error                                              { return nil }

func (r *echoRunner) SwitchLLM(llm.Config) (conversation.Agent, error) {
	return nil, conversation.ErrCannotSwitch
}

// A conversation drives any Agent; this one echoes.
func ExampleNew() {
	ctx := context.Background()
	work, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(work)
	conv, err := conversation.New(ctx, &echoAgent{Greeting: "you said: "}, work, nil)
	if err != nil {
		panic(err)
	}
	defer conv.Close()
	stop := conv.Subscribe(func(e event.Event) {
		if m, ok := e.(*event.MessageEvent); ok {
			fmt.Printf("%s: %s\n", m.Source, event.TextOf(m.LLMMessage.Content))
		}
	})
	conv.SendMessage(ctx, event.UserMessage("hello"))
	if err := conv.Run(ctx); err != nil {
		panic(err)
	}
	stop() // returns once the subscriber has seen every event so far
	answer, _ := conv.AskAgent(ctx, "how long is this?")
	fmt.Println(conv.State().Fields().ExecutionStatus, answer)
	// Output:
	// user: hello
	// agent: you said: hello
	// finished 2 events so far
}

type codedError struct{}

func (codedError) Error() string     { return "quota gone" }
func (codedError) ErrorCode() string { return "MaxBudgetReached" }

func TestStepFailureEndsInError(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    *echoAgent
		code string
	}{
		{"error", &echoAgent{fail: errors.New("boom")}, "AgentError"},
		{"coded error", &echoAgent{fail: codedError{}}, "MaxBudgetReached"},
		{"panic", &echoAgent{panic: true}, "AgentError"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := conversation.New(context.Background(), tc.a, t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SendMessage(context.Background(), event.UserMessage("hi"))
			err = c.Run(context.Background())
			var re *conversation.RunError
			if !errors.As(err, &re) || re.Code != tc.code {
				t.Fatalf("Run: %v", err)
			}
			if c.Status() != conversation.StatusError {
				t.Fatalf("status %s", c.Status())
			}
			log := c.State().Events()
			e, _ := log.Event(t.Context(), log.Len()-1)
			if ce, ok := e.(*event.ConversationErrorEvent); !ok || ce.Code != tc.code {
				t.Fatalf("last event %#v", e)
			}
			// Running again retries from the error.
			tc.a.fail, tc.a.panic = nil, false
			if err := c.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestPauseIdleConversation(t *testing.T) {
	c, err := conversation.New(context.Background(), &echoAgent{}, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Pause(t.Context()); err != nil {
		t.Fatal(err)
	}
	if c.Status() != conversation.StatusPaused {
		t.Fatalf("status %s", c.Status())
	}
	e, _ := c.State().Events().Event(t.Context(), 0)
	if _, ok := e.(*event.PauseEvent); !ok {
		t.Fatalf("event %T", e)
	}
	// Pausing again changes nothing.
	c.Pause(t.Context())
	if n := c.State().Events().Len(); n != 1 {
		t.Fatalf("%d events", n)
	}
}

func TestNewErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := conversation.New(ctx, nil, t.TempDir(), nil); !errors.Is(err, conversation.ErrNoAgent) {
		t.Fatalf("no agent: %v", err)
	}
	if _, err := conversation.New(ctx, &echoAgent{}, t.TempDir(), &conversation.LocalOptions{ID: "not-a-uuid"}); err == nil || !strings.Contains(err.Error(), "not-a-uuid") {
		t.Fatalf("bad id: %v", err)
	}
	// A stored conversation of another agent kind cannot be resumed by a
	// nil agent unless the stored one can run.
	dir := t.TempDir()
	c, err := conversation.New(ctx, &echoAgent{Greeting: "x"}, t.TempDir(), &conversation.LocalOptions{Backend: filestore.NewBackend(dir, nil)})
	if err != nil {
		t.Fatal(err)
	}
	id := c.ID()
	c.Close()
	c2, err := conversation.New(ctx, nil, t.TempDir(), &conversation.LocalOptions{Backend: filestore.NewBackend(dir, nil), ID: id})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if a := c2.State().Fields().Agent.(*echoAgent); a.Greeting != "x" {
		t.Fatalf("persisted agent %+v", a)
	}
}
