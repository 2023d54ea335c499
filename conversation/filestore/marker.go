//go:build unix

package filestore

import (
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The reference 1.58 takes LockFile (flock, through Python's filelock) for
// each append only, and keeps the log's length in a marker file so that it
// need not recount the event files under the lock: if the marker of the
// length it knows is there, nobody appended since; if not, it counts the
// files and reindexes. A Store holds the lock for as long as it is open,
// so no other writer appends meanwhile; it removes every marker when it
// takes the lock (a gohands process killed while open then leaves none,
// and the reference recounts) and writes the marker of the final length
// when it releases it, every event having its file by then. A reference
// process that kept the conversation open while gohands appended thus
// finds its marker gone and takes the next free index instead of writing
// a second file with one it believes free.

// lengthMarkerName is the marker of a log of n events.
func lengthMarkerName(n int) string {
	return LengthMarkerPrefix + strconv.Itoa(n) + LengthMarkerSuffix
}

// isLengthMarker reports whether name is a length marker.
func isLengthMarker(name string) bool {
	n, ok := strings.CutPrefix(name, LengthMarkerPrefix)
	if !ok {
		return false
	}
	n, ok = strings.CutSuffix(n, LengthMarkerSuffix)
	if !ok {
		return false
	}
	_, err := strconv.Atoi(n)
	return err == nil
}

// removeLengthMarkers removes the length markers of the events directory
// that Open listed.
func (s *Store) removeLengthMarkers(markers []string) {
	for _, name := range markers {
		if err := os.Remove(filepath.Join(s.eventsDir, name)); err != nil && !os.IsNotExist(err) {
			slog.Warn("filestore: cannot remove a length marker", "file", name, "err", err)
		}
	}
}

// writeLengthMarker writes the marker of a log of n events, as the
// reference's writer leaves it (an empty file).
func (s *Store) writeLengthMarker(n int) {
	path := filepath.Join(s.eventsDir, lengthMarkerName(n))
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		slog.Warn("filestore: cannot write the length marker", "file", path, "err", err)
	}
}
