//go:build unix

package filestore

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/conversation"
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
	s := openTestStore(t, dir, &Options{WriteThrough: true})
	appendTestEvents(t, s, 3)
	s.Close()
	var j []byte
	for i := 2; i < 6; i++ { // 2 is already written: replay must be idempotent
		j, _, _ = appendJournalRecord(j, i, journalTestEvent(i))
	}
	j = j[:len(j)-7] // the last record is torn
	os.WriteFile(filepath.Join(dir, JournalFile), j, 0o644)

	s = openTestStore(t, dir, &Options{WriteThrough: true})
	if s.Len() != 5 {
		t.Fatalf("Len = %d, want 5 (3 written, 2 replayed, 1 torn)", s.Len())
	}
	for i := range 5 {
		if _, err := os.Stat(filepath.Join(dir, EventsDir, eventFileName(i, journalTestEvent(i).EventBase().ID))); err != nil {
			t.Errorf("event %d: %v", i, err)
		}
		if _, err := s.Event(t.Context(), i); err != nil {
			t.Errorf("event %d: %v", i, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, JournalFile)); !os.IsNotExist(err) {
		t.Errorf("journal left after replay: %v", err)
	}
}

func TestWriteBehindSyncWritesFiles(t *testing.T) {
	dir := t.TempDir()
	s := openTestStore(t, dir, nil)
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
	// A clean close leaves nothing to replay.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, JournalFile)); err != nil || fi.Size() != 0 {
		t.Errorf("journal after Close: %v, %v", fi.Size(), err)
	}
}

