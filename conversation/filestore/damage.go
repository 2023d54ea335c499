//go:build unix

package filestore

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
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
}

func listEvents(names []string, eventsDir string) *listing {
	l := &listing{ids: make([]string, len(names))}
	for _, name := range names {
		i, id, ok := parseEventName(name)
		switch {
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
