package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// The methods below serve an application that keeps a record of its own
// per conversation (the agent server's meta.json) and shares conversations
// between processes.

// SetMeta stores the application's record of conversation id, creating
// the conversation if it is new. Any process may write it.
func (b *Backend) SetMeta(ctx context.Context, id string, meta []byte) error {
	_, err := b.pool.Exec(ctx, `INSERT INTO gohands_conversations (id, meta) VALUES ($1, $2)
		ON CONFLICT (id) DO UPDATE SET meta = EXCLUDED.meta, updated_at = now()`, id, string(meta))
	if err != nil {
		return fmt.Errorf("pgstore: save the record of %s: %w", id, err)
	}
	return nil
}

// Meta returns the application's record of conversation id; ok is false
// when there is none.
func (b *Backend) Meta(ctx context.Context, id string) (meta []byte, ok bool, err error) {
	var m *string
	err = b.pool.QueryRow(ctx, `SELECT meta FROM gohands_conversations WHERE id = $1`, id).Scan(&m)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && m == nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("pgstore: read the record of %s: %w", id, err)
	}
	return []byte(*m), true, nil
}

// Metas returns the records of every conversation that has one, by id.
func (b *Backend) Metas(ctx context.Context) (map[string][]byte, error) {
	rows, err := b.pool.Query(ctx, `SELECT id::text, meta FROM gohands_conversations WHERE meta IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("pgstore: list records: %w", err)
	}
	defer rows.Close()
	out := map[string][]byte{}
	for rows.Next() {
		var id, m string
		if err := rows.Scan(&id, &m); err != nil {
			return nil, fmt.Errorf("pgstore: list records: %w", err)
		}
		out[id] = []byte(m)
	}
	return out, rows.Err()
}

// ReadBase returns conversation id's base state without opening it (nil
// when it has none), for reading a conversation another process holds.
func (b *Backend) ReadBase(ctx context.Context, id string) ([]byte, error) {
	var base *string
	err := b.pool.QueryRow(ctx, `SELECT base FROM gohands_conversations WHERE id = $1`, id).Scan(&base)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && base == nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore: read the base state of %s: %w", id, err)
	}
	return []byte(*base), nil
}

// Owner returns the process holding conversation id's lease and until
// when; owner is "" when no live process holds it.
func (b *Backend) Owner(ctx context.Context, id string) (owner string, until time.Time, err error) {
	err = b.pool.QueryRow(ctx, `SELECT coalesce(owner, ''), coalesce(lease_until, 'epoch') FROM gohands_conversations
		WHERE id = $1 AND owner IS NOT NULL AND lease_until >= now()`, id).Scan(&owner, &until)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", time.Time{}, nil
	}
	if err != nil {
		return "", time.Time{}, fmt.Errorf("pgstore: owner of %s: %w", id, err)
	}
	return owner, until, nil
}

// Orphans returns the conversations whose owner died holding them: their
// lease expired without being given up. Another process should take them
// over and resume what was running.
func (b *Backend) Orphans(ctx context.Context) ([]string, error) {
	rows, err := b.pool.Query(ctx, `SELECT id::text FROM gohands_conversations WHERE owner IS NOT NULL AND lease_until < now() ORDER BY lease_until`)
	if err != nil {
		return nil, fmt.Errorf("pgstore: orphans: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// Held returns how many conversations this process holds the lease of
// (the database's count: leases of its Node not expired), for metrics.
func (b *Backend) Held(ctx context.Context) (int, error) {
	var n int
	err := b.pool.QueryRow(ctx, `SELECT count(*) FROM gohands_conversations WHERE owner = $1 AND lease_until >= now()`, b.opts.Node).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("pgstore: leases held: %w", err)
	}
	return n, nil
}
