package conversation_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/gohands/gohands/llm"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/storetest"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/plugin"
	"github.com/gohands/gohands/pubsub"
)

// chattyAgent emits N agent messages in one step and finishes; with block
// set it emits one and then waits for its step to be cancelled.
type chattyAgent struct {
	N     int `json:"n"`
	block bool
}

func init() { event.RegisterKind[chattyAgent]("ChattyTestAgent") }

func (a *chattyAgent) Start(ctx context.Context, s *conversation.Session) (conversation.Started, error) {
	return conversation.Started{Runner: &chattyRunner{a: a, s: s}}, nil
}

func (a *chattyAgent) Verify(any) error                             { return nil }
func (a *chattyAgent) ForkAgent() (conversation.Agent, error)       { return a, nil }
func (a *chattyAgent) Marketplaces() ([]plugin.Registration, error) { return nil, nil }
func (a *chattyAgent) AddPlugins(*plugin.Set) (conversation.Agent, error) {
	return nil, conversation.ErrUnsupported
}

type chattyRunner struct {
	a *chattyAgent
	s *conversation.Session
}

func (r *chattyRunner) Step(ctx context.Context) error {
	for i := range r.a.N {
		msg := &event.MessageEvent{Base: event.NewBase(event.SourceAgent), LLMMessage: event.Message{
			Role: event.RoleAssistant, Content: []event.Content{event.Text(fmt.Sprintf("message %d", i))}}}
		if err := r.s.Emit(msg); err != nil {
			return err
		}
		if r.a.block {
			<-ctx.Done()
			return ctx.Err()
		}
	}
	return r.s.SetStatus(conversation.StatusFinished)
}

func (r *chattyRunner) Ask(context.Context, []event.Event, string) (string, error) { return "", nil }
func (r *chattyRunner) Close() error                                               { return nil }
func (r *chattyRunner) PrepareMessage(context.Context, *event.MessageEvent) error  { return nil }
func (r *chattyRunner) Model() llm.Model                                           { return nil }
func (r *chattyRunner) SaveStats() error                                           { return nil }

func (r *chattyRunner) SwitchLLM(llm.Config) (conversation.Agent, error) {
	return nil, conversation.ErrCannotSwitch
}

