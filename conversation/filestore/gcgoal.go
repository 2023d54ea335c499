//go:build unix

package filestore

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// A cache-less open reads and decodes every event file and keeps them for
// the replay or resume that nearly always follows: a few megabytes for a
// thousand events, allocated within milliseconds and all still reachable.
// In a process whose heap is small (a fresh one: the collector's first
// goal is 4 MB) that starts collections that free next to nothing while
// taking a core from the decoding goroutines: in bench/compare's replay
// child, GOGC=off made the replay ~20% faster. So while a store holds
// what its open scanned, the collector's goal is raised by about what the
// scan is expected to allocate, bounded: at most gcRaiseMax above the goal
// GOGC gives, and nothing once the live heap makes that a small fraction.
const (
	// gcRaiseMinFiles is the fewest files scanned that raise the goal.
	gcRaiseMinFiles = 128
	// gcRaisePerFile is the allocation expected per event file scanned:
	// the event decoded from it and its entry (~1.6 KB for the
	// reference's think steps, several times that with tool output).
	gcRaisePerFile = 8 << 10
	gcRaiseMax     = maxKeptBytes
)

// gcRaise counts the holds on the raised goal; the first sets it, the last
// puts GOGC back.
var gcRaise struct {
	mu    sync.Mutex
	holds int
	old   int // GOGC before the first hold
	set   int // the percent the first hold set
}

// raiseGCGoal raises the collector's goal by about extra bytes (at most
// gcRaiseMax) until the returned function, which may be called more than
// once, is called. Holds overlap: the goal set by the first stays until the
// last is released. GOGC changed meanwhile by someone else is left as they
// set it. With GOGC=off it does nothing.
func raiseGCGoal(extra int64) (release func()) {
	extra = min(extra, gcRaiseMax)
	gcRaise.mu.Lock()
	defer gcRaise.mu.Unlock()
	if gcRaise.holds == 0 {
		gogc, live := gcState()
		gcRaise.old, gcRaise.set = gogc, gogc
		if p := raisedGCPercent(gogc, live, extra); p > gogc {
			debug.SetGCPercent(p)
			gcRaise.set = p
		}
	}
	gcRaise.holds++
	return sync.OnceFunc(func() {
		gcRaise.mu.Lock()
		defer gcRaise.mu.Unlock()
		if gcRaise.holds--; gcRaise.holds > 0 || gcRaise.set == gcRaise.old {
			return
		}
		if gogc, _ := gcState(); gogc == gcRaise.set {
			debug.SetGCPercent(gcRaise.old)
		}
	})
}

// raisedGCPercent is the GOGC that makes the collector's goal about extra
// bytes higher than gogc makes it for a live heap of live bytes. The goal
// is live·(1+GOGC/100), and at least 4 MB·GOGC/100 (the runtime's heap
// minimum), so each point of GOGC adds max(live, 4 MB)/100 bytes. It
// returns gogc itself when the collector is off (negative).
func raisedGCPercent(gogc int, live, extra int64) int {
	if gogc < 0 || extra <= 0 {
		return gogc
	}
	const heapMinimum = 4 << 20
	return gogc + int((100*extra)/max(live, heapMinimum))
}

// gcState returns the current GOGC and the live heap in bytes as of the
// last collection (0 before the first).
func gcState() (gogc int, live int64) {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		gogc = int(s[0].Value.Uint64())
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		live = int64(s[1].Value.Uint64())
	}
	return gogc, live
}
