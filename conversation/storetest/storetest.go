// Package storetest is the conformance suite every conversation.Store
// implementation must pass. It checks what is each store's own: the bytes
// it keeps, what it loads back, its base state, its behaviour when closed
// and under concurrent reads. What a conversation.Log does over any store
// (lookups, search, the checks of an append) is tested once, in package
// conversation.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
)

// Factory makes stores for the suite.
type Factory struct {
	// New returns a new, empty store.
	New func(t *testing.T) conversation.Store
	// Reopen closes s and opens the same conversation again; nil for stores
	// that do not persist.
	Reopen func(t *testing.T, s conversation.Store) conversation.Store
}

// Run runs the suite.
func Run(t *testing.T, f Factory) {
	t.Run("Empty", func(t *testing.T) { testEmpty(t, f) })
	t.Run("AppendAndRead", func(t *testing.T) { testAppendAndRead(t, f) })
	t.Run("AppendAtItsIndex", func(t *testing.T) { testAppendIndex(t, f) })
	t.Run("BaseState", func(t *testing.T) { testBase(t, f) })
	t.Run("ConcurrentReadsDuringAppends", func(t *testing.T) { testConcurrent(t, f) })
	t.Run("Closed", func(t *testing.T) { testClosed(t, f) })
	t.Run("LargeArgumentsOnce", func(t *testing.T) { testLargeArguments(t, f) })
	if f.Reopen != nil {
		t.Run("Reopen", func(t *testing.T) { testReopen(t, f) })
	}
}

var t0 = time.Date(2026, 8, 22, 10, 0, 0, 0, time.Local)

// Events returns n events of mixed kinds with increasing timestamps, one
// second apart, each the child of the previous one: user messages, actions
// (every third without an action, as after a bad tool call), observations
// (as UserRejectObservations, which need no tool kinds) and agent errors.
func Events(n int) []event.Event {
	out := make([]event.Event, 0, n)
	prev := ""
	for i := range n {
		b := event.Base{ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), Timestamp: event.FormatTime(t0.Add(time.Duration(i) * time.Second)), ParentID: prev}
		call := fmt.Sprintf("call_%d", i/2)
		var e event.Event
		switch i % 4 {
		case 0:
			b.Source = event.SourceUser
			e = &event.MessageEvent{Base: b, LLMMessage: event.Message{Role: "user", Content: []event.Content{event.Text(fmt.Sprintf("message %d", i))}}}
		case 1:
			b.Source = event.SourceAgent
			e = &event.ActionEvent{Base: b, ToolName: "think", ToolCallID: call, ToolCall: event.ToolCall{ID: call, Name: "think", Arguments: "{}", Origin: "completion"}, LLMResponseID: "resp"}
		case 2:
			b.Source = event.SourceEnvironment
			e = &event.UserRejectObservation{Base: b, ToolName: "think", ToolCallID: fmt.Sprintf("call_%d", (i-1)/2), ActionID: out[i-1].EventBase().ID, RejectionReason: "no", RejectionSource: event.RejectedByUser}
		case 3:
			b.Source = event.SourceAgent
			e = &event.AgentErrorEvent{Base: b, ToolName: "think", ToolCallID: "call_x", Error: "boom", Classification: event.AgentActionError}
		}
		out = append(out, e)
		prev = b.ID
	}
	return out
}

// load returns the log of s, failing the test on an error.
func load(t *testing.T, s conversation.Store) *conversation.Log {
	t.Helper()
	log, err := conversation.LoadLog(context.Background(), s)
	if err != nil {
		t.Fatalf("LoadLog: %v", err)
	}
	return log
}

func mustAppend(t *testing.T, log *conversation.Log, evs ...event.Event) {
	t.Helper()
	for _, e := range evs {
		if _, err := log.Append(context.Background(), e); err != nil {
			t.Fatalf("Append(%s): %v", e.EventBase().ID, err)
		}
	}
}