// TestJournalStaleTail: after a rewind the journal holds the live records
// followed by older ones; only the live ones are replayed.
func TestJournalStaleTail(t *testing.T) {
	dir := t.TempDir()
	s := openTestStore(t, dir, nil)
	appendTestEvents(t, s, 4)
	s.Close()
	record := func(j []byte, i int) []byte {
		j, _, err := appendJournalRecord(j, i, journalTestEvent(i))
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	// Live: 4 and 5 (not yet in files); stale: 1, 2, 3 from before the rewind.
	var j []byte
	for _, i := range []int{4, 5, 1, 2, 3} {
		j = record(j, i)
	}
	os.WriteFile(filepath.Join(dir, JournalFile), j, 0o644)
	if got := parseJournal(j); len(got) != 2 || got[0].idx != 4 || got[1].idx != 5 {
		t.Fatalf("parseJournal = %+v, want records 4 and 5", got)
	}
	s = openTestStore(t, dir, nil)
	if s.Len() != 6 {
		t.Fatalf("Len = %d, want 6", s.Len())
	}
	for i := range 6 {
		if _, err := s.Event(t.Context(), i); err != nil {
			t.Errorf("event %d: %v", i, err)
		}
	}
}

// TestWriteBehindRewind: once the writer is idle the next record goes to
// offset 0, so the journal does not grow with the conversation.
func TestWriteBehindRewind(t *testing.T) {
	dir := t.TempDir()
	s := openTestStore(t, dir, nil)
	var size int64
	for i := range 20 {
		if _, err := s.Append(journalTestEvent(i)); err != nil {
			t.Fatal(err)
		}
		if err := s.Sync(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(filepath.Join(dir, JournalFile))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			size = fi.Size()
		} else if fi.Size() > size+8 { // longer index numbers
			t.Fatalf("journal grew to %d bytes after %d idle appends of %d bytes each", fi.Size(), i+1, size)
		}
	}
}

// TestWriteBehindLargeEvent: a record larger than the mapped part of the
// journal goes through pwrite; later ones use the mapping again.
func TestWriteBehindLargeEvent(t *testing.T) {
	dir := t.TempDir()
	s := openTestStore(t, dir, nil)
	big := &event.MessageEvent{
		Base:       event.Base{ID: "00000000-0000-4000-8000-0000000000b1", Timestamp: event.Now(), Source: event.SourceUser},
		LLMMessage: event.UserMessage(strings.Repeat("0123456789abcdef\n", 2*journalMapSize/17)),
	}
	want, _ := event.Marshal(big)
	evs := []event.Event{journalTestEvent(0), big, journalTestEvent(2)}
	for _, e := range evs {
		if _, err := s.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	if raw, err := s.Raw(1); err != nil || !bytes.Equal(raw, want) {
		t.Fatalf("Raw(1) before its file is written: %d bytes, %v", len(raw), err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	// The background writer rewinds buf under wb.mu once it has drained,
	// which may be after Sync returns: wait for it (a hang guard, not a
	// deadline).
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		s.wb.mu.Lock()
		remapped := s.wb.mapped == nil || s.wb.inMap(s.wb.buf)
		s.wb.mu.Unlock()
		if remapped {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("after a rewind the journal buffer is not the mapping again")
		}
	}
	if _, err := s.Append(journalTestEvent(3)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	got, err := os.ReadFile(filepath.Join(dir, EventsDir, eventFileName(1, big.ID)))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("event file of the large event: %d bytes, %v", len(got), err)
	}
	s = openTestStore(t, dir, nil)
	if s.Len() != 4 {
		t.Errorf("Len = %d after reopening, want 4", s.Len())
	}
}

// TestWriteBehindBacklogBounded: an appender faster than file creation
// waits for the writer instead of growing the backlog without bound.
func TestWriteBehindBacklogBounded(t *testing.T) {
	dir := t.TempDir()
	s := openTestStore(t, dir, nil)
	for i := range 3 * maxBacklog {
		if _, err := s.Append(journalTestEvent(i)); err != nil {
			t.Fatal(err)
		}
		s.wb.mu.Lock()
		n := len(s.wb.pending)
		s.wb.mu.Unlock()
		if n > maxBacklog {
			t.Fatalf("%d events pending after append %d", n, i)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
}

// TestReadOnlyOpenHasNoJournal: a store that is only read creates no
// journal (and starts no writer).
func TestReadOnlyOpenHasNoJournal(t *testing.T) {
	dir := t.TempDir()
	s := openTestStore(t, dir, nil)
	appendTestEvents(t, s, 1)
	s.Close()
	os.Remove(filepath.Join(dir, JournalFile))
	s = openTestStore(t, dir, nil)
	if _, err := s.Event(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, JournalFile)); !os.IsNotExist(err) {
		t.Errorf("journal after a read-only open: %v", err)
	}
}

// FuzzParseJournal: whatever a crash leaves in the journal, parsing never
// panics and yields only intact records with consecutive indexes.
func FuzzParseJournal(f *testing.F) {
	var j []byte
	for i := range 3 {
		j, _, _ = appendJournalRecord(j, i+7, journalTestEvent(i))
	}
	f.Add(j)
	f.Add(j[:len(j)-5])
	f.Add(append(bytes.Clone(j[:40]), j...))
	f.Fuzz(func(t *testing.T, b []byte) {
		recs := parseJournal(b)
		for k, r := range recs {
			if k > 0 && r.idx != recs[k-1].idx+1 {
				t.Fatalf("record %d has index %d after %d", k, r.idx, recs[k-1].idx)
			}
			if r.id == "" || len(r.data) > len(b) {
				t.Fatalf("record %d: id %q, %d bytes of %d", k, r.id, len(r.data), len(b))
			}
		}
	})
}

// openTestStore opens dir, closing the store when the test ends (Close is
// idempotent, so tests may close it earlier).
// testStore is a Store with the log a conversation keeps over it: the
// tests append and read through the log, as a State does.
type testStore struct {
	*Store
	*conversation.Log
}

func (s testStore) Append(e event.Event) (conversation.Entry, error) {
	return s.Log.Append(context.Background(), e)
}

func (s testStore) Raw(i int) ([]byte, error) { return s.Log.Raw(context.Background(), i) }

func openTestStore(t *testing.T, dir string, opts *Options) testStore {
	t.Helper()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	log, err := conversation.LoadLog(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	return testStore{s, log}
}

// appendTestEvents appends journalTestEvent(0) to journalTestEvent(n-1).
func appendTestEvents(t *testing.T, s testStore, n int) {
	t.Helper()
	for i := range n {
		if _, err := s.Append(journalTestEvent(i)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWriteBehindFailureSurfaces: when the background write of an event's
// file fails, Sync and the next Append report it, so nothing that depends
// on the event being stored (the next action, which needs its own event
// appended first) goes on as if it were (issue 17 item 7).
func TestWriteBehindFailureSurfaces(t *testing.T) {
	dir := t.TempDir()
	s := openTestStore(t, dir, nil)
	e0 := journalTestEvent(0)
	// A directory where the event's file goes: its write fails, even as root.
	if err := os.Mkdir(filepath.Join(dir, EventsDir, eventFileName(0, e0.EventBase().ID)), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(e0); err != nil {
		t.Fatalf("journaled append: %v", err)
	}
	if err := s.Sync(); err == nil {
		t.Fatal("Sync after a failed background write: no error")
	}
	if _, err := s.Append(journalTestEvent(1)); err == nil {
		t.Fatal("Append after a failed background write: no error")
	}
}
