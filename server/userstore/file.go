// Package userstore keeps what the agent server stores for its user
// beside the conversations, in the reference's layout: settings.json,
// secrets.json and workspaces.json in one directory ($OH_PERSISTENCE_DIR,
// else ~/.openhands, shared with the reference's server and CLI).
//
// Files are written atomically with owner-only permissions, under an
// exclusive lock (flock on a .NAME.lock file beside them), so several
// servers on one directory do not lose each other's updates. Secret values
// are Fernet tokens of the server's secret key when it has one (a cipher
// with previous keys reads values saved before a rotation, and Reencrypt
// moves them to the current key); a file that exists but cannot be read
// is never overwritten (ErrUnreadable).
package userstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Dir returns the persistence directory: $OH_PERSISTENCE_DIR, else
// ~/.openhands. getenv is os.Getenv in a program.
func Dir(getenv func(string) string) (string, error) {
	if d := getenv("OH_PERSISTENCE_DIR"); d != "" {
		return filepath.Abs(d)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("userstore: %w", err)
	}
	return filepath.Join(home, ".openhands"), nil
}

// ErrUnreadable is returned by a change to a file that exists but cannot
// be decoded or decrypted: it is left as it is rather than replaced by
// defaults.
var ErrUnreadable = errors.New("userstore: file is corrupted or encrypted with a different key: restore that key as OH_SECRET_KEY or add it to OH_PREVIOUS_SECRET_KEYS")

// file is one JSON file of the store and its lock.
type file struct {
	dir, name string
}

func (f file) path() string { return filepath.Join(f.dir, f.name) }

// locked runs fn holding the file's exclusive lock.
func (f file) locked(fn func() error) error {
	if err := ensureDir(f.dir); err != nil {
		return err
	}
	lf, err := os.OpenFile(filepath.Join(f.dir, "."+trimExt(f.name)+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("userstore: %w", err)
	}
	defer lf.Close()
	unlock, err := lockFile(lf)
	if err != nil {
		return fmt.Errorf("userstore: lock %s: %w", f.name, err)
	}
	defer unlock()
	return fn()
}

func trimExt(name string) string { return name[:len(name)-len(filepath.Ext(name))] }

// read returns the file's bytes, or nil when it does not exist.
func (f file) read() ([]byte, error) {
	b, err := os.ReadFile(f.path())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("userstore: %w", err)
	}
	return b, nil
}

// write replaces the file with v as indented JSON: a temporary file made
// owner-only from the start, renamed over the old one.
func (f file) write(v any) error {
	if err := ensureDir(f.dir); err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("userstore: %w", err)
	}
	tmp, err := os.CreateTemp(f.dir, "."+f.name+".tmp*")
	if err != nil {
		return fmt.Errorf("userstore: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))); err != nil {
		tmp.Close()
		return fmt.Errorf("userstore: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("userstore: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("userstore: %w", err)
	}
	if err := os.Rename(tmp.Name(), f.path()); err != nil {
		return fmt.Errorf("userstore: %w", err)
	}
	return nil
}

func ensureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("userstore: %w", err)
	}
	return nil
}

// decode reads JSON keeping numbers as written.
func decode(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}
