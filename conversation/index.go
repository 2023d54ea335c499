package conversation

import (
	"fmt"
	"log/slog"
	"sort"
	"sync"

	"github.com/gohands/gohands/event"
)

// Index is the in-memory part every store keeps, so that a store's lookups
// by index and by id are O(1) and a search costs O(page): the entries in
// log order, the id → index map, and per-kind and per-source posting lists.
// A Store implementation embeds one and adds each entry after it is
// stored. It is safe for concurrent use.
// Readers take the read lock only to copy an entry or a slice header, so
// they never wait for a write in progress, only for its publication.
type Index struct {
	mu       sync.RWMutex
	entries  []Entry
	byID     map[string]int32
	byKind   map[string][]int32
	bySource map[event.Source][]int32
	// tsSorted stays true while timestamps never decrease in log order; it
	// lets searches by time binary-search instead of scan.
	tsSorted bool
}

// NewIndex returns an empty index with room for capacity entries.
func NewIndex(capacity int) *Index {
	return &Index{
		entries:  make([]Entry, 0, capacity),
		byID:     make(map[string]int32, capacity),
		byKind:   make(map[string][]int32),
		bySource: make(map[event.Source][]int32),
		tsSorted: true,
	}
}

// Adopt takes entries, in log order, as the index's first entries.
func (x *Index) Adopt(entries []Entry) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.entries = entries[:0]
	x.byID = make(map[string]int32, len(entries))
	for _, e := range entries {
		x.addLocked(e)
	}
}

// Add publishes ent, which must be at index len(entries). Duplicate ids keep
// the first occurrence, as the reference's reader does.
func (x *Index) Add(ent Entry) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.addLocked(ent)
}

func (x *Index) addLocked(ent Entry) {
	i := int32(len(x.entries))
	if n := len(x.entries); n > 0 && ent.Timestamp < x.entries[n-1].Timestamp {
		x.tsSorted = false
	}
	x.entries = append(x.entries, ent)
	if _, dup := x.byID[ent.ID]; dup {
		slog.Warn("conversation: duplicate event id; keeping the first", "id", ent.ID, "index", i)
	} else {
		x.byID[ent.ID] = i
	}
	x.byKind[ent.Kind] = append(x.byKind[ent.Kind], i)
	x.bySource[ent.Source] = append(x.bySource[ent.Source], i)
}

// Len returns the number of entries.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.entries)
}

// Entry returns the entry at index i.
func (x *Index) Entry(i int) (Entry, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if i < 0 || i >= len(x.entries) {
		return Entry{}, fmt.Errorf("%w: %d of %d", ErrIndexOutOfRange, i, len(x.entries))
	}
	return x.entries[i], nil
}

// Lookup returns the index of the entry with the given id.
func (x *Index) Lookup(id string) (int, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	i, ok := x.byID[id]
	return int(i), ok
}

// Entries returns the entries at this moment. The slice must not be
// modified; appends never change entries already published.
func (x *Index) Entries() []Entry {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.entries[:len(x.entries):len(x.entries)]
}

// CheckAppend returns an error if ent cannot be appended: a duplicate id or
// an explicit parent that is not in the log.
func (x *Index) CheckAppend(id, parent string) error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if id == "" || id == event.RootParentID {
		return fmt.Errorf("conversation: invalid event id %q", id)
	}
	if i, dup := x.byID[id]; dup {
		return fmt.Errorf("%w: %s at index %d", ErrDuplicateID, id, i)
	}
	if parent != "" && parent != event.RootParentID {
		if _, ok := x.byID[parent]; !ok {
			return fmt.Errorf("%w: parent %s of event %s", ErrUnknownParent, parent, id)
		}
	}
	return nil
}

// Search runs q over the index. Its cost is O(log n + page) when the query
// has at most one of Kind and Source, or the rarer of the two matches the
// other; it degrades to a scan of the candidates otherwise.
func (x *Index) Search(q Query) (Page, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultPageSize
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := len(x.entries)

	// Candidates: a posting list, or every index.
	var cand []int32
	all := true
	if q.Kind != "" {
		cand, all = x.byKind[q.Kind], false
	}
	if q.Source != "" {
		if s := x.bySource[q.Source]; all || len(s) < len(cand) {
			cand, all = s, false
		}
	}
	m := n
	if !all {
		m = len(cand)
	}
	at := func(j int) int {
		if all {
			return j
		}
		return int(cand[j])
	}

	// Starting position in candidate order.
	lo, hi := 0, m // candidates [lo, hi) are in range
	if q.PageID != "" {
		start, ok := x.byID[q.PageID]
		if !ok {
			return Page{}, fmt.Errorf("%w: page id %s", ErrNotFound, q.PageID)
		}
		s := int(start)
		if q.Descending {
			hi = sort.Search(m, func(j int) bool { return at(j) > s })
		} else {
			lo = sort.Search(m, func(j int) bool { return at(j) >= s })
		}
	}
	if x.tsSorted {
		if q.TimestampGTE != "" {
			lo = max(lo, sort.Search(m, func(j int) bool { return x.entries[at(j)].Timestamp >= q.TimestampGTE }))
		}
		if q.TimestampLT != "" {
			hi = min(hi, sort.Search(m, func(j int) bool { return x.entries[at(j)].Timestamp >= q.TimestampLT }))
		}
	}
	match := func(e *Entry) bool {
		return (q.Kind == "" || e.Kind == q.Kind) &&
			(q.Source == "" || e.Source == q.Source) &&
			(q.TimestampGTE == "" || e.Timestamp >= q.TimestampGTE) &&
			(q.TimestampLT == "" || e.Timestamp < q.TimestampLT)
	}
	p := Page{Entries: make([]Entry, 0, min(limit, max(hi-lo, 0)))}
	step, j := 1, lo
	if q.Descending {
		step, j = -1, hi-1
	}
	for ; j >= lo && j < hi; j += step {
		e := &x.entries[at(j)]
		if !match(e) {
			continue
		}
		if len(p.Entries) == limit {
			p.NextPageID = e.ID
			break
		}
		p.Entries = append(p.Entries, *e)
	}
	return p, nil
}
