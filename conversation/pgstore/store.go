package pgstore

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
)

// Store is one conversation kept in PostgreSQL, held under a lease. It
// keeps the events' JSON in memory, as the file store's page cache would,
// so that reads cost no round trip.
type Store struct {
	b     *Backend
	id    string
	epoch int64
	// readOnly is a Snapshot's: no lease, writes fail.
	readOnly bool

	writeMu sync.Mutex // serialises appends and base writes

	mu     sync.RWMutex // guards data, loaded and closed
	data   [][]byte
	closed bool
	// loaded holds the entries of the events read at open until Load
	// hands them over; loadedOnce is set when it has.
	loaded     []conversation.Entry
	loadedOnce bool

	stop      chan struct{}
	lost      chan struct{}
	lostOnce  sync.Once
	abandoned error // set once, under writeMu: the write that failed
	done      sync.WaitGroup
}

var (
	_ conversation.Store       = (*Store)(nil)
	_ conversation.KindedStore = (*Store)(nil)
)

// ID returns the conversation's id.
func (s *Store) ID() string { return s.id }

// StoreKind implements conversation.KindedStore.
func (s *Store) StoreKind() string { return "postgres" }

// Lost is closed when the store's lease is found taken over by another
// process; its writes fail from then on.
func (s *Store) Lost() <-chan struct{} { return s.lost }

func (s *Store) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.b.opts.Timeout)
}

// load reads the conversation's events into memory, those after the ones
// it holds, and adds their entries to what Load yields.
func (s *Store) load(ctx context.Context) error {
	from := len(s.data)
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
		entries = append(entries, ent)
		data = append(data, []byte(body))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("pgstore: load %s: %w", s.id, err)
	}
	s.mu.Lock()
	s.data = append(s.data, data...)
	s.loaded = append(s.loaded, entries...)
	s.mu.Unlock()
	return nil
}

// Load implements conversation.Store: it yields the events read at open,
// in one batch. It can be called once.
func (s *Store) Load(context.Context) iter.Seq2[[]conversation.Entry, error] {
	return func(yield func([]conversation.Entry, error) bool) {
		s.mu.Lock()
		ents, again := s.loaded, s.loadedOnce
		s.loaded, s.loadedOnce = nil, true
		s.mu.Unlock()
		if again {
			yield(nil, fmt.Errorf("pgstore: conversation %s was loaded already", s.id))
			return
		}
		if len(ents) > 0 {
			yield(ents, nil)
		}
	}
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
func (s *Store) ReadBase(ctx context.Context) ([]byte, error) {
	if s.isClosed() {
		return nil, conversation.ErrClosed
	}
	ctx, cancel := context.WithTimeout(ctx, s.b.opts.Timeout)
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
func (s *Store) WriteBase(ctx context.Context, data []byte) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.writable(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.b.opts.Timeout)
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
func (s *Store) Append(ctx context.Context, ent conversation.Entry, e event.Event) (conversation.Entry, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.writable(); err != nil {
		return conversation.Entry{}, err
	}
	i := ent.Index
	if n := s.len(); i != n {
		return conversation.Entry{}, fmt.Errorf("pgstore: append at index %d of a log of %d events", i, n)
	}
	data, err := event.Marshal(event.CompactArguments(e)) // large tool-call arguments kept once
	if err != nil {
		return conversation.Entry{}, fmt.Errorf("pgstore: encoding event %s: %w", ent.ID, err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.b.opts.Timeout)
	defer cancel()
	// One round trip: the lease check, the activity time and the event.
	tag, err := s.b.pool.Exec(ctx, `
		WITH held AS (UPDATE gohands_conversations SET updated_at = now()
			WHERE id = $1 AND owner = $2 AND epoch = $3 RETURNING 1)
		INSERT INTO gohands_events (conversation_id, idx, id, kind, source, ts, body)
		SELECT $1, $4, $5, $6, $7, $8, $9 WHERE EXISTS (SELECT 1 FROM held)`,
		s.id, s.b.opts.Node, s.epoch, i, ent.ID, ent.Kind, string(ent.Source), ent.Timestamp, string(data))
	if err != nil {
		err = fmt.Errorf("pgstore: append event %d to %s: %w", i, s.id, err)
		s.abandon(err)
		return conversation.Entry{}, err
	}
	if tag.RowsAffected() == 0 {
		s.markLost()
		return conversation.Entry{}, ErrLeaseLost
	}
	ent.Size = len(data)
	s.mu.Lock()
	s.data = append(s.data, data)
	s.mu.Unlock()
	return ent, nil
}

func (s *Store) len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.data)
}

// Raw implements conversation.Store.
func (s *Store) Raw(_ context.Context, ent conversation.Entry) ([]byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, conversation.ErrClosed
	}
	if ent.Index < 0 || ent.Index >= len(s.data) {
		return nil, fmt.Errorf("%w: %d of %d", conversation.ErrIndexOutOfRange, ent.Index, len(s.data))
	}
	return s.data[ent.Index], nil
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
