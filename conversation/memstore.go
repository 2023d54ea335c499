package conversation

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/gohands/gohands/event"
)

// MemoryStore is a Store that keeps everything in memory, for tests and for
// conversations that are not persisted. The zero value is not usable; call
// NewMemoryStore.
type MemoryStore struct {
	idx     *Index
	writeMu sync.Mutex // serialises appends and base writes

	mu     sync.RWMutex // guards data, base and closed
	data   [][]byte
	base   []byte
	closed bool
}

// NewMemoryStore returns an empty in-memory store.
func NewMemoryStore() *MemoryStore { return &MemoryStore{idx: NewIndex(64)} }

// ReadBase implements Store.
func (s *MemoryStore) ReadBase() ([]byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	return bytes.Clone(s.base), nil
}

// WriteBase implements Store.
func (s *MemoryStore) WriteBase(data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.base = bytes.Clone(data)
	return nil
}

// Append implements Store.
func (s *MemoryStore) Append(e event.Event) (Entry, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.isClosed() {
		return Entry{}, ErrClosed
	}
	b := e.EventBase()
	if err := s.idx.CheckAppend(b.ID, b.ParentID); err != nil {
		return Entry{}, err
	}
	kind, ok := event.KindOf(e)
	if !ok {
		return Entry{}, fmt.Errorf("conversation: %T has no registered kind", e)
	}
	data, err := event.Marshal(event.CompactArguments(e)) // large tool-call arguments kept once
	if err != nil {
		return Entry{}, fmt.Errorf("conversation: encoding event %s: %w", b.ID, err)
	}
	ent := EntryOf(s.idx.Len(), e, kind, len(data))
	s.mu.Lock()
	s.data = append(s.data, data)
	s.mu.Unlock()
	s.idx.Add(ent)
	return ent, nil
}

func (s *MemoryStore) isClosed() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.closed
}

// Len implements Store.
func (s *MemoryStore) Len() int { return s.idx.Len() }

// Entry implements Store.
func (s *MemoryStore) Entry(i int) (Entry, error) { return s.idx.Entry(i) }

// Lookup implements Store.
func (s *MemoryStore) Lookup(id string) (int, bool) { return s.idx.Lookup(id) }

// Entries implements Store.
func (s *MemoryStore) Entries() []Entry { return s.idx.Entries() }

// Search implements Store.
func (s *MemoryStore) Search(q Query) (Page, error) { return s.idx.Search(q) }

// Raw implements Store.
func (s *MemoryStore) Raw(i int) ([]byte, error) {
	if _, err := s.idx.Entry(i); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	return s.data[i], nil
}

// Event implements Store.
func (s *MemoryStore) Event(i int) (event.Event, error) {
	raw, err := s.Raw(i)
	if err != nil {
		return nil, err
	}
	return event.Unmarshal(raw)
}

// Close implements Store.
func (s *MemoryStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}
