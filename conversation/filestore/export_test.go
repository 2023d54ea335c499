//go:build unix

package filestore

import "time"

// SetWriteFault makes writes of new files and of the unmapped journal fail with the error f returns
// for their path (nil: written); SetWriteFault(nil) ends it.
func SetWriteFault(f func(path string) error) {
	if f == nil {
		writeFault.Store(nil)
		return
	}
	writeFault.Store(&f)
}

// KeepScanned makes a cache-less open keep what it read for d until
// the returned function restores the default; no test in this package runs
// in parallel, so the variable is not guarded.
func KeepScanned(d time.Duration) (restore func()) {
	old := keepScanned
	keepScanned = d
	return func() { keepScanned = old }
}

// KeptDecoded reports whether s holds event i decoded by its open, so
// that Event hands it out without decoding.
func KeptDecoded(s *Store, i int) bool {
	s.keptMu.Lock()
	defer s.keptMu.Unlock()
	return i < len(s.kept) && s.kept[i].ev != nil
}

// WakePending reports whether s's background writer has a wake-up due
// that it has not taken yet.
func WakePending(s *Store) bool { return s.wb != nil && len(s.wb.wake) > 0 }

// WriterIdle reports whether s's background writer is idle: no drain
// under way, none due.
func WriterIdle(s *Store) bool {
	w := s.wb
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.started == w.drains && len(w.wake) == 0 && !w.armed.Load()
}

// GCHolds is how many holds the raised collector goal has (raiseGCGoal).
func GCHolds() int {
	gcRaise.mu.Lock()
	defer gcRaise.mu.Unlock()
	return gcRaise.holds
}

// GOGC is the collector's current percent.
func GOGC() int { gogc, _ := gcState(); return gogc }

// RaisedGCPercent is raisedGCPercent.
var (
	RaisedGCPercent = raisedGCPercent
	GCRaiseMinFiles = gcRaiseMinFiles
)
