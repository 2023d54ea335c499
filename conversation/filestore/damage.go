//go:build unix

package filestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
)

// ErrDamaged is matched (errors.Is) by the errors of a store whose event
// files are damaged in a way a crash does not leave: a middle file missing,
// unreadable or changed, files past a gap, two files for one index.
// [Repair] sets the damage aside.
var ErrDamaged = errors.New("filestore: store damaged")

// DamageError describes the first damage found in a conversation's events.
type DamageError struct {
	Dir   string // the conversation directory
	Index int    // the first event index that is not intact
	File  string // its file name under events/, if there is one
	Err   error  // what is wrong with it
}

func (e *DamageError) Error() string {
	what := fmt.Sprintf("event %d", e.Index)
	if e.File != "" {
		what += " (" + e.File + ")"
	}
	return fmt.Sprintf("filestore: %s: %s: %v (damaged store: Repair, or gohands doctor, sets the damage aside)", e.Dir, what, e.Err)
}

func (e *DamageError) Unwrap() []error { return []error{ErrDamaged, e.Err} }

// listing is the event files of a directory by index.
type listing struct {
	ids   []string         // ids[i] is the id of the first file listed with index i, "" if none
	extra map[int][]string // more files with an index already taken
	far   []int            // indexes of files at len(ids) or beyond
	// markers are the names of the reference's length markers.
	markers []string
}

func listEvents(names []string, eventsDir string) *listing {
	l := &listing{ids: make([]string, len(names))}
	for _, name := range names {
		i, id, ok := parseEventName(name)
		switch {
		case !ok && isLengthMarker(name):
			l.markers = append(l.markers, name)
		case !ok:
			if name != LockFile && !strings.HasSuffix(name, TornSuffix) {
				slog.Warn("filestore: ignoring unrecognised file in events directory", "dir", eventsDir, "name", name)
			}
		case i >= len(l.ids):
			l.far = append(l.far, i)
		case l.ids[i] != "":
			if l.extra == nil {
				l.extra = map[int][]string{}
			}
			l.extra[i] = append(l.extra[i], id)
		default:
			l.ids[i] = id
		}
	}
	return l
}

// contiguous is the length of the run of indexes from 0.
func (l *listing) contiguous() int {
	n := 0
	for n < len(l.ids) && l.ids[n] != "" {
		n++
	}
	return n
}

// check reports files that do not belong to the log ids (the contiguous
// run, extended by the journal): files past a gap, and two files for one
// index. Appending after either would interleave new events with them.
func (l *listing) check(dir string, ids []string) error {
	n := len(ids)
	var dup []int
	for i := range l.extra {
		dup = append(dup, i)
	}
	slices.Sort(dup)
	for _, i := range dup {
		if i < n {
			names := []string{eventFileName(i, l.ids[i])}
			for _, id := range l.extra[i] {
				names = append(names, eventFileName(i, id))
			}
			return &DamageError{Dir: dir, Index: i, Err: fmt.Errorf("%d event files for one index: %s", len(names), strings.Join(names, ", "))}
		}
	}
	for i := 0; i < n && i < len(l.ids); i++ {
		if l.ids[i] != "" && l.ids[i] != ids[i] {
			return &DamageError{Dir: dir, Index: i, Err: fmt.Errorf("2 event files for one index: %s, %s", eventFileName(i, ids[i]), eventFileName(i, l.ids[i]))}
		}
	}
	later := len(l.far) + len(dup)
	for i := n; i < len(l.ids); i++ {
		if l.ids[i] != "" {
			later++
		}
	}
	if later > 0 {
		return &DamageError{Dir: dir, Index: n, Err: fmt.Errorf("event file %d is missing and %d later event files follow it", n, later)}
	}
	return nil
}

// Report is what Check found in a conversation directory, and what Repair
// did about it.
type Report struct {
	Dir string
	// Events is the number of intact events from the start of the log.
	Events int
	// Damage is the first damage in the events; nil when they are whole.
	Damage *DamageError
	// BaseState says why base_state.json cannot be used; nil when it can.
	BaseState error
	// SetAside is the directory Repair moved damaged files to ("" if
	// none), and Moved their names.
	SetAside string
	Moved    []string
	// Restored is set when Repair replaced a damaged base state with
	// the one before it (PrevBaseStateFile); Rebuilt when, there being
	// none, it rebuilt one from the events (conversation.RebuildBase).
	Restored, Rebuilt bool
}

// OK reports whether the conversation is whole.
func (r *Report) OK() bool { return r.Damage == nil && r.BaseState == nil }

