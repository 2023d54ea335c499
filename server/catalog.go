package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/conversation/pgstore"
)

// catalog is where the server keeps its conversations: each one's event
// store and the server's record of it (meta.json). A directory is the
// default; a PostgreSQL database (Options.Postgres) is shared by several
// servers.
type catalog interface {
	backend() conversation.Backend
	// metas returns the record of every stored conversation, by dashed id.
	metas(ctx context.Context) (map[string]storedMeta, error)
	// meta returns one conversation's record; ok is false when it has none.
	meta(ctx context.Context, id string) (m storedMeta, ok bool, err error)
	saveMeta(ctx context.Context, id string, data []byte) error
	// readBase returns the base state without opening the conversation.
	readBase(ctx context.Context, id string) ([]byte, error)
	remove(ctx context.Context, id string) error
	// shared reports whether other servers use the catalog too.
	shared() bool
}

// dirCatalog is the reference's layout: a directory per conversation
// holding meta.json beside base_state.json and events/.
type dirCatalog struct{ root string }

func (d dirCatalog) backend() conversation.Backend { return filestore.NewBackend(d.root, nil) }
func (d dirCatalog) shared() bool                  { return false }
func (d dirCatalog) dir(id string) string          { return filestore.Dir(d.root, id) }

func (d dirCatalog) metas(ctx context.Context) (map[string]storedMeta, error) {
	ents, err := os.ReadDir(d.root)
	if err != nil {
		return nil, fmt.Errorf("server: listing conversations: %w", err)
	}
	out := make(map[string]storedMeta, len(ents))
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(d.root, e.Name())
		data, err := os.ReadFile(filepath.Join(dir, MetaFile))
		if err != nil {
			continue
		}
		m, id, err := decodeMeta(data)
		if err != nil {
			return out, fmt.Errorf("%s: %w", dir, err)
		}
		out[id] = m
	}
	return out, nil
}

func (d dirCatalog) meta(ctx context.Context, id string) (storedMeta, bool, error) {
	data, err := os.ReadFile(filepath.Join(d.dir(id), MetaFile))
	if errors.Is(err, fs.ErrNotExist) {
		return storedMeta{}, false, nil
	}
	if err != nil {
		return storedMeta{}, false, err
	}
	m, _, err := decodeMeta(data)
	return m, err == nil, err
}

func (d dirCatalog) saveMeta(ctx context.Context, id string, data []byte) error {
	dir := d.dir(id)
	tmp := filepath.Join(dir, MetaFile+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("writing meta.json: %w", err)
	}
	return os.Rename(tmp, filepath.Join(dir, MetaFile))
}

func (d dirCatalog) readBase(ctx context.Context, id string) ([]byte, error) {
	return os.ReadFile(filepath.Join(d.dir(id), filestore.BaseStateFile))
}

func (d dirCatalog) remove(ctx context.Context, id string) error { return os.RemoveAll(d.dir(id)) }

// decodeMeta decodes a meta.json and the dashed id it records.
func decodeMeta(data []byte) (storedMeta, string, error) {
	var m storedMeta
	if err := json.Unmarshal(data, &m); err != nil {
		return m, "", fmt.Errorf("unreadable meta.json: %w", err)
	}
	id, err := parseUUID(m.ID)
	if err != nil {
		return m, "", fmt.Errorf("bad id %q in meta.json", m.ID)
	}
	return m, id, nil
}

// pgCatalog keeps conversations and records in PostgreSQL.
type pgCatalog struct{ b *pgstore.Backend }

func (p pgCatalog) backend() conversation.Backend { return p.b }
func (p pgCatalog) shared() bool                  { return true }

func (p pgCatalog) metas(ctx context.Context) (map[string]storedMeta, error) {
	raw, err := p.b.Metas(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]storedMeta, len(raw))
	for id, data := range raw {
		m, _, err := decodeMeta(data)
		if err != nil {
			return out, fmt.Errorf("conversation %s: %w", id, err)
		}
		out[id] = m
	}
	return out, nil
}

func (p pgCatalog) meta(ctx context.Context, id string) (storedMeta, bool, error) {
	data, ok, err := p.b.Meta(ctx, id)
	if !ok || err != nil {
		return storedMeta{}, false, err
	}
	m, _, err := decodeMeta(data)
	return m, err == nil, err
}

func (p pgCatalog) saveMeta(ctx context.Context, id string, data []byte) error {
	return p.b.SetMeta(ctx, id, data)
}

func (p pgCatalog) readBase(ctx context.Context, id string) ([]byte, error) {
	return p.b.ReadBase(ctx, id)
}

func (p pgCatalog) remove(ctx context.Context, id string) error { return p.b.Delete(ctx, id) }
