//go:build unix

package filestore_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
)

// TestList reads two stored conversations without opening them: the one
// open in a store (and so locked) is listed too, newest first, and
// ReadEvents reads its events.
func TestList(t *testing.T) {
	base := t.TempDir()
	write := func(id, model, ts string, msgs ...string) logStore {
		s, err := openLog(filestore.Dir(base, id), &filestore.Options{WriteThrough: true})
		if err != nil {
			t.Fatal(err)
		}
		state := `{"id":"` + id + `","agent":{"llm":{"model":"` + model + `","base_url":"http://x"},"kind":"Agent"},` +
			`"workspace":{"working_dir":"/w/` + id + `","kind":"LocalWorkspace"},"execution_status":"finished",` +
			`"stats":{"usage_to_metrics":{"a":{"accumulated_cost":0.5},"b":{"accumulated_cost":0.25}}}}`
		if err := s.WriteBase([]byte(state)); err != nil {
			t.Fatal(err)
		}
		sys := &event.PauseEvent{Base: event.Base{ID: event.NewID(), Timestamp: ts + ":00", Source: event.SourceUser}}
		if _, err := s.Append(sys); err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			e := &event.MessageEvent{Base: event.Base{ID: event.NewID(), Timestamp: ts + ":01", Source: event.SourceUser},
				LLMMessage: event.UserMessage(m)}
			if _, err := s.Append(e); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	old := write("00000000000000000000000000000001", "m1", "2026-01-01T10:00", "first task", "second")
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	open := write("00000000000000000000000000000002", "m2", "2026-02-01T10:00", "newer task")
	defer open.Close()

	var skipped []string
	list, err := filestore.List(base, func(dir string, err error) { skipped = append(skipped, dir) })
	if err != nil || len(list) != 2 || len(skipped) != 0 {
		t.Fatalf("List = %+v, %v; skipped %v", list, err, skipped)
	}
	got := list[0]
	if got.ID != "00000000000000000000000000000002" || got.Model != "m2" || got.BaseURL != "http://x" ||
		got.ExecutionStatus != "finished" || got.Cost != 0.75 || got.Events != 2 ||
		got.FirstMessage != "newer task" || got.CreatedAt != "2026-02-01T10:00:00" ||
		got.UpdatedAt != "2026-02-01T10:00:01" || got.WorkingDir != "/w/"+got.ID ||
		got.Dir != filestore.Dir(base, got.ID) {
		t.Errorf("newest = %+v", got)
	}
	if list[1].FirstMessage != "first task" || list[1].Events != 3 {
		t.Errorf("oldest = %+v", list[1])
	}

	s, ok, err := filestore.Describe(base, "00000000-0000-0000-0000-000000000001")
	if err != nil || !ok || s.Model != "m1" || s.WorkingDir != "/w/00000000000000000000000000000001" {
		t.Errorf("Describe = %+v, %v, %v", s, ok, err)
	}
	if _, ok, err := filestore.Describe(base, "00000000000000000000000000000009"); ok || err != nil {
		t.Errorf("Describe(missing) = %v, %v", ok, err)
	}

	evs, err := filestore.ReadEvents(filestore.Dir(base, "00000000000000000000000000000002"))
	if err != nil || len(evs) != 2 {
		t.Fatalf("ReadEvents = %d events, %v", len(evs), err)
	}
	if m, ok := evs[1].(*event.MessageEvent); !ok || event.TextOf(m.LLMMessage.Content) != "newer task" {
		t.Errorf("ReadEvents[1] = %#v", evs[1])
	}

	if list, err := filestore.List(t.TempDir()+"/missing", nil); err != nil || list != nil {
		t.Errorf("List(missing) = %v, %v", list, err)
	}
}

// TestReadEvents: ReadEvents, which reads on several goroutines, gives
// each file's own decoding in log order, writes nothing, reads a
// directory it may not write, and stops at the first file that does not
// read or decode, naming it, with the events before it.
func TestReadEvents(t *testing.T) {
	dir, evs := writeLog(t, 300)
	want := func(n int) []string {
		var out []string
		for i, e := range evs[:n] {
			d, err := event.Unmarshal(mustReadFile(t, eventPath(dir, i, e.EventBase().ID)))
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(b))
		}
		return out
	}
	encode := func(got []event.Event) []string {
		var out []string
		for _, e := range got {
			b, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(b))
		}
		return out
	}
	events := filepath.Join(dir, filestore.EventsDir)
	listing := func() []string {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		sub, _ := os.ReadDir(events)
		for _, e := range sub {
			names = append(names, "events/"+e.Name())
		}
		return names
	}
	os.Remove(filepath.Join(dir, filestore.IndexFile))
	before := listing()
	os.Chmod(events, 0o555) // even root's reads must not need a write
	defer os.Chmod(events, 0o755)

	got, err := filestore.ReadEvents(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(encode(got), want(300)) {
		t.Fatalf("ReadEvents gave %d events, not the files' own", len(got))
	}
	if after := listing(); !slices.Equal(after, before) {
		t.Errorf("ReadEvents changed the directory: %v, was %v", after, before)
	}
	os.Chmod(events, 0o755)

	// A gap: the events around it, in log order.
	w := want(300)
	missing := eventPath(dir, 250, evs[250].EventBase().ID)
	kept := mustReadFile(t, missing)
	os.Remove(missing)
	got, err = filestore.ReadEvents(dir)
	if err != nil || !slices.Equal(encode(got), append(w[:250:250], w[251:]...)) {
		t.Fatalf("ReadEvents over a gap gave %d events, %v", len(got), err)
	}
	if err := os.WriteFile(missing, kept, 0o644); err != nil {
		t.Fatal(err)
	}

	// Two files of one index (the reference's reader takes both): both,
	// in index order.
	twin := filepath.Join(events, "event-00010-00000000000000000000000000000abc.json")
	if err := os.WriteFile(twin, mustReadFile(t, eventPath(dir, 10, evs[10].EventBase().ID)), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = filestore.ReadEvents(dir)
	if err != nil || len(got) != 301 || !slices.Equal(encode(got[:10]), w[:10]) || !slices.Equal(encode(got[12:]), w[11:]) ||
		!slices.Equal(encode(got[10:12]), []string{w[10], w[10]}) {
		t.Fatalf("ReadEvents with two files of index 10 gave %d events, %v", len(got), err)
	}
	os.Remove(twin)

	// A file that does not decode, and one past it that does not read.
	bad := eventPath(dir, 137, evs[137].EventBase().ID)
	orig := mustReadFile(t, bad)
	if err := os.WriteFile(bad, []byte(`{"kind":`), 0o644); err != nil {
		t.Fatal(err)
	}
	gone := eventPath(dir, 200, evs[200].EventBase().ID)
	os.Remove(gone)
	if err := os.Mkdir(gone, 0o755); err != nil { // listed, not readable as a file
		t.Fatal(err)
	}
	got, err = filestore.ReadEvents(dir)
	if err == nil || !strings.Contains(err.Error(), filepath.Base(bad)) {
		t.Fatalf("ReadEvents over a bad file: %v", err)
	}
	if !slices.Equal(encode(got), want(137)) {
		t.Errorf("ReadEvents over a bad file gave %d events, want the 137 before it", len(got))
	}
	if err := os.WriteFile(bad, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = filestore.ReadEvents(dir)
	if err == nil || !strings.Contains(err.Error(), gone) {
		t.Fatalf("ReadEvents over an unreadable file: %v, want its path", err)
	}
	if !slices.Equal(encode(got), want(200)) {
		t.Errorf("ReadEvents over an unreadable file gave %d events, want the 200 before it", len(got))
	}

	if got, err := filestore.ReadEvents(filepath.Join(t.TempDir(), "missing")); got != nil || err != nil {
		t.Errorf("ReadEvents(missing) = %v, %v", got, err)
	}
}

func mustReadFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
