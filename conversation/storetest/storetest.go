// Package storetest is the conformance suite every conversation.Store
// implementation must pass.
package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
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
	t.Run("RejectsBadAppends", func(t *testing.T) { testRejects(t, f) })
	t.Run("BaseState", func(t *testing.T) { testBase(t, f) })
	t.Run("Search", func(t *testing.T) { testSearch(t, f) })
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

func mustAppend(t *testing.T, s conversation.Store, evs ...event.Event) {
	t.Helper()
	for _, e := range evs {
		if _, err := s.Append(e); err != nil {
			t.Fatalf("Append(%s): %v", e.EventBase().ID, err)
		}
	}
}

func testEmpty(t *testing.T, f Factory) {
	s := f.New(t)
	defer s.Close()
	if n := s.Len(); n != 0 {
		t.Errorf("Len = %d", n)
	}
	if b, err := s.ReadBase(); err != nil || b != nil {
		t.Errorf("ReadBase = %q, %v; want nil, nil", b, err)
	}
	if _, err := s.Entry(0); !errors.Is(err, conversation.ErrIndexOutOfRange) {
		t.Errorf("Entry(0): err = %v", err)
	}
	if _, err := s.Raw(0); err == nil {
		t.Error("Raw(0) on an empty store succeeded")
	}
	if p, err := s.Search(conversation.Query{}); err != nil || len(p.Entries) != 0 || p.NextPageID != "" {
		t.Errorf("Search = %+v, %v", p, err)
	}
}

func checkEntries(t *testing.T, s conversation.Store, evs []event.Event) {
	t.Helper()
	if s.Len() != len(evs) {
		t.Fatalf("Len = %d, want %d", s.Len(), len(evs))
	}
	for i, e := range evs {
		want, err := event.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		ent, err := s.Entry(i)
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
		if j, ok := s.Lookup(b.ID); !ok || j != i {
			t.Errorf("Lookup(%s) = %d, %v; want %d", b.ID, j, ok, i)
		}
		raw, err := s.Raw(i)
		if err != nil || !bytes.Equal(raw, want) {
			t.Errorf("Raw(%d) = %s, %v\nwant %s", i, raw, err, want)
		}
		got, err := s.Event(i)
		if err != nil {
			t.Fatalf("Event(%d): %v", i, err)
		}
		if gb, _ := event.Marshal(got); !bytes.Equal(gb, want) {
			t.Errorf("Event(%d) re-encodes as %s", i, gb)
		}
	}
	if len(s.Entries()) != len(evs) {
		t.Errorf("Entries has %d entries", len(s.Entries()))
	}
}

func testAppendAndRead(t *testing.T, f Factory) {
	s := f.New(t)
	defer s.Close()
	evs := Events(12)
	mustAppend(t, s, evs...)
	checkEntries(t, s, evs)
	if _, ok := s.Lookup("ffffffff-0000-4000-8000-000000000000"); ok {
		t.Error("Lookup found an id never appended")
	}
}

func testRejects(t *testing.T, f Factory) {
	s := f.New(t)
	defer s.Close()
	evs := Events(3)
	mustAppend(t, s, evs...)
	dup := Events(1)[0]
	if _, err := s.Append(dup); !errors.Is(err, conversation.ErrDuplicateID) {
		t.Errorf("duplicate id: err = %v", err)
	}
	orphan := &event.PauseEvent{Base: event.NewBase(event.SourceUser)}
	orphan.ParentID = "99999999-0000-4000-8000-000000000000"
	if _, err := s.Append(orphan); !errors.Is(err, conversation.ErrUnknownParent) {
		t.Errorf("unknown parent: err = %v", err)
	}
	root := &event.PauseEvent{Base: event.NewBase(event.SourceUser)}
	root.ParentID = event.RootParentID
	if _, err := s.Append(root); err != nil {
		t.Errorf("__root__ parent: %v", err)
	}
	checkEntries(t, s, append(evs, root))
}

func testBase(t *testing.T, f Factory) {
	s := f.New(t)
	defer s.Close()
	for _, want := range []string{`{"id":"a"}`, `{"id":"b","more":true}`} {
		if err := s.WriteBase([]byte(want)); err != nil {
			t.Fatal(err)
		}
		got, err := s.ReadBase()
		if err != nil || string(got) != want {
			t.Errorf("ReadBase = %s, %v; want %s", got, err, want)
		}
	}
}

