package conversation_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/internal/convtest"
	"github.com/gohands/gohands/event"
)

// With RecordChanges, each field change is also in the log, as a
// ConversationStateUpdateEvent, in the commit that made it; HEAD moves are
// not recorded and state updates are not tree nodes.
func TestRecordChanges(t *testing.T) {
	s := conversation.NewMemoryStore()
	var seen []event.Event
	st, err := conversation.Create(context.Background(), s, convtest.NewFields(), &conversation.Options{
		RecordChanges: true, OnEvent: func(e event.Event) { seen = append(seen, e) },
	})
	if err != nil {
		t.Fatal(err)
	}
	msg := &event.MessageEvent{Base: event.NewBase(event.SourceUser), LLMMessage: event.UserMessage("hi")}
	err = st.Do(func(tx *conversation.Tx) error {
		tx.Fields().ExecutionStatus = conversation.StatusRunning
		_, err := tx.Append(msg)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for i := range st.Events().Len() {
		e, err := st.Events().Event(t.Context(), i)
		if err != nil {
			t.Fatal(err)
		}
		if u, ok := e.(*event.ConversationStateUpdateEvent); ok {
			keys = append(keys, u.Key)
			if u.Key == "execution_status" && string(u.Value.(json.RawMessage)) != `"running"` {
				t.Errorf("execution_status value %s", u.Value)
			}
		}
	}
	if len(keys) != 2 || keys[0] != "execution_status" || keys[1] != "last_user_message_id" {
		t.Errorf("recorded keys %v, want [execution_status last_user_message_id]", keys)
	}
	if len(seen) != st.Events().Len() {
		t.Errorf("OnEvent saw %d events, the log has %d", len(seen), st.Events().Len())
	}
	if got := st.Fields().LeafEventID; got != msg.ID {
		t.Errorf("HEAD %s, want the message %s (state updates are not tree nodes)", got, msg.ID)
	}
	// Fields.MarshalJSON is the redacted state without nulls.
	b, err := json.Marshal(st.Fields())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m["execution_status"] != "running" {
		t.Errorf("Fields JSON %s (%v)", b, err)
	}
}

// holdingStore holds the append of a ConversationStateUpdateEvent until
// release is closed, telling held when it starts waiting.
// holdingStore holds the first append of an event of kind hold (a
// ConversationStateUpdateEvent when empty) until release is closed.
type holdingStore struct {
	conversation.Store
	hold          string
	held, release chan struct{}
}

func (s *holdingStore) Append(ctx context.Context, ent conversation.Entry, e event.Event) (conversation.Entry, error) {
	kind := s.hold
	if kind == "" {
		kind = event.KindConversationStateUpdate
	}
	if ent.Kind == kind && s.held != nil {
		held := s.held
		s.held = nil
		close(held)
		<-s.release
	}
	return s.Store.Append(ctx, ent, e)
}

// A changed status is seen only once its event is in the log: a client
// that saw "finished" and then read the events must find the one that
// recorded it.
func TestRecordedBeforeSeen(t *testing.T) {
	s := &holdingStore{Store: conversation.NewMemoryStore(), held: make(chan struct{}), release: make(chan struct{})}
	st, err := conversation.Create(context.Background(), s, convtest.NewFields(), &conversation.Options{RecordChanges: true})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	held := s.held
	go func() {
		done <- st.Update(func(f *conversation.Fields) error {
			f.ExecutionStatus = conversation.StatusFinished
			return nil
		})
	}()
	<-held
	if got := st.Fields().ExecutionStatus; got == conversation.StatusFinished {
		t.Errorf("status %q seen while its event is not yet in the log", got)
	}
	close(s.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := st.Fields().ExecutionStatus; got != conversation.StatusFinished {
		t.Errorf("status %q after the update, want finished", got)
	}
}

// An event appended after a transaction's changes (a PauseEvent after the
// status change) is in the log, after the change's event, before the
// change is seen: a client that saw "paused" found no PauseEvent (server
// TestInterruptRoute, under load).
func TestAppendAfterChanges(t *testing.T) {
	s := &holdingStore{Store: conversation.NewMemoryStore(), hold: event.KindPause, held: make(chan struct{}), release: make(chan struct{})}
	st, err := conversation.Create(context.Background(), s, convtest.NewFields(), &conversation.Options{RecordChanges: true})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	held := s.held
	go func() {
		done <- st.Do(func(tx *conversation.Tx) error {
			tx.Fields().ExecutionStatus = conversation.StatusPaused
			tx.AppendAfterChanges(func() event.Event { return &event.PauseEvent{Base: event.NewBase(event.SourceUser)} })
			return nil
		})
	}()
	<-held
	if got := st.Fields().ExecutionStatus; got == conversation.StatusPaused {
		t.Errorf("status %q seen while the PauseEvent is not yet in the log", got)
	}
	close(s.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	log := st.Events()
	var kinds, times []string
	for i := range log.Len() {
		e, _ := log.Entry(i)
		kinds = append(kinds, e.Kind)
		times = append(times, e.Timestamp)
	}
	want := []string{event.KindConversationStateUpdate, event.KindPause}
	if !slices.Equal(kinds, want) || times[0] > times[1] {
		t.Errorf("log %v at %v, want %v in time order", kinds, times, want)
	}
}