// Check opens the conversation in dir as Open does (so a journal left by
// a killed writer is replayed and a torn last file set aside, as on any
// open) and then reads and decodes every event, checking each against the
// size and checksum it was written with, and checks that base_state.json
// is a JSON object. It fails only when the directory cannot be examined;
// damage is in the report.
func Check(dir string) (*Report, error) {
	r := &Report{Dir: dir}
	r.BaseState = checkBase(filepath.Join(dir, BaseStateFile))
	s, err := Open(dir, &Options{WriteThrough: true})
	var de *DamageError
	if errors.As(err, &de) {
		r.Damage, r.Events = de, de.Index
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	defer s.Close()
	ctx := context.Background()
	var ents []conversation.Entry
	for batch, err := range s.Load(ctx) {
		if err != nil {
			return nil, err
		}
		ents = append(ents, batch...)
	}
	for i, ent := range ents {
		raw, err := s.Raw(ctx, ent)
		if err == nil {
			_, err = event.Unmarshal(raw)
		}
		if err != nil {
			if !errors.As(err, &de) {
				de = &DamageError{Dir: dir, Index: i, File: eventFileName(i, ent.ID), Err: err}
			}
			r.Damage = de
			break
		}
		r.Events = i + 1
	}
	return r, nil
}

// checkBase reports why the base state at path is unusable.
func checkBase(path string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil // a conversation not created yet, or the reference's bare log
	}
	if err != nil {
		return err
	}
	var head struct {
		ID *string `json:"id"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return fmt.Errorf("%s: %w", BaseStateFile, err)
	}
	if head.ID == nil {
		return fmt.Errorf("%s: no conversation id", BaseStateFile)
	}
	return nil
}

// Repair checks the conversation in dir (Check) and mends what it finds:
// the event files from the first damaged one on are moved to a new
// directory damaged-<time> beside events/ (never deleted), so the log is
// what was intact before the damage, and the index cache is rebuilt; a
// damaged base state is moved there too and replaced by the one before it
// (PrevBaseStateFile) when that one is intact, else by one rebuilt from
// the events (conversation.RebuildBase: the fields the log recorded,
// status error). The report says what was done; the caller decides
// whether the loss is acceptable (gohands doctor asks first). The
// conversation must not be open.
func Repair(dir string) (*Report, error) {
	r, err := Check(dir)
	if err != nil || r.OK() {
		return r, err
	}
	move := func(from, name string) error {
		if r.SetAside == "" {
			aside := filepath.Join(dir, "damaged-"+time.Now().UTC().Format("20060102T150405.000000000Z"))
			if err := os.Mkdir(aside, 0o755); err != nil {
				return fmt.Errorf("filestore: %w", err)
			}
			r.SetAside = aside
		}
		if err := os.Rename(from, filepath.Join(r.SetAside, name)); err != nil {
			return fmt.Errorf("filestore: setting aside %s: %w", from, err)
		}
		r.Moved = append(r.Moved, name)
		return nil
	}
	// Damage can hide earlier damage (files past a gap are found before
	// the files before it are read): check again until nothing is found.
	cur := r
	for !cur.OK() {
		if cur.Damage != nil {
			if err := setAsideFrom(dir, cur.Damage.Index, move); err != nil {
				return r, err
			}
		} else if cur.BaseState != nil { // the events are whole: they can rebuild it
			if r.Restored || r.Rebuilt {
				return r, fmt.Errorf("filestore: still damaged after repair: %w", cur.BaseState)
			}
			var b []byte
			prev := filepath.Join(dir, PrevBaseStateFile)
			if checkBase(prev) == nil {
				b, err = os.ReadFile(prev)
				r.Restored = err == nil
			}
			if !r.Restored {
				if b, err = rebuildBase(dir); err != nil {
					return r, fmt.Errorf("filestore: %w; rebuilding it from the events failed: %w", cur.BaseState, err)
				}
				r.Rebuilt = true
			}
			if err := move(filepath.Join(dir, BaseStateFile), BaseStateFile); err != nil {
				return r, err
			}
			if err := writeAtomic(filepath.Join(dir, BaseStateFile), b, true); err != nil {
				return r, fmt.Errorf("filestore: restoring the base state: %w", err)
			}
		}
		if cur, err = Check(dir); err != nil {
			return r, err
		}
	}
	r.Events = cur.Events
	return r, nil
}

// rebuildBase rebuilds the base state of the conversation in dir from its
// events; its id is the directory's name (see Dir).
func rebuildBase(dir string) ([]byte, error) {
	id, err := uuid.Parse(filepath.Base(dir))
	if err != nil {
		return nil, fmt.Errorf("the directory name is not a conversation id: %w", err)
	}
	s, err := Open(dir, &Options{WriteThrough: true})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	log, err := conversation.LoadLog(context.Background(), s)
	if err != nil {
		return nil, err
	}
	return conversation.RebuildBase(context.Background(), log, id.String())
}

// setAsideFrom moves the event files numbered from on out of the log, and
// removes the index cache, which described them.
func setAsideFrom(dir string, from int, move func(path, name string) error) error {
	// The lock keeps a writer out while files move; a store too damaged
	// to open cannot be open elsewhere either (it would have failed).
	s, err := Open(dir, &Options{WriteThrough: true})
	var de *DamageError
	if err != nil && !errors.As(err, &de) {
		return err
	}
	if s != nil {
		defer s.Close()
	}
	names, err := readDirNames(filepath.Join(dir, EventsDir))
	if err != nil {
		return fmt.Errorf("filestore: %w", err)
	}
	slices.Sort(names)
	moved := 0
	for _, name := range names {
		if i, _, ok := parseEventName(name); ok && i >= from {
			if err := move(filepath.Join(dir, EventsDir, name), name); err != nil {
				return err
			}
			moved++
		}
	}
	if moved == 0 {
		return fmt.Errorf("filestore: damage at event %d, but no event file from there on to set aside", from)
	}
	if err := os.Remove(filepath.Join(dir, IndexFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("filestore: %w", err)
	}
	return nil
}
