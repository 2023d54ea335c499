package filestore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/conversation/internal/convtest"
	"github.com/gohands/gohands/event"

	"golang.org/x/sys/unix"
)

func TestLockExcludesSecondProcess(t *testing.T) {
	dir := t.TempDir()
	_, sc, send := startChild(t, "locker", dir)
	expectLine(t, sc, "locked")
	_, err := openLog(dir, &filestore.Options{LockTimeout: 50 * time.Millisecond})
	if !errors.Is(err, conversation.ErrLocked) {
		t.Fatalf("open while another process holds the lock: err = %v", err)
	}
	send("release")
	expectLine(t, sc, "released")
	s, err := openLog(dir, nil)
	if err != nil {
		t.Fatalf("open after release: %v", err)
	}
	s.Close()
}

func TestKilledWriterLosesNothing(t *testing.T) {
	t.Run("sync", func(t *testing.T) { testKilledWriter(t, "WB=0") })
	t.Run("write-behind", func(t *testing.T) { testKilledWriter(t, "WB=1") })
}

func testKilledWriter(t *testing.T, mode string) {
	for round := range 3 {
		dir := t.TempDir()
		cmd, sc, _ := startChild(t, "writer", dir, mode)
		var committed []string
		deadline := 20 + round*37
		for len(committed) < deadline && sc.Scan() {
			line := sc.Text()
			if id, ok := strings.CutPrefix(line, "event "); ok {
				committed = append(committed, id)
			} else {
				t.Fatalf("child: %s", line)
			}
		}
		// Kill it mid-stream: it keeps appending while we read.
		cmd.Process.Signal(unix.SIGKILL)
		cmd.Wait()

		fs, err := filestore.Open(dir, nil)
		if err != nil {
			t.Fatalf("round %d: open after kill: %v", round, err)
		}
		st, err := conversation.Open(context.Background(), fs, nil)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		s := st.Events()
		n := s.Len()
		if n < len(committed)+1 { // +1 for the user message
			t.Fatalf("round %d: %d events on disk, %d were committed", round, n, len(committed)+1)
		}
		for _, id := range committed {
			if _, ok := s.Lookup(id); !ok {
				t.Fatalf("round %d: committed event %s lost", round, id)
			}
		}
		for i := range n {
			if _, err := s.Event(t.Context(), i); err != nil {
				t.Fatalf("round %d: event %d: %v", round, i, err)
			}
		}
		// Every event file left is in the log or set aside.
		names, _ := os.ReadDir(filepath.Join(dir, filestore.EventsDir))
		for _, e := range names {
			name := e.Name()
			if name == filestore.LockFile || strings.HasSuffix(name, filestore.TornSuffix) {
				continue
			}
			if !strings.HasPrefix(name, "event-") {
				t.Errorf("unexpected file %s", name)
			}
		}
		if st.Fields().ExecutionStatus != conversation.StatusRunning {
			t.Fatalf("status = %s", st.Fields().ExecutionStatus)
		}
		last, _ := s.Entry(n - 1)
		errEv, err := st.RecoverRunning()
		if err != nil {
			t.Fatal(err)
		}
		if st.Fields().ExecutionStatus != conversation.StatusError {
			t.Errorf("status after recovery = %s", st.Fields().ExecutionStatus)
		}
		if last.Kind == "ActionEvent" {
			if errEv == nil || errEv.ToolCallID != last.ToolCallID || errEv.ToolName != "terminal" ||
				errEv.Error != conversation.RestartError || errEv.ParentID != last.ID ||
				errEv.Classification != (event.ErrorClassification{Kind: "internal", UserAction: "none"}) {
				t.Errorf("recovery event = %+v for unanswered %+v", errEv, last)
			}
		} else if errEv != nil {
			t.Errorf("recovery answered an action that was answered: %+v", errEv)
		}
		if got := s.Len(); got != n+btoi(errEv != nil) {
			t.Errorf("log has %d events after recovery, want %d", got, n+btoi(errEv != nil))
		}
		st.Close()
		// Recovery is done once: reopening finds nothing to do.
		st, err = conversation.Open(context.Background(), openFile(t, dir), nil)
		if err != nil {
			t.Fatal(err)
		}
		if again, _ := st.RecoverRunning(); again != nil {
			t.Errorf("second recovery appended %+v", again)
		}
		st.Close()
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// writeLog writes n events through a file store and returns the directory.
func writeLog(t *testing.T, n int) (string, []event.Event) {
	t.Helper()
	f := convtest.NewFields()
	dir := filestore.Dir(t.TempDir(), f.ID) // named by the id, as a Backend names it
	st, err := conversation.Create(context.Background(), openFile(t, dir), f, nil)
	if err != nil {
		t.Fatal(err)
	}
	var evs []event.Event
	for i := 0; len(evs) < n; i++ {
		a, o := convtest.ActionCycle(i, 300)
		evs = append(evs, a, o)
	}
	evs = evs[:n]
	for _, e := range evs {
		if _, err := st.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	return dir, evs
}

func eventPath(dir string, i int, id string) string {
	return filepath.Join(dir, filestore.EventsDir, fmt.Sprintf("event-%05d-%s.json", i, id))
}

func TestTornLastEventSetAside(t *testing.T) {
	for _, tear := range []struct {
		name string
		cut  func([]byte) []byte
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }},
		{"empty", func([]byte) []byte { return nil }},
		{"no closing brace", func(b []byte) []byte { return b[:len(b)-1] }},
	} {
		t.Run(tear.name, func(t *testing.T) {
			dir, evs := writeLog(t, 6)
			os.Remove(filepath.Join(dir, filestore.IndexFile)) // as if the index line was never written
			last := eventPath(dir, 5, evs[5].EventBase().ID)
			b, err := os.ReadFile(last)
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(last, tear.cut(b), 0o644)
			s, err := openLog(dir, nil)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer s.Close()
			if s.Len() != 5 {
				t.Errorf("Len = %d, want 5", s.Len())
			}
			if _, err := os.Stat(last + filestore.TornSuffix); err != nil {
				t.Errorf("torn file not set aside: %v", err)
			}
			// The slot is free again: the next append takes index 5.
			a, _ := convtest.ActionCycle(99, 10)
			a.ParentID = evs[4].EventBase().ID
			if ent, err := s.Append(a); err != nil || ent.Index != 5 {
				t.Errorf("append after recovery: %+v, %v", ent, err)
			}
		})
	}
}

func TestCorruptMiddleEventIsAnError(t *testing.T) {
	dir, evs := writeLog(t, 6)
	os.Remove(filepath.Join(dir, filestore.IndexFile))
	p := eventPath(dir, 2, evs[2].EventBase().ID)
	os.WriteFile(p, []byte(`{"id":`), 0o644)
	_, err := openLog(dir, nil)
	if err == nil || !strings.Contains(err.Error(), "event 2") {
		t.Fatalf("err = %v, want one naming event 2", err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Errorf("the corrupt file was moved: %v", err)
	}
}

func TestReaderRules(t *testing.T) {
	dir, evs := writeLog(t, 6)
	os.Remove(filepath.Join(dir, filestore.IndexFile))
	// Stray files are ignored.
	os.WriteFile(filepath.Join(dir, filestore.EventsDir, "notes.txt"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, filestore.EventsDir, "event-1-abcdefab.json"), []byte("{}"), 0o644)
	s, err := openLog(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 6 {
		t.Errorf("Len = %d, want 6", s.Len())
	}
	s.Close()
	// A gap is damage: the reference's reader would drop what follows it
	// silently, and an append would interleave new events with those files.
	os.Remove(eventPath(dir, 3, evs[3].EventBase().ID))
	_, err = openLog(dir, nil)
	var de *filestore.DamageError
	if !errors.Is(err, filestore.ErrDamaged) || !errors.As(err, &de) || de.Index != 3 ||
		!strings.Contains(err.Error(), "event file 3 is missing and 2 later event files follow it") {
		t.Fatalf("open with a gap at 3: err = %v", err)
	}
}

func TestDuplicateIDKeepsFirst(t *testing.T) {
	dir, evs := writeLog(t, 3)
	os.Remove(filepath.Join(dir, filestore.IndexFile))
	b, _ := os.ReadFile(eventPath(dir, 0, evs[0].EventBase().ID))
	dupPath := eventPath(dir, 3, evs[0].EventBase().ID)
	os.WriteFile(dupPath, b, 0o644)
	s, err := openLog(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Len() != 4 {
		t.Fatalf("Len = %d", s.Len())
	}
	if i, _ := s.Lookup(evs[0].EventBase().ID); i != 0 {
		t.Errorf("duplicate id resolves to %d, want the first (0)", i)
	}
}

func TestIndexCacheMatchesScan(t *testing.T) {
	dir, _ := writeLog(t, 30)
	s := openLogT(t, dir)
	withCache := s.Entries()
	s.Close()
	os.Remove(filepath.Join(dir, filestore.IndexFile))
	s = openLogT(t, dir)
	scanned := s.Entries()
	s.Close()
	if len(withCache) != len(scanned) {
		t.Fatalf("%d vs %d entries", len(withCache), len(scanned))
	}
	for i := range scanned {
		if withCache[i] != scanned[i] {
			t.Errorf("entry %d: cache %+v, scan %+v", i, withCache[i], scanned[i])
		}
	}
	// The scan rewrote the cache; a stale cache line is ignored.
	if _, err := os.Stat(filepath.Join(dir, filestore.IndexFile)); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(filepath.Join(dir, filestore.IndexFile), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("0\tnot-the-id\tX\tuser\tt\t\t\t\t0\t1\n5\ttorn")
	f.Close()
	s = openLogT(t, dir)
	defer s.Close()
	if got := s.Entries(); len(got) != 30 || got[0] != scanned[0] {
		t.Errorf("stale cache lines were used: %+v", got[0])
	}
}

// TestExternalAppendBeyondCache: another writer (the reference) appended
// while gohands was not running; its events are past the index cache.
func TestExternalAppendBeyondCache(t *testing.T) {
	dir, _ := writeLog(t, 4)
	m := convtest.UserMessage("written by someone else")
	m.ParentID = event.RootParentID
	data, err := event.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(eventPath(dir, 4, m.ID), data, 0o644)
	s := openLogT(t, dir)
	if s.Len() != 5 {
		t.Fatalf("Len = %d, want 5", s.Len())
	}
	if e, _ := s.Entry(4); e.ID != m.ID || e.Kind != "MessageEvent" || e.ParentID != event.RootParentID {
		t.Errorf("entry 4 = %+v", e)
	}
	s.Close()
	// The cache now covers it, with its size and checksum: garbage in the
	// last file is still found, and set aside as torn.
	os.WriteFile(eventPath(dir, 4, m.ID), []byte("garbage"), 0o644)
	s = openLogT(t, dir)
	defer s.Close()
	if s.Len() != 4 {
		t.Fatalf("Len = %d after reopen with a damaged last file, want 4", s.Len())
	}
	if _, err := os.Stat(eventPath(dir, 4, m.ID) + filestore.TornSuffix); err != nil {
		t.Error(err)
	}
}

// TestIndexCacheChecked: event files the index cache covers are checked
// against the size and checksum in their line, at open for the last one,
// when read for the others.
func TestIndexCacheChecked(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func([]byte) []byte
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }},
		{"garbage of the same size", func(b []byte) []byte { return bytes.Repeat([]byte("x"), len(b)) }},
		{"one byte changed", func(b []byte) []byte { b = bytes.Clone(b); b[len(b)/2] ^= 1; return b }},
		{"empty", func([]byte) []byte { return nil }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, evs := writeLog(t, 6)
			openFile(t, dir).Close() // the cache covers every event
			p := eventPath(dir, 2, evs[2].EventBase().ID)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, c.damage(b), 0o644)
			s := openLogT(t, dir)
			defer s.Close()
			_, err := s.Raw(2)
			var de *filestore.DamageError
			if !errors.Is(err, filestore.ErrDamaged) || !errors.As(err, &de) || de.Index != 2 {
				t.Fatalf("Raw of a damaged middle event: %v", err)
			}
			if _, err := s.Raw(1); err != nil {
				t.Errorf("Raw of an intact event: %v", err)
			}
		})
	}
}

