//go:build unix

package filestore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/conversation/internal/convtest"
	"github.com/gohands/gohands/event"
)

// TestRepair: each kind of damage is reported by Check, fails Open (or
// Raw) with ErrDamaged, and Repair sets it aside: the log keeps the events
// before it, the conversation opens and takes new events.
func TestRepair(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func(dir string, evs []event.Event)
		keep   int // events left after the repair
		base   bool
	}{
		{"deleted middle file", func(dir string, evs []event.Event) {
			os.Remove(eventPath(dir, 3, evs[3].EventBase().ID))
		}, 3, false},
		{"stray file past the end", func(dir string, evs []event.Event) {
			m := convtest.UserMessage("stray")
			data, _ := event.Marshal(m)
			os.WriteFile(eventPath(dir, 9, m.ID), data, 0o644)
		}, 6, false},
		{"garbage middle file", func(dir string, evs []event.Event) {
			os.WriteFile(eventPath(dir, 2, evs[2].EventBase().ID), []byte("garbage"), 0o644)
		}, 2, false},
		{"garbage middle file, no cache", func(dir string, evs []event.Event) {
			os.Remove(filepath.Join(dir, filestore.IndexFile))
			os.WriteFile(eventPath(dir, 2, evs[2].EventBase().ID), []byte("garbage"), 0o644)
		}, 2, false},
		{"two files for one index", func(dir string, evs []event.Event) {
			b, _ := os.ReadFile(eventPath(dir, 4, evs[4].EventBase().ID))
			os.WriteFile(eventPath(dir, 4, "0000aaaa-0000-4000-8000-000000000000"), b, 0o644)
		}, 4, false},
		{"damaged base state", func(dir string, evs []event.Event) {
			os.WriteFile(filepath.Join(dir, filestore.BaseStateFile), []byte(`{"id": "trunc`), 0o644)
		}, 6, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, evs := writeLog(t, 6)
			s := openLogT(t, dir)
			b, _ := s.ReadBase()
			s.WriteBase(b) // a second write keeps the first as the previous state
			s.Close()
			c.damage(dir, evs)

			r, err := filestore.Check(dir)
			if err != nil {
				t.Fatal(err)
			}
			if r.OK() || (r.BaseState != nil) != c.base || (r.Damage != nil) == c.base {
				t.Fatalf("Check: %+v", r)
			}
			if !c.base {
				s, err := openLog(dir, nil)
				if err == nil {
					_, err = s.Raw(r.Damage.Index)
					s.Close()
				}
				if !errors.Is(err, filestore.ErrDamaged) {
					t.Fatalf("open and read of the damaged store: %v", err)
				}
			}
			r, err = filestore.Repair(dir)
			if err != nil {
				t.Fatalf("Repair: %v (%+v)", err, r)
			}
			if r.Events != c.keep || r.SetAside == "" || len(r.Moved) == 0 {
				t.Errorf("Repair: %+v, want %d events kept", r, c.keep)
			}
			for _, name := range r.Moved {
				if _, err := os.Stat(filepath.Join(r.SetAside, name)); err != nil {
					t.Errorf("moved file: %v", err)
				}
			}
			st, err := conversation.Open(context.Background(), openFile(t, dir), nil)
			if err != nil {
				t.Fatalf("open after repair: %v", err)
			}
			defer st.Close()
			if st.Events().Len() != c.keep {
				t.Errorf("%d events after repair, want %d", st.Events().Len(), c.keep)
			}
			for i := range st.Events().Len() {
				if _, err := st.Events().Event(t.Context(), i); err != nil {
					t.Errorf("event %d: %v", i, err)
				}
			}
			m := convtest.UserMessage("after the repair")
			if _, err := st.Append(m); err != nil {
				t.Errorf("append after repair: %v", err)
			}
		})
	}
}

// TestRepairRebuildsBaseState: a damaged base state with no previous copy
// (written once) is rebuilt from the events: the fields the log recorded,
// status error, HEAD at the last event (issue 17 item 6).
func TestRepairRebuildsBaseState(t *testing.T) {
	f := convtest.NewFields()
	dir := filestore.Dir(t.TempDir(), f.ID)
	st, err := conversation.Create(context.Background(), openFile(t, dir), f, &conversation.Options{RecordChanges: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Update(func(f *conversation.Fields) error {
		f.Tags = map[string]string{"team": "blue"}
		f.MaxIterations = 77
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var last string
	for i := range 2 {
		a, o := convtest.ActionCycle(i, 100)
		st.Append(a)
		st.Append(o)
		last = o.EventBase().ID
	}
	n := st.Events().Len()
	st.Close()
	os.WriteFile(filepath.Join(dir, filestore.BaseStateFile), []byte(`{"id": "trunc`), 0o644)
	os.Remove(filepath.Join(dir, filestore.PrevBaseStateFile))

	r, err := filestore.Repair(dir)
	if err != nil || !r.Rebuilt || r.Restored {
		t.Fatalf("Repair: %v, %+v", err, r)
	}
	st, err = conversation.Open(context.Background(), openFile(t, dir), nil)
	if err != nil {
		t.Fatalf("open after the rebuild: %v", err)
	}
	defer st.Close()
	got := st.Fields()
	if got.ID != f.ID || got.Tags["team"] != "blue" || got.MaxIterations != 77 || got.ExecutionStatus != conversation.StatusError {
		t.Errorf("rebuilt fields: id %s tags %v max_iterations %d status %s", got.ID, got.Tags, got.MaxIterations, got.ExecutionStatus)
	}
	if st.Events().Len() != n {
		t.Errorf("%d events after the rebuild, want %d", st.Events().Len(), n)
	}
	if br, err := st.ActiveBranch(); err != nil || len(br) == 0 || br[len(br)-1].ID != last {
		t.Errorf("HEAD after the rebuild: %v, %d events on the branch", err, len(br))
	}
}
