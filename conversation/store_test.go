package conversation_test

import (
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/storetest"
)

func TestMemoryStore(t *testing.T) {
	storetest.Run(t, storetest.Factory{
		New: func(*testing.T) conversation.Store { return conversation.NewMemoryStore() },
	})
}

// TestFileStore runs the suite on both ways of persisting an append.
func TestFileStore(t *testing.T) {
	for _, m := range []struct {
		name string
		opts *conversation.FileOptions
	}{{"write-behind", nil}, {"write-through", &conversation.FileOptions{WriteThrough: true}}} {
		t.Run(m.name, func(t *testing.T) {
			storetest.Run(t, storetest.Factory{
				New: func(t *testing.T) conversation.Store {
					s, err := conversation.OpenFileStore(t.TempDir(), m.opts)
					if err != nil {
						t.Fatal(err)
					}
					return s
				},
				Reopen: func(t *testing.T, s conversation.Store) conversation.Store {
					dir := s.(*conversation.FileStore).Dir()
					if err := s.Close(); err != nil {
						t.Fatal(err)
					}
					s2, err := conversation.OpenFileStore(dir, m.opts)
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
	t.Run("write-behind", func(t *testing.T) { testDurable(t, &conversation.FileOptions{Durable: true}) })
	t.Run("write-through", func(t *testing.T) { testDurable(t, &conversation.FileOptions{Durable: true, WriteThrough: true}) })
}

func testDurable(t *testing.T, opts *conversation.FileOptions) {
	dir := t.TempDir()
	s, err := conversation.OpenFileStore(dir, opts)
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
	s, err = conversation.OpenFileStore(dir, nil)
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
