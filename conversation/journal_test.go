//go:build unix

package conversation

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gohands/gohands/event"
)

func journalTestEvent(i int) event.Event {
	b := event.Base{ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), Timestamp: event.Now(), Source: event.SourceUser}
	return &event.PauseEvent{Base: b}
}

// TestJournalReplay simulates a write-behind process killed after
// journaling events but before writing their files.
func TestJournalReplay(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenFileStore(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := s.Append(journalTestEvent(i)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	var j []byte
	for i := 2; i < 6; i++ { // 2 is already written: replay must be idempotent
		e := journalTestEvent(i)
		data, _ := event.Marshal(e)
		ent := entryOf(i, e, "PauseEvent", len(data))
		line, _ := appendIndexLine(nil, &ent)
		j = appendJournalRecord(j, line, data)
	}
	j = j[:len(j)-7] // the last record is torn
	os.WriteFile(filepath.Join(dir, JournalFile), j, 0o644)

	s, err = OpenFileStore(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Len() != 5 {
		t.Fatalf("Len = %d, want 5 (3 written, 2 replayed, 1 torn)", s.Len())
	}
	for i := range 5 {
		if _, err := os.Stat(filepath.Join(dir, EventsDir, eventFileName(i, journalTestEvent(i).EventBase().ID))); err != nil {
			t.Errorf("event %d: %v", i, err)
		}
		if _, err := s.Event(i); err != nil {
			t.Errorf("event %d: %v", i, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, JournalFile)); !os.IsNotExist(err) {
		t.Errorf("journal left after replay: %v", err)
	}
}

func TestWriteBehindSyncWritesFiles(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenFileStore(dir, &FileOptions{WriteBehind: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 50 {
		if _, err := s.Append(journalTestEvent(i)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Raw(i); err != nil { // readable at once, from memory or file
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	names, _ := os.ReadDir(filepath.Join(dir, EventsDir))
	if len(names) != 51 { // 50 events and the lock
		t.Errorf("%d files after Sync", len(names))
	}
	// The journal empties once the writer is idle.
	for range 1000 {
		if fi, err := os.Stat(filepath.Join(dir, JournalFile)); err == nil && fi.Size() == 0 {
			return
		}
		s.Sync()
	}
	fi, _ := os.Stat(filepath.Join(dir, JournalFile))
	t.Errorf("journal still holds %d bytes when idle", fi.Size())
}
