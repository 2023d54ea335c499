package filestore

import (
	"path/filepath"
	"strings"
)

// File and directory names of the reference's persistence layout.
const (
	BaseStateFile = "base_state.json"
	EventsDir     = "events"
	// LockFile is the lock the reference's EventLog takes (with flock) around
	// each append; a Store holds it for as long as it is open.
	LockFile = ".eventlog.lock"
	// IndexFile is gohands' cache of event entries, one line per event, kept
	// next to base_state.json. The event files are the truth: the cache is
	// checked against them and rebuilt when it disagrees, and the reference
	// ignores it.
	IndexFile = ".event_index"
	// TornSuffix is added to the name of a torn event file set aside on
	// open. The reference's reader ignores such names.
	TornSuffix = ".torn"
)

// Dir returns the directory of conversation id under the
// persistence directory base: base/<id as 32 hex digits>, as the reference
// names it.
func Dir(base, id string) string {
	return filepath.Join(base, strings.ReplaceAll(strings.ToLower(id), "-", ""))
}
