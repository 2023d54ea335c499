package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
)

// Store is one conversation kept in PostgreSQL, held under a lease. Like
// every conversation.Store it keeps the log's index in memory, so reads
// cost no round trip; the events' JSON is kept too, as the file store's
// page cache would.
type Store struct {
	b     *Backend
	id    string
	epoch int64
	idx   *conversation.Index
	// readOnly is a Snapshot: no lease, writes fail.
	readOnly bool

	writeMu sync.Mutex // serialises appends and base writes

	mu     sync.RWMutex // guards data and closed
	data   [][]byte
	closed bool

	stop      chan struct{}
	lost      chan struct{}
	lostOnce  sync.Once
	abandoned error // set once, under writeMu: the write that failed
	done      sync.WaitGroup
}

var _ conversation.Store = (*Store)(nil)

// ID returns the conversation's id.
func (s *Store) ID() string { return s.id }

// Lost is closed when the store's lease is found taken over by another
// process; its writes fail from then on.
func (s *Store) Lost() <-chan struct{} { return s.lost }

func (s *Store) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.b.opts.Timeout)
}

// load reads the conversation's events into memory, those after the ones
// it holds.
func (s *Store) load(ctx context.Context) error {
	from := s.idx.Len()
	rows, err := s.b.pool.Query(ctx, `SELECT idx, body FROM gohands_events WHERE conversation_id = $1 AND idx >= $2 ORDER BY idx`, s.id, from)
	if err != nil {
		return fmt.Errorf("pgstore: load %s: %w", s.id, err)
	}
	defer rows.Close()
	var entries []conversation.Entry
	var data [][]byte
	for rows.Next() {
		var i int
		var body string
		if err := rows.Scan(&i, &body); err != nil {
			return fmt.Errorf("pgstore: load %s: %w", s.id, err)
		}
		if i != from+len(entries) {
			return fmt.Errorf("pgstore: conversation %s: event %d is missing", s.id, from+len(entries))
		}
		ent, err := conversation.ScanEntry(i, []byte(body))
		if err != nil {
			return fmt.Errorf("pgstore: conversation %s: event %d: %w", s.id, i, err)
		}
		ent.Intern()
		entries = append(entries, ent)
		data = append(data, []byte(body))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("pgstore: load %s: %w", s.id, err)
	}
	// The data first: a reader finds an entry's JSON once it sees it.
	s.mu.Lock()
	s.data = append(s.data, data...)
	s.mu.Unlock()
	if from == 0 {
		s.idx.Adopt(entries)
		return nil
	}
	for _, ent := range entries {
		s.idx.Add(ent)
	}
	return nil
}

// Refresh adds to a Snapshot the events stored since it was taken (or
// last refreshed).
func (s *Store) Refresh(ctx context.Context) error {
	if !s.readOnly {
		return errors.New("pgstore: Refresh is for snapshots; a store holding the lease is the log's writer")
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, s.b.opts.Timeout)
	defer cancel()
	return s.load(ctx)
}

// heartbeat renews the lease until the store is closed or the lease is
// lost. A database that does not answer is retried: the lease is lost only
// when another process has taken it.
func (s *Store) heartbeat() {
	defer s.done.Done()
	t := time.NewTicker(s.b.opts.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-s.lost:
			return
		case <-t.C:
		}
		ctx, cancel := s.ctx()
		tag, err := s.b.pool.Exec(ctx, `UPDATE gohands_conversations SET lease_until = now() + $4 * interval '1 millisecond'
			WHERE id = $1 AND owner = $2 AND epoch = $3`, s.id, s.b.opts.Node, s.epoch, s.b.opts.Lease.Milliseconds())
		cancel()
		switch {
		case err != nil:
			s.b.opts.Logger.Warn("pgstore: renewing a lease", "conversation", s.id, "err", err)
		case tag.RowsAffected() == 0:
			s.markLost()
			return
		}
	}
}

func (s *Store) markLost() {
	s.lostOnce.Do(func() {
		s.b.opts.Logger.Error("pgstore: lease lost to another process; the conversation is read-only here", "conversation", s.id)
		close(s.lost)
	})
}

// abandon gives the conversation up after a write failed (writeMu
// held): what this process holds in memory may now differ from the
// database, so it never writes again and stops renewing the lease without
// releasing it. Once the lease expires a server takes the conversation
// over from the database, as after a crash: the crash-recovery rules
// answer the action in progress and a run resumes.
func (s *Store) abandon(err error) {
	s.abandoned = err
	s.lostOnce.Do(func() {
		s.b.opts.Logger.Error("pgstore: a write failed; the conversation is given up here until its lease expires", "conversation", s.id, "err", err)
		close(s.lost)
	})
}

// writable returns why the store cannot be written, or nil (writeMu held).
func (s *Store) writable() error {
	switch {
	case s.isClosed():
		return conversation.ErrClosed
	case s.readOnly:
		return ErrReadOnly
	case s.abandoned != nil:
		return fmt.Errorf("%w (after: %v)", ErrAbandoned, s.abandoned)
	case s.isLost():
		return ErrLeaseLost
	}
	return nil
}

func (s *Store) isLost() bool {
	select {
	case <-s.lost:
		return true
	default:
		return false
	}
}

