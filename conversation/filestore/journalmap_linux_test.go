package filestore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMappedJournalFault: a journal truncated behind the store's back makes
// the mapped append fault. That append fails with an error instead of
// crashing the process, and the store goes on with pwrite.
func TestMappedJournalFault(t *testing.T) {
	dir := t.TempDir()
	s := openTestStore(t, dir, nil)
	appendTestEvents(t, s, 1)
	if s.wb.mapped == nil {
		t.Fatal("journal not mapped on Linux")
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(dir, JournalFile), 0); err != nil {
		t.Fatal(err)
	}
	_, err := s.Append(journalTestEvent(1))
	if err == nil || !strings.Contains(err.Error(), "mapped journal") {
		t.Fatalf("append into a truncated mapping: %v", err)
	}
	for i := 1; i < 4; i++ {
		if _, err := s.Append(journalTestEvent(i)); err != nil {
			t.Fatalf("append %d after the fault: %v", i, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTestStore(t, dir, nil)
	if s.Len() != 4 {
		t.Fatalf("Len = %d, want 4", s.Len())
	}
	for i := range 4 {
		if _, err := s.Event(t.Context(), i); err != nil {
			t.Error(err)
		}
	}
}
