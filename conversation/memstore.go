package conversation

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/gohands/gohands/event"
)

// MemoryStore is a Store that keeps everything in memory, for tests and for
// conversations that are not persisted. The zero value is not usable; call
// NewMemoryStore.
type MemoryStore struct {
	mu     sync.RWMutex // guards everything below
	ents   []Entry
	data   [][]byte
	base   []byte
	closed bool
}

// NewMemoryStore returns an empty in-memory store.
func NewMemoryStore() *MemoryStore { return &MemoryStore{} }

var _ KindedStore = (*MemoryStore)(nil)

// StoreKind implements KindedStore.
func (s *MemoryStore) StoreKind() string { return "memory" }

// ReadBase implements Store.
func (s *MemoryStore) ReadBase(context.Context) ([]byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	return bytes.Clone(s.base), nil
}

// WriteBase implements Store.
func (s *MemoryStore) WriteBase(_ context.Context, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.base = bytes.Clone(data)
	return nil
}

// Load implements Store. It may be called again: it yields the events
// stored at the time of the call.
func (s *MemoryStore) Load(context.Context) iter.Seq2[[]Entry, error] {
	return func(yield func([]Entry, error) bool) {
		s.mu.RLock()
		ents, closed := slices.Clone(s.ents), s.closed
		s.mu.RUnlock()
		if closed {
			yield(nil, ErrClosed)
			return
		}
		if len(ents) > 0 {
			yield(ents, nil)
		}
	}
}

// Append implements Store.
func (s *MemoryStore) Append(_ context.Context, ent Entry, e event.Event) (Entry, error) {
	// Encoded before the lock: readers do not wait for it.
	data, err := event.Marshal(event.CompactArguments(e)) // large tool-call arguments kept once
	if err != nil {
		return Entry{}, fmt.Errorf("conversation: encoding event %s: %w", ent.ID, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Entry{}, ErrClosed
	}
	if ent.Index != len(s.data) {
		return Entry{}, fmt.Errorf("conversation: append at index %d of a log of %d events", ent.Index, len(s.data))
	}
	ent.Size = len(data)
	s.data = append(s.data, data)
	s.ents = append(s.ents, ent)
	return ent, nil
}

// Raw implements Store.
func (s *MemoryStore) Raw(_ context.Context, ent Entry) ([]byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	if ent.Index < 0 || ent.Index >= len(s.data) {
		return nil, fmt.Errorf("%w: %d of %d", ErrIndexOutOfRange, ent.Index, len(s.data))
	}
	return s.data[ent.Index], nil
}

// Close implements Store.
func (s *MemoryStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}
