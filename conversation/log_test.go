package conversation_test

import (
	"context"
	"errors"
	"iter"
	"slices"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/storetest"
	"github.com/gohands/gohands/event"
)

// What a Log does over any store — lookups, search, the checks of an
// append — is tested here once; conversation/storetest checks what is each
// store's own.

func newLog(t *testing.T, evs ...event.Event) *conversation.Log {
	t.Helper()
	log, err := conversation.LoadLog(context.Background(), conversation.NewMemoryStore())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if _, err := log.Append(context.Background(), e); err != nil {
			t.Fatalf("Append(%s): %v", e.EventBase().ID, err)
		}
	}
	return log
}

func TestLogLookup(t *testing.T) {
	evs := storetest.Events(12)
	log := newLog(t, evs...)
	for i, e := range evs {
		if j, ok := log.Lookup(e.EventBase().ID); !ok || j != i {
			t.Errorf("Lookup(%s) = %d, %v; want %d", e.EventBase().ID, j, ok, i)
		}
	}
	if _, ok := log.Lookup("ffffffff-0000-4000-8000-000000000000"); ok {
		t.Error("Lookup found an id never appended")
	}
	if _, err := log.Entry(12); !errors.Is(err, conversation.ErrIndexOutOfRange) {
		t.Errorf("Entry(12): err = %v", err)
	}
	if _, err := log.Raw(t.Context(), -1); !errors.Is(err, conversation.ErrIndexOutOfRange) {
		t.Errorf("Raw(-1): err = %v", err)
	}
	if n := len(log.Entries()); n != 12 {
		t.Errorf("Entries has %d entries", n)
	}
}

func TestLogRejectsBadAppends(t *testing.T) {
	evs := storetest.Events(3)
	log := newLog(t, evs...)
	ctx := context.Background()
	if _, err := log.Append(ctx, storetest.Events(1)[0]); !errors.Is(err, conversation.ErrDuplicateID) {
		t.Errorf("duplicate id: err = %v", err)
	}
	orphan := &event.PauseEvent{Base: event.NewBase(event.SourceUser)}
	orphan.ParentID = "99999999-0000-4000-8000-000000000000"
	if _, err := log.Append(ctx, orphan); !errors.Is(err, conversation.ErrUnknownParent) {
		t.Errorf("unknown parent: err = %v", err)
	}
	if log.Len() != 3 {
		t.Fatalf("Len = %d after refused appends", log.Len())
	}
	root := &event.PauseEvent{Base: event.NewBase(event.SourceUser)}
	root.ParentID = event.RootParentID
	if _, err := log.Append(ctx, root); err != nil {
		t.Errorf("__root__ parent: %v", err)
	}
	if ent, err := log.Entry(3); err != nil || ent.ID != root.ID {
		t.Errorf("Entry(3) = %+v, %v", ent, err)
	}
}

// collect pages through q and returns the ids found.
func collect(t *testing.T, log *conversation.Log, q conversation.Query) []string {
	t.Helper()
	var ids []string
	for pages := 0; ; pages++ {
		p, err := log.Search(q)
		if err != nil {
			t.Fatalf("Search(%+v): %v", q, err)
		}
		if q.Limit > 0 && len(p.Entries) > q.Limit {
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

func TestLogSearch(t *testing.T) {
	evs := storetest.Events(40)
	log := newLog(t, evs...)
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
		if got := collect(t, log, q); !slices.Equal(got, want) {
			t.Errorf("Search(%+v)\n got %v\nwant %v", q, got, want)
		}
	}
	p, err := log.Search(conversation.Query{})
	if err != nil || len(p.Entries) != 40 || p.NextPageID != "" {
		t.Errorf("default page: %d entries, next %q, %v", len(p.Entries), p.NextPageID, err)
	}
	if _, err := log.Search(conversation.Query{PageID: "nope"}); !errors.Is(err, conversation.ErrNotFound) {
		t.Errorf("unknown page id: err = %v", err)
	}
}

// misloaded is a store whose Load skips an index or fails.
type misloaded struct {
	conversation.Store
	ents []conversation.Entry
	err  error
}

func (s misloaded) Load(context.Context) iter.Seq2[[]conversation.Entry, error] {
	return func(yield func([]conversation.Entry, error) bool) {
		for _, e := range s.ents { // a batch each
			if !yield([]conversation.Entry{e}, nil) {
				return
			}
		}
		if s.err != nil {
			yield(nil, s.err)
		}
	}
}

// TestLoadLogChecksTheStore: a store that loads events out of order, or
// fails while loading, fails LoadLog rather than giving a log with holes.
func TestLoadLogChecksTheStore(t *testing.T) {
	ctx := context.Background()
	ent := func(i int, id string) conversation.Entry {
		return conversation.Entry{Index: i, ID: id, Kind: event.KindPause, Source: event.SourceUser}
	}
	gap := misloaded{Store: conversation.NewMemoryStore(), ents: []conversation.Entry{ent(0, "a0000000"), ent(2, "b0000000")}}
	if _, err := conversation.LoadLog(ctx, gap); err == nil {
		t.Error("LoadLog of a store that skips index 1 succeeded")
	}
	boom := errors.New("boom")
	failing := misloaded{Store: conversation.NewMemoryStore(), ents: []conversation.Entry{ent(0, "a0000000")}, err: boom}
	if _, err := conversation.LoadLog(ctx, failing); !errors.Is(err, boom) {
		t.Errorf("LoadLog of a failing store: err = %v", err)
	}
}
