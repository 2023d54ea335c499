//go:build unix

package filestore_test

import (
	"github.com/gohands/gohands/conversation/filestore"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/storetest"
)

// TestFileStore runs the suite on both ways of persisting an append.
func TestFileStore(t *testing.T) {
	for _, m := range []struct {
		name string
		opts *filestore.Options
	}{{"write-behind", nil}, {"write-through", &filestore.Options{WriteThrough: true}}} {
		t.Run(m.name, func(t *testing.T) {
			storetest.Run(t, storetest.Factory{
				New: func(t *testing.T) conversation.Store {
					s, err := filestore.Open(t.TempDir(), m.opts)
					if err != nil {
						t.Fatal(err)
					}
					return s
				},
				Reopen: func(t *testing.T, s conversation.Store) conversation.Store {
					dir := s.(*filestore.Store).Dir()
					if err := s.Close(); err != nil {
						t.Fatal(err)
					}
					s2, err := filestore.Open(dir, m.opts)
					if err != nil {
						t.Fatal(err)
					}
					return s2
				},
			})
		})
	}
}

// TestFileStoreDurable checks the fsync path; the full suite would spend
// seconds in fsync for nothing more.
func TestFileStoreDurable(t *testing.T) {
	t.Run("write-behind", func(t *testing.T) { testDurable(t, &filestore.Options{Durable: true}) })
	t.Run("write-through", func(t *testing.T) { testDurable(t, &filestore.Options{Durable: true, WriteThrough: true}) })
}

func testDurable(t *testing.T, opts *filestore.Options) {
	dir := t.TempDir()
	s, err := openLog(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	evs := storetest.Events(5)
	for _, e := range evs {
		if _, err := s.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.WriteBase([]byte(`{"id":"d"}`)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = openLog(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Len() != 5 {
		t.Fatalf("Len = %d after reopen", s.Len())
	}
	if b, _ := s.ReadBase(); string(b) != `{"id":"d"}` {
		t.Fatalf("base = %s", b)
	}
}