func (s *Store) isClosed() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.closed
}

// ReadBase implements conversation.Store.
func (s *Store) ReadBase() ([]byte, error) {
	if s.isClosed() {
		return nil, conversation.ErrClosed
	}
	ctx, cancel := s.ctx()
	defer cancel()
	var base *string
	if err := s.b.pool.QueryRow(ctx, `SELECT base FROM gohands_conversations WHERE id = $1`, s.id).Scan(&base); err != nil {
		return nil, fmt.Errorf("pgstore: read base state of %s: %w", s.id, err)
	}
	if base == nil {
		return nil, nil
	}
	return []byte(*base), nil
}

// WriteBase implements conversation.Store.
func (s *Store) WriteBase(data []byte) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.writable(); err != nil {
		return err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	tag, err := s.b.pool.Exec(ctx, `UPDATE gohands_conversations SET base = $4, updated_at = now()
		WHERE id = $1 AND owner = $2 AND epoch = $3`, s.id, s.b.opts.Node, s.epoch, string(data))
	if err != nil {
		err = fmt.Errorf("pgstore: write base state of %s: %w", s.id, err)
		s.abandon(err)
		return err
	}
	if tag.RowsAffected() == 0 {
		s.markLost()
		return ErrLeaseLost
	}
	return nil
}

// Append implements conversation.Store. The event is stored in one
// statement that also checks the lease, so a process that lost its lease
// cannot add to the log.
func (s *Store) Append(e event.Event) (conversation.Entry, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.writable(); err != nil {
		return conversation.Entry{}, err
	}
	b := e.EventBase()
	if err := s.idx.CheckAppend(b.ID, b.ParentID); err != nil {
		return conversation.Entry{}, err
	}
	kind, ok := event.KindOf(e)
	if !ok {
		return conversation.Entry{}, fmt.Errorf("pgstore: %T has no registered kind", e)
	}
	data, err := event.Marshal(event.CompactArguments(e)) // large tool-call arguments kept once
	if err != nil {
		return conversation.Entry{}, fmt.Errorf("pgstore: encoding event %s: %w", b.ID, err)
	}
	i := s.idx.Len()
	ctx, cancel := s.ctx()
	defer cancel()
	// One round trip: the lease check, the activity time and the event.
	tag, err := s.b.pool.Exec(ctx, `
		WITH held AS (UPDATE gohands_conversations SET updated_at = now()
			WHERE id = $1 AND owner = $2 AND epoch = $3 RETURNING 1)
		INSERT INTO gohands_events (conversation_id, idx, id, kind, source, ts, body)
		SELECT $1, $4, $5, $6, $7, $8, $9 WHERE EXISTS (SELECT 1 FROM held)`,
		s.id, s.b.opts.Node, s.epoch, i, b.ID, kind, string(b.Source), b.Timestamp, string(data))
	if err != nil {
		err = fmt.Errorf("pgstore: append event %d to %s: %w", i, s.id, err)
		s.abandon(err)
		return conversation.Entry{}, err
	}
	if tag.RowsAffected() == 0 {
		s.markLost()
		return conversation.Entry{}, ErrLeaseLost
	}
	ent := conversation.EntryOf(i, e, kind, len(data))
	s.mu.Lock()
	s.data = append(s.data, data)
	s.mu.Unlock()
	s.idx.Add(ent)
	return ent, nil
}

// Len implements conversation.Store.
func (s *Store) Len() int { return s.idx.Len() }

// Entry implements conversation.Store.
func (s *Store) Entry(i int) (conversation.Entry, error) { return s.idx.Entry(i) }

// Lookup implements conversation.Store.
func (s *Store) Lookup(id string) (int, bool) { return s.idx.Lookup(id) }

// Entries implements conversation.Store.
func (s *Store) Entries() []conversation.Entry { return s.idx.Entries() }

// Search implements conversation.Store.
func (s *Store) Search(q conversation.Query) (conversation.Page, error) { return s.idx.Search(q) }

// Raw implements conversation.Store.
func (s *Store) Raw(i int) ([]byte, error) {
	if _, err := s.idx.Entry(i); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, conversation.ErrClosed
	}
	return s.data[i], nil
}

// Event implements conversation.Store.
func (s *Store) Event(i int) (event.Event, error) {
	raw, err := s.Raw(i)
	if err != nil {
		return nil, err
	}
	return event.Unmarshal(raw)
}

// Close implements conversation.Store: it stops the heartbeat and gives
// the lease up, so that another process may open the conversation at once.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	close(s.stop)
	s.done.Wait()
	s.writeMu.Lock()
	abandoned := s.abandoned != nil
	s.writeMu.Unlock()
	if abandoned || s.readOnly {
		return nil // the lease expires (see abandon), or there is none
	}
	return s.release()
}

func (s *Store) release() error {
	ctx, cancel := s.ctx()
	defer cancel()
	_, err := s.b.pool.Exec(ctx, `UPDATE gohands_conversations SET owner = NULL, lease_until = NULL
		WHERE id = $1 AND owner = $2 AND epoch = $3`, s.id, s.b.opts.Node, s.epoch)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("pgstore: release %s: %w", s.id, err)
	}
	return nil
}
