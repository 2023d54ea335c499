package conversation

import (
	"context"
	"slices"
	"testing"

	"github.com/gohands/gohands/event"
)

func action(id, call, resp string) *event.ActionEvent {
	return &event.ActionEvent{Base: event.Base{ID: id}, ToolCallID: call, LLMResponseID: resp, Action: struct{}{}}
}

func obs(id, call, action string) *event.ObservationEvent {
	return &event.ObservationEvent{Base: event.Base{ID: id}, ToolCallID: call, ActionID: action}
}

func ids(view []event.Event) []string {
	var out []string
	for _, e := range view {
		out = append(out, e.EventBase().ID)
	}
	return out
}

func TestPairCalls(t *testing.T) {
	user := &event.MessageEvent{Base: event.Base{ID: "u"}, LLMMessage: event.UserMessage("hi")}
	for _, tc := range []struct {
		name    string
		view    []event.Event
		pending []string
		want    []string
	}{
		{"paired", []event.Event{user, action("a1", "c1", "r1"), obs("o1", "c1", "a1")}, nil, []string{"u", "a1", "o1"}},
		{"duplicate result", []event.Event{action("a1", "c1", "r1"), obs("o1", "c1", "a1"),
			&event.AgentErrorEvent{Base: event.Base{ID: "e1"}, ToolCallID: "c1"}}, nil, []string{"a1", "o1"}},
		{"orphan result", []event.Event{user, obs("o1", "c9", "a9")}, nil, []string{"u"}},
		{"result before call", []event.Event{obs("o1", "c1", "a1"), action("a1", "c1", "r1")}, nil, nil},
		{"unanswered call drops its response", []event.Event{user,
			action("a1", "c1", "r1"), action("a2", "c2", "r1"), obs("o1", "c1", "a1"),
			action("a3", "c3", "r2"), obs("o3", "c3", "a3")}, nil, []string{"u", "a3", "o3"}},
		{"pending call kept", []event.Event{user, action("a1", "c1", "r1")}, []string{"a1"}, []string{"u", "a1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pending := map[string]bool{}
			for _, p := range tc.pending {
				pending[p] = true
			}
			if got := ids(pairCalls(tc.view, pending)); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCondense(t *testing.T) {
	summary, off := "what happened", 1
	view := []event.Event{
		&event.MessageEvent{Base: event.Base{ID: "u"}},
		action("a1", "c1", "r1"), obs("o1", "c1", "a1"),
		action("a2", "c2", "r2"), obs("o2", "c2", "a2"),
	}
	c := &event.Condensation{Base: event.Base{ID: "k"}, ForgottenEventIDs: event.List[string]{"a1", "o1"}, Summary: &summary, SummaryOffset: &off}
	got := applyToView(view, c)
	if want := []string{"u", "k-summary", "a2", "o2"}; !slices.Equal(ids(got), want) {
		t.Fatalf("got %v, want %v", ids(got), want)
	}
	if len(view) != 5 || view[1].EventBase().ID != "a1" {
		t.Fatal("condensing changed the old view")
	}
}

// countingStore counts the events read.
type countingStore struct {
	Store
	decoded int
}

func (s *countingStore) Raw(ctx context.Context, ent Entry) ([]byte, error) {
	s.decoded++ // decodeEvents runs one goroutine below 128 events
	return s.Store.Raw(ctx, ent)
}

// TestViewOfSkipsForgotten checks that the view of a log with
// condensations is the one of decoding every event, summary positions
// included, while the events a later condensation forgets are not decoded.
func TestViewOfSkipsForgotten(t *testing.T) {
	str := func(s string) *string { return &s }
	num := func(n int) *int { return &n }
	msg := func(id string) *event.MessageEvent {
		return &event.MessageEvent{Base: event.Base{ID: id, Source: event.SourceUser}, LLMMessage: event.UserMessage(id)}
	}
	cond := func(id string, summary *string, off *int, forget ...string) *event.Condensation {
		return &event.Condensation{Base: event.Base{ID: id, Source: event.SourceEnvironment}, ForgottenEventIDs: forget, Summary: summary, SummaryOffset: off}
	}
	log := []event.Event{
		msg("m0"), msg("m1"), msg("m2"), msg("m3"),
		// The summary's offset counts m1 and m2, which k2 forgets later.
		cond("k1", str("first"), num(3), "m0"),
		msg("m4"), &event.CondensationRequest{Base: event.Base{ID: "r1", Source: event.SourceEnvironment}}, msg("m5"),
		cond("k2", str("second"), num(1), "m1", "m2", "k1-summary", "m4"),
		msg("m6"),
		cond("k3", nil, nil, "m0"), // forgets what is already gone
	}
	cs := &countingStore{Store: NewMemoryStore()}
	store, err := LoadLog(context.Background(), cs)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range log {
		if _, err := store.Append(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	var want []event.Event
	for i := range store.Len() {
		e, err := store.Event(t.Context(), i)
		if err != nil {
			t.Fatal(err)
		}
		want = applyToView(want, e)
	}
	cs.decoded = 0
	got, err := viewOf(t.Context(), store, store.Entries())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(got), ids(want)) {
		t.Fatalf("view %v, want %v", ids(got), ids(want))
	}
	if w := []string{"m3", "k2-summary", "m5", "m6"}; !slices.Equal(ids(got), w) {
		t.Fatalf("view %v, want %v", ids(got), w)
	}
	// Not m0, m1, m2 and m4.
	if cs.decoded != len(log)-4 {
		t.Errorf("decoded %d events, want %d", cs.decoded, len(log)-4)
	}
}