func testEmpty(t *testing.T, f Factory) {
	s := f.New(t)
	defer s.Close()
	ctx := context.Background()
	if b, err := s.ReadBase(ctx); err != nil || b != nil {
		t.Errorf("ReadBase = %q, %v; want nil, nil", b, err)
	}
	for batch, err := range s.Load(ctx) {
		if err != nil || len(batch) > 0 {
			t.Errorf("Load of an empty store yielded %+v, %v", batch, err)
		}
	}
	if _, err := s.Raw(ctx, conversation.Entry{Index: 0, ID: Events(1)[0].EventBase().ID}); err == nil {
		t.Error("Raw of event 0 of an empty store succeeded")
	}
}

// checkEntries checks that log holds evs: each entry as the event
// describes it, the stored bytes as the reference encodes it, and the
// event read back.
func checkEntries(t *testing.T, log *conversation.Log, evs []event.Event) {
	t.Helper()
	if log.Len() != len(evs) {
		t.Fatalf("Len = %d, want %d", log.Len(), len(evs))
	}
	for i, e := range evs {
		want, err := event.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		ent, err := log.Entry(i)
		if err != nil {
			t.Fatal(err)
		}
		b := e.EventBase()
		kind, _ := event.KindOf(e)
		if ent.Index != i || ent.ID != b.ID || ent.Kind != kind || ent.Source != b.Source ||
			ent.Timestamp != b.Timestamp || ent.ParentID != b.ParentID || ent.Size != len(want) {
			t.Errorf("Entry(%d) = %+v", i, ent)
		}
		var call, action string
		hasAction := false
		switch v := e.(type) {
		case *event.ActionEvent:
			call, hasAction = v.ToolCallID, v.Action != nil
		case *event.UserRejectObservation:
			call, action = v.ToolCallID, v.ActionID
		case *event.ObservationEvent:
			call, action = v.ToolCallID, v.ActionID
		case *event.AgentErrorEvent:
			call = v.ToolCallID
		}
		if ent.ToolCallID != call || ent.ActionID != action || ent.HasAction != hasAction {
			t.Errorf("Entry(%d) tool fields = %q %q %v; want %q %q %v", i, ent.ToolCallID, ent.ActionID, ent.HasAction, call, action, hasAction)
		}
		raw, err := log.Raw(t.Context(), i)
		if err != nil || !bytes.Equal(raw, want) {
			t.Errorf("Raw(%d) = %s, %v\nwant %s", i, raw, err, want)
		}
		got, err := log.Event(t.Context(), i)
		if err != nil {
			t.Fatalf("Event(%d): %v", i, err)
		}
		if gb, _ := event.Marshal(got); !bytes.Equal(gb, want) {
			t.Errorf("Event(%d) re-encodes as %s", i, gb)
		}
	}
}

func testAppendAndRead(t *testing.T, f Factory) {
	s := f.New(t)
	defer s.Close()
	log := load(t, s)
	evs := Events(12)
	mustAppend(t, log, evs...)
	checkEntries(t, log, evs)
}

// testAppendIndex: a store takes an event only at the index that follows
// its log, and an append it refuses leaves the log unchanged.
func testAppendIndex(t *testing.T, f Factory) {
	s := f.New(t)
	defer s.Close()
	ctx := context.Background()
	log := load(t, s)
	evs := Events(3)
	mustAppend(t, log, evs[:2]...)
	for _, i := range []int{0, 1, 3} {
		if _, err := s.Append(ctx, conversation.Entry{Index: i, ID: evs[2].EventBase().ID, Kind: event.KindUserRejectObservation}, evs[2]); err == nil {
			t.Errorf("Append at index %d of a log of 2 succeeded", i)
		}
	}
	mustAppend(t, log, evs[2])
	checkEntries(t, log, evs)
}

func testBase(t *testing.T, f Factory) {
	s := f.New(t)
	defer s.Close()
	ctx := context.Background()
	for _, want := range []string{`{"id":"a"}`, `{"id":"b","more":true}`} {
		if err := s.WriteBase(ctx, []byte(want)); err != nil {
			t.Fatal(err)
		}
		got, err := s.ReadBase(ctx)
		if err != nil || string(got) != want {
			t.Errorf("ReadBase = %s, %v; want %s", got, err, want)
		}
	}
}

