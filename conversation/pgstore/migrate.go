package pgstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

// migrations are the schema's versions, applied in order of their number
// prefix; a migration is never edited once released, only followed.
//
//go:embed migrations/*.sql
var migrations embed.FS

// lockKey is the advisory lock serialising migrations across processes.
const lockKey = 0x676f68616e6473 // "gohands"

// migrate brings the schema to the newest version in one transaction.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(lockKey)); err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS gohands_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	var have int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM gohands_schema`).Scan(&have); err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	newest := 0
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		v, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("pgstore: migration %s: no version number", base)
		}
		newest = v
		if v <= have {
			continue
		}
		sql, err := migrations.ReadFile(name)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, string(sql)); err != nil {
			return fmt.Errorf("pgstore: migration %s: %w", base, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO gohands_schema (version) VALUES ($1)`, v); err != nil {
			return fmt.Errorf("pgstore: migration %s: %w", base, err)
		}
	}
	if have > newest {
		return fmt.Errorf("pgstore: the database's schema (version %d) is newer than this program's (%d)", have, newest)
	}
	return tx.Commit(ctx)
}
