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

func TestFileStore(t *testing.T) {
	storetest.Run(t, storetest.Factory{
		New: func(t *testing.T) conversation.Store {
			s, err := conversation.OpenFileStore(t.TempDir(), nil)
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
			s2, err := conversation.OpenFileStore(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			return s2
		},
	})
}

func TestFileStoreWriteBehind(t *testing.T) {
	opts := &conversation.FileOptions{WriteBehind: true}
	storetest.Run(t, storetest.Factory{
		New: func(t *testing.T) conversation.Store {
			s, err := conversation.OpenFileStore(t.TempDir(), opts)
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
			s2, err := conversation.OpenFileStore(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			return s2
		},
	})
}

// TestFileStoreDurable checks the fsync path; the full suite would spend
// seconds in fsync for nothing more.
func TestFileStoreDurable(t *testing.T) {
	dir := t.TempDir()
	s, err := conversation.OpenFileStore(dir, &conversation.FileOptions{Durable: true})
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