func testConcurrent(t *testing.T, f Factory) {
	s := f.New(t)
	defer s.Close()
	log := load(t, s)
	evs := Events(200)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 4)
	for range 3 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				n := log.Len()
				if n == 0 {
					continue
				}
				i := n - 1
				ent, err := log.Entry(i)
				var raw []byte
				if err == nil {
					raw, err = log.Raw(t.Context(), i)
				}
				if err == nil && len(raw) != ent.Size {
					err = fmt.Errorf("Raw(%d) has %d bytes, its entry says %d", i, len(raw), ent.Size)
				}
				if err == nil {
					_, err = log.Event(t.Context(), i)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	mustAppend(t, log, evs...)
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checkEntries(t, log, evs)
}

func testClosed(t *testing.T, f Factory) {
	s := f.New(t)
	ctx := context.Background()
	log := load(t, s)
	mustAppend(t, log, Events(1)...)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := log.Append(ctx, Events(2)[1]); !errors.Is(err, conversation.ErrClosed) {
		t.Errorf("Append after Close: err = %v", err)
	}
	if log.Len() != 1 {
		t.Errorf("Len = %d after a refused append", log.Len())
	}
	if err := s.WriteBase(ctx, []byte(`{}`)); !errors.Is(err, conversation.ErrClosed) {
		t.Errorf("WriteBase after Close: err = %v", err)
	}
	if _, err := log.Raw(t.Context(), 0); !errors.Is(err, conversation.ErrClosed) {
		t.Errorf("Raw after Close: err = %v", err)
	}
}

// testReopen: what a store loads back is what was appended, entries and
// bytes, and appends continue after it.
func testReopen(t *testing.T, f Factory) {
	s := f.New(t)
	ctx := context.Background()
	log := load(t, s)
	evs := Events(25)
	mustAppend(t, log, evs[:20]...)
	before := log.Entries()
	if err := s.WriteBase(ctx, []byte(`{"id":"x"}`)); err != nil {
		t.Fatal(err)
	}
	s = f.Reopen(t, s)
	log = load(t, s)
	for i, ent := range log.Entries() {
		if ent != before[i] {
			t.Errorf("entry %d loaded as %+v, appended as %+v", i, ent, before[i])
		}
	}
	checkEntries(t, log, evs[:20])
	mustAppend(t, log, evs[20:]...)
	s = f.Reopen(t, s)
	defer s.Close()
	checkEntries(t, load(t, s), evs)
	if b, _ := s.ReadBase(ctx); string(b) != `{"id":"x"}` {
		t.Errorf("base after reopen: %s", b)
	}
}

// largeAction is the action of testLargeArguments.
type largeAction struct {
	Text string `json:"text"`
}

func init() { event.RegisterKind[largeAction]("StoretestLargeAction") }

// testLargeArguments: an action whose large tool-call arguments are what
// the action stands for is kept with them once (event.CompactArguments) and
// reads back whole.
func testLargeArguments(t *testing.T, f Factory) {
	s := f.New(t)
	big := strings.Repeat("q", event.LargeArgumentBytes+10)
	a := &event.ActionEvent{
		Base: event.NewBase(event.SourceAgent), Thought: event.List[event.Content]{}, Action: &largeAction{Text: big},
		ToolName: "large", ToolCallID: "c1", LLMResponseID: "r1", SecurityRisk: event.RiskUnknown,
	}
	args, err := event.ActionArguments(a)
	if err != nil {
		t.Fatal(err)
	}
	a.ToolCall = event.ToolCall{ID: "c1", Name: "large", Arguments: args}
	log := load(t, s)
	mustAppend(t, log, a)
	check := func(when string) {
		raw, err := log.Raw(t.Context(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(raw, []byte(big)); n != 1 {
			t.Errorf("%s: the stored event holds the argument %d times", when, n)
		}
		e, err := log.Event(t.Context(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.(*event.ActionEvent).ToolCall.Arguments; got != args {
			t.Errorf("%s: arguments read back differ (%d bytes, want %d)", when, len(got), len(args))
		}
	}
	check("appended")
	if f.Reopen != nil {
		s = f.Reopen(t, s)
		log = load(t, s)
		check("reopened")
	}
	s.Close()
}