// A subscriber that stops reading does not slow the agent: the run
// commits all its events while the subscriber is stalled (in a synctest
// bubble, a Run waiting for it would be a deadlock the test reports), the
// stalled subscriber is dropped and can tell. (That a live subscriber
// gets everything is pubsub's test: here the scheduler decides whether its
// goroutine keeps up with a burst of events.)
func TestStalledSubscriberDoesNotBlockRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const buffer, events = 4, 50
		var logged bytes.Buffer
		ctx := context.Background()
		c, err := conversation.New(ctx, &chattyAgent{N: events}, t.TempDir(), &conversation.LocalOptions{
			SubscriberBuffer: buffer,
			Logger:           slog.New(slog.NewTextHandler(&logged, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		var calls atomic.Int64
		stopStalled := c.Subscribe(func(event.Event) {
			calls.Add(1)
			<-release
		})
		watched := c.Watch(ctx) // never read until the run is over

		if err := c.SendMessage(ctx, event.UserMessage("talk")); err != nil {
			t.Fatal(err)
		}
		if err := c.Run(ctx); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if n := calls.Load(); n != 1 {
			t.Errorf("stalled subscriber called %d times while stalled, want 1", n)
		}
		all := c.State().Events().Len()
		if all < events+1 {
			t.Fatalf("log has %d events, want at least %d", all, events+1)
		}
		if !errors.Is(watched.Err(), pubsub.ErrSlow) {
			t.Errorf("stalled Watch: Err = %v, want ErrSlow", watched.Err())
		}
		if got := len(slices.Collect(watched.All())); got != buffer {
			t.Errorf("stalled Watch kept %d events, want its buffer of %d", got, buffer)
		}
		close(release)
		stopStalled()
		if n := calls.Load(); n > buffer+1 {
			t.Errorf("dropped subscriber was called %d times, more than its buffer allows", n)
		}
		if !bytes.Contains(logged.Bytes(), []byte("fell behind")) {
			t.Errorf("no warning about the dropped subscriber in the log:\n%s", logged.String())
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestRunStream(t *testing.T) {
	ctx := context.Background()
	c, err := conversation.New(ctx, &chattyAgent{N: 3}, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SendMessage(ctx, event.UserMessage("go"))
	before := c.State().Events().Len()
	var got []string
	for e, err := range conversation.RunStream(ctx, c) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e.EventBase().ID)
	}
	var want []string
	for e, err := range conversation.EventsFrom(t.Context(), c.State().Events(), before) {
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, e.EventBase().ID)
	}
	if !slices.Equal(got, want) || len(got) < 3 {
		t.Errorf("stream yielded %v\nlog has %v", got, want)
	}
	if st := c.Status(); st != conversation.StatusFinished {
		t.Errorf("status %s", st)
	}
}

func TestRunStreamYieldsRunError(t *testing.T) {
	ctx := context.Background()
	c, err := conversation.New(ctx, &echoAgent{fail: errors.New("boom")}, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SendMessage(ctx, event.UserMessage("hi"))
	var last error
	var sawError bool
	for e, err := range conversation.RunStream(ctx, c) {
		if _, ok := e.(*event.ConversationErrorEvent); ok {
			sawError = true
		}
		last = err
	}
	var re *conversation.RunError
	if !errors.As(last, &re) || re.Code != "AgentError" || !sawError {
		t.Errorf("last error %v, saw ConversationErrorEvent %v", last, sawError)
	}
}

// Stopping the iteration pauses the run and waits for it.
func TestRunStreamBreakPauses(t *testing.T) {
	ctx := context.Background()
	c, err := conversation.New(ctx, &chattyAgent{N: 1, block: true}, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SendMessage(ctx, event.UserMessage("go"))
	for e, err := range conversation.RunStream(ctx, c) {
		if err != nil {
			t.Fatal(err)
		}
		if m, ok := e.(*event.MessageEvent); ok && m.Source == event.SourceAgent {
			break
		}
	}
	if st := c.Status(); st != conversation.StatusPaused {
		t.Errorf("status after break = %s, want paused", st)
	}
}

func TestEventsFromAndSearchAll(t *testing.T) {
	s, err := conversation.LoadLog(context.Background(), conversation.NewMemoryStore())
	if err != nil {
		t.Fatal(err)
	}
	evs := storetest.Events(40)
	for _, e := range evs {
		if _, err := s.Append(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for e, err := range conversation.EventsFrom(t.Context(), s, 30) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e.EventBase().ID)
	}
	var want []string
	for _, e := range evs[30:] {
		want = append(want, e.EventBase().ID)
	}
	if !slices.Equal(got, want) {
		t.Errorf("EventsFrom(30) = %v\nwant %v", got, want)
	}

	got, want = nil, nil
	for ent, err := range conversation.SearchAll(s, conversation.Query{Kind: "ActionEvent", Limit: 3}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ent.ID)
	}
	for _, e := range evs {
		if _, ok := e.(*event.ActionEvent); ok {
			want = append(want, e.EventBase().ID)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("SearchAll = %v\nwant %v", got, want)
	}
	for _, err := range conversation.SearchAll(s, conversation.Query{PageID: "nope"}) {
		if !errors.Is(err, conversation.ErrNotFound) {
			t.Errorf("SearchAll from an unknown page: err = %v", err)
		}
	}
}

// Pause ends a run whose step is blocked, and a run whose context times
// out pauses exactly at its deadline (a synctest bubble: the hour costs
// nothing, and the run must not outlive it by a tick).
func TestPauseAndTimeoutInBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		c, err := conversation.New(ctx, &chattyAgent{N: 1, block: true}, t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SendMessage(ctx, event.UserMessage("go"))
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()
		synctest.Wait() // the step is blocked
		if st := c.Status(); st != conversation.StatusRunning {
			t.Fatalf("status while the step blocks = %s", st)
		}
		if err := c.Pause(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("Run after Pause: %v", err)
		}
		if st := c.Status(); st != conversation.StatusPaused {
			t.Fatalf("status after Pause = %s", st)
		}

		runCtx, cancel := context.WithTimeout(ctx, time.Hour)
		defer cancel()
		start := time.Now()
		err = c.Run(runCtx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Run past its deadline: %v", err)
		}
		if d := time.Since(start); d != time.Hour {
			t.Errorf("the run ended %v after it began, want at its deadline (1h)", d)
		}
		if st := c.Status(); st != conversation.StatusPaused {
			t.Errorf("status after the deadline = %s, want paused", st)
		}
	})
}
