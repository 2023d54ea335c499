//go:build unix

package filestore_test

import (
	"context"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
)

func openFile(t testing.TB, dir string) *filestore.Store {
	t.Helper()
	s, err := filestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// logStore is a file store with the log a conversation keeps over it:
// the tests append and read through the log, as a State does, and reach
// the store's own methods (Dir, Sync, Close).
type logStore struct {
	*filestore.Store
	*conversation.Log
}

func (s logStore) Append(e event.Event) (conversation.Entry, error) {
	return s.Log.Append(context.Background(), e)
}

func (s logStore) Raw(i int) ([]byte, error) { return s.Log.Raw(context.Background(), i) }

func (s logStore) ReadBase() ([]byte, error) { return s.Store.ReadBase(context.Background()) }

func (s logStore) WriteBase(data []byte) error {
	return s.Store.WriteBase(context.Background(), data)
}

// openLog is filestore.Open that also loads the log.
func openLog(dir string, opts *filestore.Options) (logStore, error) {
	s, err := filestore.Open(dir, opts)
	if err != nil {
		return logStore{}, err
	}
	log, err := conversation.LoadLog(context.Background(), s)
	if err != nil {
		s.Close()
		return logStore{}, err
	}
	return logStore{s, log}, nil
}

// openLogT is openLog failing the test on an error.
func openLogT(t testing.TB, dir string) logStore {
	t.Helper()
	s, err := openLog(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
