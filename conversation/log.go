package conversation

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/telemetry"
)

// Log is a conversation's event log: its Store, and the index of its
// events in memory (the entries in log order, the id → index map, per-kind
// and per-source posting lists), so that lookups by index and by id are
// O(1) and a search costs O(page) whatever the store. A State keeps one
// (State.Events); LoadLog reads one without a State.
//
// A Log is safe for concurrent use. Appends are serialised; readers take
// the index's read lock only to copy an entry or a slice header, so they
// never wait for an append's I/O, only for its publication.
//
// The reads that reach the store (Raw, Event) take a context, which the
// store's I/O honours (a database's query); the index's reads (Len,
// Entry, Lookup, Entries, Search) are in memory and take none.
type Log struct {
	store   Store
	dec     EventReader // store, if it decodes; else nil
	kind    string      // the store's KindedStore name, for metrics
	writeMu sync.Mutex  // serialises appends

	mu       sync.RWMutex
	entries  []Entry
	byID     map[string]int32
	byKind   map[string][]int32
	bySource map[event.Source][]int32
	// tsSorted stays true while timestamps never decrease in log order; it
	// lets searches by time binary-search instead of scan.
	tsSorted bool
}

// LoadLog returns the log of store, loading the entries of the events it
// holds (Store.Load). Appends to the log bypass a State's HEAD: they are
// for a log without a State (copies, tests).
func LoadLog(ctx context.Context, store Store) (*Log, error) {
	l := &Log{store: store, bySource: make(map[event.Source][]int32), byKind: make(map[string][]int32), tsSorted: true}
	l.dec, _ = store.(EventReader)
	l.kind = "other"
	if k, ok := store.(KindedStore); ok {
		l.kind = k.StoreKind()
	}
	for batch, err := range store.Load(ctx) {
		if err != nil {
			return nil, err
		}
		if l.entries == nil {
			// The first batch is usually the whole log: it becomes the
			// index's slice, with no copy.
			l.entries = batch[:0]
			l.byID = make(map[string]int32, len(batch))
		}
		for _, ent := range batch {
			if ent.Index != len(l.entries) {
				return nil, fmt.Errorf("conversation: the store loaded event %d at index %d", ent.Index, len(l.entries))
			}
			ent.intern()
			l.addLocked(ent) // not shared yet
		}
	}
	if l.byID == nil {
		l.byID = make(map[string]int32, 64)
	}
	return l, nil
}

// Store returns the log's store.
func (l *Log) Store() Store { return l.store }

// Append checks e (a new id; an explicit parent that is in the log) and
// stores it at index Len(). It fails with ErrDuplicateID or
// ErrUnknownParent, and leaves the log unchanged on any error. It does not
// stamp parent ids: State does.
func (l *Log) Append(ctx context.Context, e event.Event) (Entry, error) {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	b := e.EventBase()
	if err := l.checkAppend(b.ID, b.ParentID); err != nil {
		return Entry{}, err
	}
	kind, ok := event.KindOf(e)
	if !ok {
		return Entry{}, fmt.Errorf("conversation: %T has no registered kind", e)
	}
	// The store's latency, measured only when observed: the clock is not
	// read otherwise.
	obs := telemetry.Observing()
	var start time.Time
	if obs != nil {
		start = time.Now()
	}
	ent, err := l.store.Append(ctx, entryOf(l.Len(), e, kind, 0), e)
	if err != nil {
		return Entry{}, err
	}
	if obs != nil {
		obs.Observe(telemetry.MeasureStoreAppend, l.kind, time.Since(start))
	}
	l.mu.Lock()
	l.addLocked(ent)
	l.mu.Unlock()
	return ent, nil
}

// addLocked publishes ent, which must be at index len(entries). Duplicate
// ids keep the first occurrence, as the reference's reader does.
func (l *Log) addLocked(ent Entry) {
	i := int32(len(l.entries))
	if n := len(l.entries); n > 0 && ent.Timestamp < l.entries[n-1].Timestamp {
		l.tsSorted = false
	}
	l.entries = append(l.entries, ent)
	if _, dup := l.byID[ent.ID]; dup {
		slog.Warn("conversation: duplicate event id; keeping the first", "id", ent.ID, "index", i)
	} else {
		l.byID[ent.ID] = i
	}
	l.byKind[ent.Kind] = append(l.byKind[ent.Kind], i)
	l.bySource[ent.Source] = append(l.bySource[ent.Source], i)
}

// Len returns the number of entries.
func (l *Log) Len() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.entries)
}

// Entry returns the entry at index i.
func (l *Log) Entry(i int) (Entry, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if i < 0 || i >= len(l.entries) {
		return Entry{}, fmt.Errorf("%w: %d of %d", ErrIndexOutOfRange, i, len(l.entries))
	}
	return l.entries[i], nil
}

// Lookup returns the index of the entry with the given id.
func (l *Log) Lookup(id string) (int, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	i, ok := l.byID[id]
	return int(i), ok
}

// Entries returns the entries at this moment. The slice must not be
// modified; appends never change entries already published.
func (l *Log) Entries() []Entry {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.entries[:len(l.entries):len(l.entries)]
}

// checkAppend returns an error if an event cannot be appended: a
// duplicate id or an explicit parent that is not in the log.
func (l *Log) checkAppend(id, parent string) error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if id == "" || id == event.RootParentID {
		return fmt.Errorf("conversation: invalid event id %q", id)
	}
	if i, dup := l.byID[id]; dup {
		return fmt.Errorf("%w: %s at index %d", ErrDuplicateID, id, i)
	}
	if parent != "" && parent != event.RootParentID {
		if _, ok := l.byID[parent]; !ok {
			return fmt.Errorf("%w: parent %s of event %s", ErrUnknownParent, parent, id)
		}
	}
	return nil
}

// Search runs q over the indel. Its cost is O(log n + page) when the query
// has at most one of Kind and Source, or the rarer of the two matches the
// other; it degrades to a scan of the candidates otherwise.
func (l *Log) Search(q Query) (Page, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultPageSize
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	n := len(l.entries)

	// Candidates: a posting list, or every indel.
	var cand []int32
	all := true
	if q.Kind != "" {
		cand, all = l.byKind[q.Kind], false
	}
	if q.Source != "" {
		if s := l.bySource[q.Source]; all || len(s) < len(cand) {
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
		start, ok := l.byID[q.PageID]
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
	if l.tsSorted {
		if q.TimestampGTE != "" {
			lo = max(lo, sort.Search(m, func(j int) bool { return l.entries[at(j)].Timestamp >= q.TimestampGTE }))
		}
		if q.TimestampLT != "" {
			hi = min(hi, sort.Search(m, func(j int) bool { return l.entries[at(j)].Timestamp >= q.TimestampLT }))
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
		e := &l.entries[at(j)]
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

// Raw returns the event JSON at index i, as stored.
func (l *Log) Raw(ctx context.Context, i int) ([]byte, error) {
	ent, err := l.Entry(i)
	if err != nil {
		return nil, err
	}
	return l.store.Raw(ctx, ent)
}

// Event decodes the event at index i.
func (l *Log) Event(ctx context.Context, i int) (event.Event, error) {
	ent, err := l.Entry(i)
	if err != nil {
		return nil, err
	}
	if l.dec != nil {
		return l.dec.ReadEvent(ctx, ent)
	}
	raw, err := l.store.Raw(ctx, ent)
	if err != nil {
		return nil, err
	}
	return event.Unmarshal(raw)
}
