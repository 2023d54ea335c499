package conversation_test

import (
	"context"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/storetest"
	"github.com/gohands/gohands/event"
)

func TestMemoryStore(t *testing.T) {
	storetest.Run(t, storetest.Factory{
		New: func(*testing.T) conversation.Store { return conversation.NewMemoryStore() },
	})
}

// A store of one's own plugs into New without touching the core: this
// backend keeps each conversation's base state and event JSON in a map when
// its store is closed, as a shared store would keep them in a database, and
// reopens it by replaying them into a memory store.
type memoryBackend struct {
	saved  map[string]*saved
	opened int
}

type saved struct {
	base   []byte
	events [][]byte
}

type keptStore struct {
	*conversation.MemoryStore
	b  *memoryBackend
	id string
}

func (s keptStore) Close() error {
	sv := &saved{}
	var err error
	ctx := context.Background()
	if sv.base, err = s.ReadBase(ctx); err != nil {
		return err
	}
	for batch, err := range s.Load(ctx) { // a memory store loads again
		if err != nil {
			return err
		}
		for _, ent := range batch {
			raw, err := s.Raw(ctx, ent)
			if err != nil {
				return err
			}
			sv.events = append(sv.events, raw)
		}
	}
	s.b.saved[s.id] = sv
	return s.MemoryStore.Close()
}

func (b *memoryBackend) Open(ctx context.Context, id string) (conversation.Store, error) {
	b.opened++
	s := keptStore{conversation.NewMemoryStore(), b, id}
	if sv, ok := b.saved[id]; ok {
		if sv.base != nil {
			if err := s.WriteBase(ctx, sv.base); err != nil {
				return nil, err
			}
		}
		log, err := conversation.LoadLog(ctx, s)
		if err != nil {
			return nil, err
		}
		for _, raw := range sv.events {
			e, err := event.Unmarshal(raw)
			if err != nil {
				return nil, err
			}
			if _, err := log.Append(ctx, e); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

func TestCustomBackend(t *testing.T) {
	storetest.Run(t, storetest.Factory{
		New: func(*testing.T) conversation.Store {
			s, _ := (&memoryBackend{saved: map[string]*saved{}}).Open(context.Background(), "x")
			return s
		},
		Reopen: func(t *testing.T, s conversation.Store) conversation.Store {
			k := s.(keptStore)
			if err := k.Close(); err != nil {
				t.Fatal(err)
			}
			s2, err := k.b.Open(context.Background(), k.id)
			if err != nil {
				t.Fatal(err)
			}
			return s2
		},
	})

	ctx := context.Background()
	b := &memoryBackend{saved: map[string]*saved{}}
	c, err := conversation.New(ctx, &echoAgent{Greeting: "echo: "}, t.TempDir(), &conversation.LocalOptions{Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SendMessage(ctx, event.UserMessage("hi")); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	id, n := c.ID(), c.State().Events().Len()
	c.Close()
	if b.opened != 1 || len(b.saved[id].events) != n || n < 2 {
		t.Fatalf("backend opened %d stores; it saved %d events, the conversation had %d", b.opened, len(b.saved[id].events), n)
	}

	// Resumed from the backend, and, through Store, from a store given
	// directly: the id comes from the stored state.
	c2, err := conversation.New(ctx, nil, t.TempDir(), &conversation.LocalOptions{Backend: b, ID: id})
	if err != nil {
		t.Fatal(err)
	}
	if got := c2.State().Events().Len(); got != n {
		t.Errorf("resumed with %d events, want %d", got, n)
	}
	c2.Close()
	s, err := b.Open(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	c3, err := conversation.New(ctx, nil, t.TempDir(), &conversation.LocalOptions{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if c3.ID() != id || c3.State().Events().Len() != n {
		t.Errorf("from Store: id %s with %d events, want %s with %d", c3.ID(), c3.State().Events().Len(), id, n)
	}
}
