// Package pgstore keeps conversations in PostgreSQL, so that several
// processes — agent servers behind one load balancer — share them.
//
// Each conversation is a row of gohands_conversations (its base state, its
// lease) and its events are rows of gohands_events keyed by (conversation,
// index), each holding the event's JSON exactly as the reference writes it
// (text, not jsonb, which would reorder keys), so an exported conversation
// is byte for byte what a file store holds.
//
// A conversation is written by one process at a time: Backend.Open takes
// a lease in the database (an owner, an epoch and an expiry renewed by a
// heartbeat) and fails with conversation.ErrLocked while another live
// process holds it. Every write names the epoch it was opened with, so a
// process whose lease expired and was taken over (it was partitioned, or
// paused) can never write again: its writes fail with ErrLeaseLost. The
// reference guards its file store with a lease file on one machine; this is
// the same contract across machines.
//
// The schema is created and migrated by Open, under an advisory lock, so
// that nodes starting together migrate once.
package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/gohands/gohands/conversation"
)

// ErrLeaseLost is returned by writes of a store whose lease another process
// has taken over.
var ErrLeaseLost = errors.New("pgstore: the conversation's lease was lost to another process")

// ErrAbandoned is returned by writes of a store after one of its writes
// failed (the database was unreachable, say): the process gave the
// conversation up, and it is opened again from the database, here or on
// another server, once its lease expires.
var ErrAbandoned = errors.New("pgstore: an earlier write failed; the conversation must be opened again")

// Options configure a Backend. A nil *Options is the default.
type Options struct {
	// Node names this process in leases (default: host name, process id
	// and a random suffix).
	Node string
	// Lease is how long a lease lasts without a heartbeat (default 15 s);
	// a dead process's conversations can be taken over after it.
	Lease time.Duration
	// Timeout bounds each database operation of a store (default 30 s).
	Timeout time.Duration
	// Logger receives diagnostics (nil: slog.Default()).
	Logger *slog.Logger
}

// Backend is a conversation.Backend keeping conversations in PostgreSQL.
type Backend struct {
	pool *pgxpool.Pool
	opts Options
}

var _ conversation.Backend = (*Backend)(nil)

// Open connects to the database dsn (a postgres:// URL or key=value
// string), creates or migrates the schema, and returns the backend.
func Open(ctx context.Context, dsn string, opts *Options) (*Backend, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Node == "" {
		host, _ := os.Hostname()
		var r [4]byte
		rand.Read(r[:])
		o.Node = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(r[:]))
	}
	if o.Lease <= 0 {
		o.Lease = 15 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return &Backend{pool: pool, opts: o}, nil
}

// Node returns the name this backend's leases carry.
func (b *Backend) Node() string { return b.opts.Node }

// Pool returns the backend's connection pool, for callers that share it
// (listening for notifications, say).
func (b *Backend) Pool() *pgxpool.Pool { return b.pool }

// Close closes the backend's connections. Stores opened from it must be
// closed first.
func (b *Backend) Close() { b.pool.Close() }

// Open implements conversation.Backend: it takes the lease of conversation
// id (creating the conversation if it is new) and loads its events. It
// fails with conversation.ErrLocked while another process holds the lease.
func (b *Backend) Open(ctx context.Context, id string) (conversation.Store, error) {
	ctx, cancel := context.WithTimeout(ctx, b.opts.Timeout)
	defer cancel()
	var epoch int64
	err := b.pool.QueryRow(ctx, `
		INSERT INTO gohands_conversations (id, owner, epoch, lease_until)
		VALUES ($1, $2, 1, now() + $3 * interval '1 millisecond')
		ON CONFLICT (id) DO UPDATE
		SET owner = EXCLUDED.owner, epoch = gohands_conversations.epoch + 1, lease_until = EXCLUDED.lease_until
		WHERE gohands_conversations.owner IS NULL OR gohands_conversations.lease_until < now()
		RETURNING epoch`, id, b.opts.Node, b.opts.Lease.Milliseconds()).Scan(&epoch)
	if errors.Is(err, pgx.ErrNoRows) {
		var owner string
		var until time.Time
		b.pool.QueryRow(ctx, `SELECT coalesce(owner, ''), coalesce(lease_until, now()) FROM gohands_conversations WHERE id = $1`, id).Scan(&owner, &until)
		return nil, fmt.Errorf("pgstore: conversation %s is held by %s until %s: %w", id, owner, until.Format(time.RFC3339), conversation.ErrLocked)
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore: open %s: %w", id, err)
	}
	s := &Store{b: b, id: id, epoch: epoch, stop: make(chan struct{}), lost: make(chan struct{})}
	if err := s.load(ctx); err != nil {
		s.release()
		return nil, err
	}
	s.done.Add(1)
	go s.heartbeat()
	return s, nil
}

