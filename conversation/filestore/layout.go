package filestore

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gohands/gohands/conversation"
)

// File and directory names of the reference's persistence layout.
const (
	BaseStateFile = "base_state.json"
	// PrevBaseStateFile is gohands' copy of the base state before the last
	// write, kept so that a damaged base state can be restored (Repair).
	// The reference ignores it.
	PrevBaseStateFile = ".base_state.json.prev"
	EventsDir         = "events"
	// LockFile is the lock the reference's EventLog takes (with flock) around
	// each append; a Store holds it for as long as it is open.
	LockFile = ".eventlog.lock"
	// LengthMarkerPrefix and LengthMarkerSuffix frame the name of the
	// reference's (1.58) length marker, events/.eventlog-len-<N>.marker: an
	// empty file saying that the log had N events when the last writer
	// released LockFile. A writer that finds the marker of the length it
	// knows skips recounting the event files; otherwise it counts them
	// before choosing the next index (see marker.go).
	LengthMarkerPrefix = ".eventlog-len-"
	LengthMarkerSuffix = ".marker"
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

// Options configure a Store. The zero value is the default.
type Options struct {
	// Durable makes each append and base-state write call fsync (and sync
	// the directory) before returning, so they survive a power loss. Off by
	// default, like the reference: a killed process loses nothing either way.
	Durable bool
	// WriteThrough creates each event's own file before Append returns,
	// as the reference does. By default an append is committed to a
	// journal (JournalFile) and the event's file is written by a background
	// goroutine a moment later: creating a file is the slow part of an
	// append (0.05–1 ms on ext4, against ~10 µs for the journal). A killed
	// process loses nothing either way: the next open writes journaled
	// events to their files. Until then a reader that ignores the journal
	// (the reference) does not see them; Sync and Close wait for the files.
	WriteThrough bool
	// LockTimeout is how long Open waits for a lock held by another
	// process before failing with conversation.ErrLocked (default 1s; the reference's
	// writers hold it only for the length of one append).
	LockTimeout time.Duration
}

// Backend keeps conversations under one persistence directory, each in
// Dir(base, id). It implements conversation.Backend.
type Backend struct {
	base string
	opts *Options
}

// NewBackend returns the backend of the persistence directory base; opts
// configure the stores it opens (nil is the default).
func NewBackend(base string, opts *Options) *Backend { return &Backend{base: base, opts: opts} }

// Base returns the persistence directory.
func (b *Backend) Base() string { return b.base }

// Open opens (creating if needed) the store of conversation id. Off Unix
// it fails with errors.ErrUnsupported.
func (b *Backend) Open(_ context.Context, id string) (conversation.Store, error) {
	return openStore(Dir(b.base, id), b.opts)
}

var _ conversation.Backend = (*Backend)(nil)

// parseEventName parses event-<idx>-<id>.json, the reference's pattern
// ^event-(\d{5,})-([0-9a-fA-F\-]{8,})\.json$.
func parseEventName(name string) (idx int, id string, ok bool) {
	rest, ok := strings.CutPrefix(name, "event-")
	if !ok {
		return 0, "", false
	}
	rest, ok = strings.CutSuffix(rest, ".json")
	if !ok {
		return 0, "", false
	}
	d := 0
	for d < len(rest) && rest[d] >= '0' && rest[d] <= '9' {
		d++
	}
	if d < 5 || d >= len(rest) || rest[d] != '-' {
		return 0, "", false
	}
	id = rest[d+1:]
	if len(id) < 8 {
		return 0, "", false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == '-') {
			return 0, "", false
		}
	}
	idx, err := strconv.Atoi(rest[:d])
	if err != nil {
		return 0, "", false
	}
	return idx, id, true
}