func TestOldIndexLinesIgnored(t *testing.T) {
	dir, evs := writeLog(t, 3)
	s := openLogT(t, dir)
	e, _ := s.Entry(1)
	s.Close()
	// A line without the checksum, as gohands wrote before, with a wrong
	// kind: it must not be believed.
	line := fmt.Sprintf("1\t%s\tBogusKind\tuser\t%s\t%s\t\t\t0\t%d\n", e.ID, e.Timestamp, e.ParentID, e.Size)
	// A line with the file's checksum but not the line's, as gohands
	// wrote last: not believed either.
	raw, _ := os.ReadFile(eventPath(dir, 1, e.ID))
	line += fmt.Sprintf("1\t%s\tBogusKind\tuser\t%s\t%s\t\t\t0\t%d\t%08x\n", e.ID, e.Timestamp, e.ParentID, e.Size,
		crc32.Checksum(raw, crc32.MakeTable(crc32.Castagnoli)))
	os.WriteFile(filepath.Join(dir, filestore.IndexFile), []byte(line), 0o644)
	s = openLogT(t, dir)
	defer s.Close()
	if got, _ := s.Entry(1); got.Kind == "BogusKind" || got.ID != evs[1].EventBase().ID {
		t.Errorf("entry 1 = %+v", got)
	}
}