// collect pages through q and returns the ids found.
func collect(t *testing.T, s conversation.Store, q conversation.Query) []string {
	t.Helper()
	var ids []string
	for pages := 0; ; pages++ {
		p, err := s.Search(q)
		if err != nil {
			t.Fatalf("Search(%+v): %v", q, err)
		}
		if len(p.Entries) > max(q.Limit, 1) && q.Limit > 0 {
			t.Fatalf("page of %d entries for limit %d", len(p.Entries), q.Limit)
		}
		for _, e := range p.Entries {
			ids = append(ids, e.ID)
		}
		if p.NextPageID == "" {
			return ids
		}
		if pages > 1000 {
			t.Fatal("search does not end")
		}
		q.PageID = p.NextPageID
	}
}

func testSearch(t *testing.T, f Factory) {
	s := f.New(t)
	defer s.Close()
	evs := Events(40)
	mustAppend(t, s, evs...)
	ts := func(i int) string { return evs[i].EventBase().Timestamp }
	for _, q := range []conversation.Query{
		{},
		{Limit: 7},
		{Kind: event.KindAction, Limit: 3},
		{Source: event.SourceAgent, Limit: 4},
		{Kind: event.KindAgentError, Source: event.SourceAgent, Limit: 2},
		{Kind: event.KindAgentError, Source: event.SourceUser},
		{TimestampGTE: ts(5), TimestampLT: ts(17), Limit: 5},
		{Kind: event.KindMessage, TimestampGTE: ts(9), Limit: 2},
		{Descending: true, Limit: 6},
		{Kind: event.KindUserRejectObservation, Descending: true, TimestampLT: ts(30), Limit: 3},
		{Kind: "NoSuchEvent"},
	} {
		var want []string
		for _, e := range evs {
			b := e.EventBase()
			kind, _ := event.KindOf(e)
			if (q.Kind == "" || kind == q.Kind) && (q.Source == "" || b.Source == q.Source) &&
				(q.TimestampGTE == "" || b.Timestamp >= q.TimestampGTE) && (q.TimestampLT == "" || b.Timestamp < q.TimestampLT) {
				want = append(want, b.ID)
			}
		}
		if q.Descending {
			slices.Reverse(want)
		}
		if got := collect(t, s, q); !slices.Equal(got, want) {
			t.Errorf("Search(%+v)\n got %v\nwant %v", q, got, want)
		}
	}
	p, err := s.Search(conversation.Query{})
	if err != nil || len(p.Entries) != 40 || p.NextPageID != "" {
		t.Errorf("default page: %d entries, next %q, %v", len(p.Entries), p.NextPageID, err)
	}
	if _, err := s.Search(conversation.Query{PageID: "nope"}); !errors.Is(err, conversation.ErrNotFound) {
		t.Errorf("unknown page id: err = %v", err)
	}
}

func testConcurrent(t *testing.T, f Factory) {
	s := f.New(t)
	defer s.Close()
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
				n := s.Len()
				if n == 0 {
					continue
				}
				i := n - 1
				ent, err := s.Entry(i)
				if err == nil {
					_, err = s.Raw(i)
				}
				if err == nil {
					_, err = s.Search(conversation.Query{Kind: ent.Kind, Limit: 5, Descending: true})
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for _, e := range evs {
		if _, err := s.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checkEntries(t, s, evs)
}

func testClosed(t *testing.T, f Factory) {
	s := f.New(t)
	mustAppend(t, s, Events(1)...)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(Events(2)[1]); !errors.Is(err, conversation.ErrClosed) {
		t.Errorf("Append after Close: err = %v", err)
	}
	if err := s.WriteBase([]byte(`{}`)); !errors.Is(err, conversation.ErrClosed) {
		t.Errorf("WriteBase after Close: err = %v", err)
	}
	if _, err := s.Raw(0); !errors.Is(err, conversation.ErrClosed) {
		t.Errorf("Raw after Close: err = %v", err)
	}
}

func testReopen(t *testing.T, f Factory) {
	s := f.New(t)
	evs := Events(25)
	mustAppend(t, s, evs[:20]...)
	if err := s.WriteBase([]byte(`{"id":"x"}`)); err != nil {
		t.Fatal(err)
	}
	s = f.Reopen(t, s)
	checkEntries(t, s, evs[:20])
	mustAppend(t, s, evs[20:]...)
	s = f.Reopen(t, s)
	defer s.Close()
	checkEntries(t, s, evs)
	if b, _ := s.ReadBase(); string(b) != `{"id":"x"}` {
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
	mustAppend(t, s, a)
	check := func(when string) {
		raw, err := s.Raw(0)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(raw, []byte(big)); n != 1 {
			t.Errorf("%s: the stored event holds the argument %d times", when, n)
		}
		e, err := s.Event(0)
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
		check("reopened")
	}
	s.Close()
}