// ErrReadOnly is returned by writes of a Snapshot.
var ErrReadOnly = errors.New("pgstore: a snapshot is read-only")

// Snapshot is a conversation's log as stored at one moment, read without
// its lease: whichever process holds the conversation, or none, any
// process can serve its reads from the database, and a holder's death
// costs them nothing. Appends to it, and writes to its store, fail with
// ErrReadOnly. A snapshot does not change: Refresh returns a newer one.
type Snapshot struct {
	*conversation.Log
	s *Store
}

// Snapshot returns conversation id's events as stored now. A conversation
// that does not exist reads as empty.
func (b *Backend) Snapshot(ctx context.Context, id string) (*Snapshot, error) {
	return b.snapshot(ctx, id, nil)
}

// snapshot reads the events of conversation id after those of prev (nil:
// from the start) and returns a snapshot of them all.
func (b *Backend) snapshot(ctx context.Context, id string, prev *Snapshot) (*Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, b.opts.Timeout)
	defer cancel()
	s := &Store{b: b, id: id, readOnly: true, stop: make(chan struct{}), lost: make(chan struct{})}
	if prev != nil {
		// What prev read is not read again: its JSON is shared, its
		// entries copied.
		s.data = prev.s.data[:len(prev.s.data):len(prev.s.data)]
		s.loaded = append([]conversation.Entry(nil), prev.Entries()...)
	}
	if err := s.load(ctx); err != nil {
		return nil, err
	}
	log, err := conversation.LoadLog(ctx, s)
	if err != nil {
		return nil, err
	}
	return &Snapshot{log, s}, nil
}

// Refresh returns a snapshot that adds to sn the events stored since it
// was taken.
func (sn *Snapshot) Refresh(ctx context.Context) (*Snapshot, error) {
	return sn.s.b.snapshot(ctx, sn.s.id, sn)
}

// Close releases the snapshot; it holds no lease.
func (sn *Snapshot) Close() error { return sn.s.Close() }

// Info describes a stored conversation.
type Info struct {
	ID string
	// Owner is the process holding its lease, "" when none does.
	Owner      string
	LeaseUntil time.Time
	UpdatedAt  time.Time
	Events     int
}

// List returns the stored conversations, most recently updated first.
func (b *Backend) List(ctx context.Context) ([]Info, error) {
	rows, err := b.pool.Query(ctx, `
		SELECT c.id::text, coalesce(c.owner, ''), coalesce(c.lease_until, 'epoch'), c.updated_at,
		       (SELECT count(*) FROM gohands_events e WHERE e.conversation_id = c.id)
		FROM gohands_conversations c ORDER BY c.updated_at DESC, c.id`)
	if err != nil {
		return nil, fmt.Errorf("pgstore: list: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Info, error) {
		var i Info
		err := r.Scan(&i.ID, &i.Owner, &i.LeaseUntil, &i.UpdatedAt, &i.Events)
		return i, err
	})
}

// Delete removes a conversation and its events. It fails with
// conversation.ErrLocked while a live process holds its lease.
func (b *Backend) Delete(ctx context.Context, id string) error {
	tag, err := b.pool.Exec(ctx, `DELETE FROM gohands_conversations WHERE id = $1 AND (owner IS NULL OR lease_until < now())`, id)
	if err != nil {
		return fmt.Errorf("pgstore: delete %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		var n int
		b.pool.QueryRow(ctx, `SELECT count(*) FROM gohands_conversations WHERE id = $1`, id).Scan(&n)
		if n > 0 {
			return fmt.Errorf("pgstore: delete %s: %w", id, conversation.ErrLocked)
		}
	}
	return nil
}

// Lease returns how long this backend's leases last without a heartbeat.
func (b *Backend) Lease() time.Duration { return b.opts.Lease }
