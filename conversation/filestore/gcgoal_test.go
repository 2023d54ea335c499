//go:build unix

package filestore_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
	"time"

	"github.com/gohands/gohands/conversation/filestore"
)

func TestRaisedGCPercent(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		gogc        int
		live, extra int64
		want        int
	}{
		{100, 0, 8 * mb, 300},        // a fresh process: the 4 MB heap minimum counts
		{100, 2 * mb, 8 * mb, 300},   // still under the minimum
		{100, 100 * mb, 8 * mb, 108}, // a large heap: 8 MB more is a few points
		{50, 0, 4 * mb, 150},
		{100, 1 << 40, 8 * mb, 100}, // nothing worth a point
		{-1, 0, 8 * mb, -1},         // GOGC=off stays off
		{100, 0, 0, 100},
	} {
		if got := filestore.RaisedGCPercent(c.gogc, c.live, c.extra); got != c.want {
			t.Errorf("raisedGCPercent(%d, %d, %d) = %d, want %d", c.gogc, c.live, c.extra, got, c.want)
		}
	}
}

// TestCachelessOpenRaisesGCGoal: a cache-less open of many events raises
// the collector's goal while the store keeps what it scanned, and puts
// GOGC back once every kept event is taken, or at Close; an open from the
// index cache, which keeps nothing, leaves it alone.
func TestCachelessOpenRaisesGCGoal(t *testing.T) {
	defer filestore.KeepScanned(time.Hour)() // a loaded machine may take seconds between open and Event
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	// A store another test left open holds the goal until its kept files
	// are dropped (after keepScanned at most).
	for deadline := time.Now().Add(30 * time.Second); filestore.GCHolds() != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d holds on the collector goal left by other tests", filestore.GCHolds())
		}
	}
	dir, evs := writeLog(t, filestore.GCRaiseMinFiles)
	dropCache := func() {
		if err := os.Remove(filepath.Join(dir, filestore.IndexFile)); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string, holds int, raised bool) {
		t.Helper()
		if got := filestore.GCHolds(); got != holds {
			t.Errorf("%s: %d holds, want %d", when, got, holds)
		}
		if got := filestore.GOGC(); (got > 100) != raised {
			t.Errorf("%s: GOGC = %d, want it raised: %v", when, got, raised)
		}
	}

	dropCache()
	s := openLogT(t, dir)
	check("after a cache-less open", 1, true)
	for i := range evs[:len(evs)-1] {
		if _, err := s.Event(context.Background(), i); err != nil {
			t.Fatal(err)
		}
	}
	check("one kept event left", 1, true)
	if _, err := s.Event(context.Background(), len(evs)-1); err != nil {
		t.Fatal(err)
	}
	check("every kept event taken", 0, false)
	s.Close()

	dropCache()
	s = openLogT(t, dir)
	check("after a second cache-less open", 1, true)
	s.Close()
	check("after Close", 0, false)

	s = openLogT(t, dir) // the cache was written by the last open
	check("after an open from the cache", 0, false)
	s.Close()

	debug.SetGCPercent(-1)
	dropCache()
	s = openLogT(t, dir)
	if got := filestore.GOGC(); got != -1 {
		t.Errorf("GOGC=off: a cache-less open set it to %d", got)
	}
	s.Close()
}