// TestDamagedIndexLineIgnored: whatever bit of the index cache flips, the
// line it is in is ignored and its event read from its file: intact events
// are never reported damaged because of the cache (random damage found a
// flipped bit in a line's file checksum doing that).
func TestDamagedIndexLineIgnored(t *testing.T) {
	dir, _ := writeLog(t, 4)
	s := openLogT(t, dir)
	want := s.Entries()
	s.Close()
	cache := filepath.Join(dir, filestore.IndexFile)
	good, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	for i := range good {
		for _, bit := range []byte{1, 4, 0x20} {
			b := bytes.Clone(good)
			b[i] ^= bit
			os.WriteFile(cache, b, 0o644)
			s := openLogT(t, dir)
			for k := range s.Len() {
				if _, err := s.Raw(k); err != nil {
					t.Fatalf("byte %d ^ %#x of the cache: event %d: %v", i, bit, k, err)
				}
			}
			if got := s.Entries(); !slices.Equal(got, want) {
				t.Fatalf("byte %d ^ %#x of the cache: entries %+v, want %+v", i, bit, got, want)
			}
			s.Close()
		}
	}
}

func TestTwoFilesForOneIndex(t *testing.T) {
	dir, evs := writeLog(t, 4)
	m := convtest.UserMessage("stray")
	data, _ := event.Marshal(m)
	os.WriteFile(eventPath(dir, 2, m.ID), data, 0o644)
	_, err := openLog(dir, nil)
	if !errors.Is(err, filestore.ErrDamaged) || !strings.Contains(err.Error(), "2 event files for one index") {
		t.Fatalf("err = %v", err)
	}
	_ = evs
}

// TestCachelessOpenRawReadsTheFile: a cache-less open keeps the events
// it decoded, not the files' bytes: Raw reads the file, checked against
// the size and checksum the open took.
func TestCachelessOpenRawReadsTheFile(t *testing.T) {
	defer filestore.KeepScanned(time.Hour)() // a loaded machine may take seconds between open and Raw
	dir, evs := writeLog(t, 6)
	os.Remove(filepath.Join(dir, filestore.IndexFile))
	want := make([][]byte, len(evs))
	for i, e := range evs {
		b, err := os.ReadFile(eventPath(dir, i, e.EventBase().ID))
		if err != nil {
			t.Fatal(err)
		}
		want[i] = b
	}
	s := openLogT(t, dir)
	defer s.Close()
	const changed, removed = 1, 2
	b := bytes.Clone(want[changed])
	b[bytes.IndexByte(b, '"')+1] ^= 1 // same size, other content
	if err := os.WriteFile(eventPath(dir, changed, evs[changed].EventBase().ID), b, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(eventPath(dir, removed, evs[removed].EventBase().ID))
	for i := range evs {
		got, err := s.Raw(i)
		switch {
		case i == changed:
			if !errors.Is(err, filestore.ErrDamaged) {
				t.Errorf("Raw(%d) of a file changed since the open: %v, want damage", i, err)
			}
		case i == removed:
			if !errors.Is(err, os.ErrNotExist) {
				t.Errorf("Raw(%d) of a file removed since the open: %v, want not found", i, err)
			}
		case err != nil:
			t.Errorf("Raw(%d): %v", i, err)
		case !bytes.Equal(got, want[i]):
			t.Errorf("Raw(%d) = %q, want %q", i, got, want[i])
		}
	}
	// The events the open decoded are still handed out.
	for i := range evs {
		if _, err := s.Event(t.Context(), i); err != nil {
			t.Errorf("Event(%d): %v", i, err)
		}
	}
}

// TestCachelessOpenKeepsNoBytes: the scan reads every file into one
// buffer per goroutine, so no event it decoded may share memory with the
// bytes it was decoded from: each must equal the event decoded from a
// copy of its file.
func TestCachelessOpenKeepsNoBytes(t *testing.T) {
	defer filestore.KeepScanned(time.Hour)()
	dir, evs := writeLog(t, 300) // several goroutines, each reading ~100 files
	os.Remove(filepath.Join(dir, filestore.IndexFile))
	s := openLogT(t, dir)
	defer s.Close()
	for i, e := range evs {
		if !filestore.KeptDecoded(s.Store, i) {
			t.Fatalf("event %d not decoded by the open", i)
		}
		got, err := s.Event(t.Context(), i)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(eventPath(dir, i, e.EventBase().ID))
		if err != nil {
			t.Fatal(err)
		}
		want, err := event.Unmarshal(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("event %d decoded by the open differs from its file's:\n%#v\n%#v", i, got, want)
		}
	}
}

// TestCachelessOpenDecodesEachFileOnce: a cache-less open decodes the
// files it reads, and Event hands each decoded event out once; a file
// that scans but does not decode still fails in Event, with its decoding
// error and its file's path.
func TestCachelessOpenDecodesEachFileOnce(t *testing.T) {
	defer filestore.KeepScanned(time.Hour)() // a loaded machine may take seconds between open and Event
	dir, evs := writeLog(t, 6)
	os.Remove(filepath.Join(dir, filestore.IndexFile))
	const bad = 2
	badPath := eventPath(dir, bad, evs[bad].EventBase().ID)
	b, err := os.ReadFile(badPath)
	if err != nil {
		t.Fatal(err)
	}
	b = append(b[:bytes.LastIndexByte(b, '}')], `,"no_such_field":1}`...)
	if err := os.WriteFile(badPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	want := make([][]byte, len(evs))
	for i, e := range evs {
		if want[i], err = os.ReadFile(eventPath(dir, i, e.EventBase().ID)); err != nil {
			t.Fatal(err)
		}
	}
	s := openLogT(t, dir)
	defer s.Close()
	for i, e := range evs {
		os.Remove(eventPath(dir, i, e.EventBase().ID))
	}
	for i := range evs {
		if decoded := filestore.KeptDecoded(s.Store, i); decoded != (i != bad) {
			t.Errorf("event %d held decoded by the open: %v, want %v", i, decoded, i != bad)
		}
		got, err := s.Event(t.Context(), i)
		if i == bad {
			if err == nil || errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "no_such_field") || !strings.Contains(err.Error(), badPath) {
				t.Errorf("Event(%d) of an undecodable file: %v, want its decoding error", i, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Event(%d) after the files were removed: %v", i, err)
		}
		if enc, err := event.Marshal(got); err != nil || !bytes.Equal(enc, want[i]) {
			t.Errorf("Event(%d) encodes as %s (%v), the file held %s", i, enc, err, want[i])
		}
	}
	// A decoded event is handed out once, and its file's copy goes with it.
	if _, err := s.Event(t.Context(), 0); err == nil {
		t.Error("second Event(0) succeeded without its file")
	}
	if _, err := s.Raw(1); err == nil {
		t.Error("Raw(1) after Event(1) succeeded without its file")
	}
}
