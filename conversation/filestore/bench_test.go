package filestore_test

import (
	"context"
	"fmt"
	"github.com/gohands/gohands/conversation/internal/convtest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"

	"golang.org/x/sys/unix"
)

// Benchmarks run on the realistic mix of convtest.RealisticEvents (the reference's
// median conversation: 82 events, 380 KB, observations 48% of events and
// ~78% of bytes). scripts/bench.sh runs them and prints a table.

// latencies records per-operation times to report percentiles, since the
// targets are stated as medians.
type latencies []time.Duration

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	b.ReportMetric(float64(l[len(l)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(l[len(l)*95/100].Nanoseconds()), "p95-ns")
}

// cpuClock measures the process's CPU time (user+system, all threads)
// over a benchmark loop. On a shared machine wall time includes waiting for
// other processes; cpu-ns/op is what the work itself costs (background
// writers and GC included).
type cpuClock struct {
	acc, since time.Duration
	running    bool
}

func cpuNow() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU() *cpuClock { return &cpuClock{since: cpuNow(), running: true} }

// stop and start bracket untimed work, with b.StopTimer and b.StartTimer.
func (c *cpuClock) stop(b *testing.B) {
	b.StopTimer()
	c.acc += cpuNow() - c.since
	c.running = false
}

func (c *cpuClock) start(b *testing.B) {
	c.since, c.running = cpuNow(), true
	b.StartTimer()
}

func (c *cpuClock) report(b *testing.B) {
	if c.running {
		c.acc += cpuNow() - c.since
		c.running = false
	}
	b.ReportMetric(float64(c.acc.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// freshIDs gives each reused event a new id, as a new event would have.
func freshID(e event.Event, n int) {
	b := e.EventBase()
	b.ID = fmt.Sprintf("%08x-0000-4000-8000-%012x", n>>16, n)
	b.ParentID = ""
}

// benchDir returns a new directory for a benchmark's conversation: under
// $GOHANDS_BENCH_DIR if set (e.g. /dev/shm, to take disk contention from
// other processes out of the figures), else a test temporary directory.
func benchDir(b *testing.B) string {
	root := os.Getenv("GOHANDS_BENCH_DIR")
	if root == "" {
		return b.TempDir()
	}
	dir, err := os.MkdirTemp(root, "gohands-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func newBenchState(b *testing.B, opts *filestore.Options) *conversation.State {
	s, err := filestore.Open(benchDir(b), opts)
	if err != nil {
		b.Fatal(err)
	}
	st, err := conversation.Create(context.Background(), s, convtest.NewFields(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

// persistModes are the two ways a FileStore persists an append:
// "write-through" (FileOptions.WriteThrough) creates the event's file before returning, as
// the reference does; "write-behind" (the default) commits it to the
// journal and creates the file in the background. After every append the
// benchmark waits, untimed, for the background writer to finish, as an
// agent's pace (an LLM call between events) lets it, so each append finds
// the store idle.
var persistModes = []struct {
	name string
	opts *filestore.Options
}{
	{"write-through", &filestore.Options{WriteThrough: true}},
	{"write-behind", nil},
}

func settle(b *testing.B, cpu *cpuClock, st *conversation.State) {
	if fs, ok := st.Events().Store().(*filestore.Store); ok {
		cpu.stop(b)
		if err := fs.Sync(); err != nil {
			b.Fatal(err)
		}
		cpu.start(b)
	}
}

// BenchmarkEventPersist appends one event (stamp, encode, write, index)
// through a State on a FileStore.
func BenchmarkEventPersist(b *testing.B) {
	for _, m := range persistModes {
		b.Run(m.name, func(b *testing.B) {
			evs := convtest.RealisticEvents(82)
			st := newBenchState(b, m.opts)
			lat := make(latencies, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			cpu := startCPU()
			defer cpu.report(b)
			for i := range b.N {
				e := evs[i%len(evs)]
				freshID(e, i)
				t0 := time.Now()
				if _, err := st.Append(e); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
				settle(b, cpu, st)
			}
			b.StopTimer()
			lat.report(b)
		})
	}
}

// BenchmarkActionCyclePersist appends an action and its observation.
func BenchmarkActionCyclePersist(b *testing.B) {
	for _, m := range persistModes {
		b.Run(m.name, func(b *testing.B) {
			var cycles [][2]event.Event
			for i := range 40 {
				a, o := convtest.ActionCycle(i, 1800+((i*7)%13)*900)
				cycles = append(cycles, [2]event.Event{a, o})
			}
			st := newBenchState(b, m.opts)
			lat := make(latencies, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			cpu := startCPU()
			defer cpu.report(b)
			for i := range b.N {
				c := cycles[i%len(cycles)]
				freshID(c[0], 2*i)
				freshID(c[1], 2*i+1)
				c[1].(*event.ObservationEvent).ActionID = c[0].EventBase().ID
				t0 := time.Now()
				if _, err := st.Append(c[0]); err != nil {
					b.Fatal(err)
				}
				if _, err := st.Append(c[1]); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
				settle(b, cpu, st)
			}
			b.StopTimer()
			lat.report(b)
		})
	}
}

// BenchmarkFileCreateFloor is the cost write-through cannot avoid on this
// machine: create, write (4.6 KB) and close one new file, with no encoding
// and no index.
func BenchmarkFileCreateFloor(b *testing.B) {
	dir := benchDir(b)
	data := make([]byte, 4600)
	b.ResetTimer()
	cpu := startCPU()
	defer cpu.report(b)
	for i := range b.N {
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("event-%05d-x.json", i)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		f.Write(data)
		f.Close()
	}
}

// writeBenchLog writes n realistic events to a new conversation directory.
// With running set, the status is running and the last event is an
// unanswered action, the state a crash leaves.
func writeBenchLog(b *testing.B, n int, running bool) string {
	b.Helper()
	dir := benchDir(b)
	st, err := conversation.Create(context.Background(), openFile(b, dir), convtest.NewFields(), nil)
	if err != nil {
		b.Fatal(err)
	}
	evs := convtest.RealisticEvents(n)
	if running {
		a, _ := convtest.ActionCycle(9999, 10)
		evs[n-1] = a
		st.Update(func(f *conversation.Fields) error { f.ExecutionStatus = conversation.StatusRunning; return nil })
	}
	for _, e := range evs {
		if _, err := st.Append(e); err != nil {
			b.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	return dir
}

func openState(b *testing.B, dir string) *conversation.State {
	s, err := filestore.Open(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	st, err := conversation.Open(context.Background(), s, nil)
	if err != nil {
		b.Fatal(err)
	}
	return st
}

// BenchmarkReplay1000 reopens a conversation of 1,000 events (4.6 MB): take
// the lock, read base_state.json, list the events directory and load the
// index. Event bodies are read lazily, so "open" is what a resume costs;
// "open-no-cache" is the same for a directory without gohands' index cache
// (e.g. written by the reference), where every event file is read and
// scanned; "decode-all" also reads and decodes every event, which is what
// the reference's figure measures.
func BenchmarkReplay1000(b *testing.B) {
	dir := writeBenchLog(b, 1000, false)
	b.Run("open", func(b *testing.B) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		st := openState(b, dir)
		runtime.GC()
		runtime.ReadMemStats(&after)
		if st.Events().Len() != 1000 {
			b.Fatalf("Len = %d", st.Events().Len())
		}
		st.Close()
		b.ReportAllocs()
		b.ResetTimer()
		cpu := startCPU()
		defer cpu.report(b)
		for range b.N {
			openState(b, dir).Close()
		}
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/1000, "heap-B/event")
	})
	b.Run("open-no-cache", func(b *testing.B) {
		b.ReportAllocs()
		cpu := startCPU()
		defer cpu.report(b)
		for range b.N {
			cpu.stop(b)
			os.Remove(filepath.Join(dir, filestore.IndexFile))
			cpu.start(b)
			openState(b, dir).Close()
		}
	})
	// full is what replaying a conversation the reference wrote costs: no
	// index cache, every event decoded (bench/compare's replay row).
	// It reports the median wall time too (p50-ns): on a shared machine
	// the mean is pulled up by the runs that waited for a core.
	b.Run("full", func(b *testing.B) {
		b.ReportAllocs()
		lat := make(latencies, 0, b.N)
		cpu := startCPU()
		defer cpu.report(b)
		for range b.N {
			cpu.stop(b)
			os.Remove(filepath.Join(dir, filestore.IndexFile))
			cpu.start(b)
			t0 := time.Now()
			st := openState(b, dir)
			s := st.Events()
			for i := range s.Len() {
				if _, err := s.Event(b.Context(), i); err != nil {
					b.Fatal(err)
				}
			}
			lat = append(lat, time.Since(t0))
			st.Close()
		}
		b.StopTimer()
		lat.report(b)
	})
	b.Run("decode-all", func(b *testing.B) {
		b.ReportAllocs()
		cpu := startCPU()
		defer cpu.report(b)
		for range b.N {
			st := openState(b, dir)
			s := st.Events()
			for i := range s.Len() {
				if _, err := s.Event(b.Context(), i); err != nil {
					b.Fatal(err)
				}
			}
			st.Close()
		}
	})
}

// BenchmarkRecovery1000 is a restart after a crash: reopen a conversation
// of 1,000 events left running with an unanswered last action, find the
// unmatched actions and append the AgentErrorEvent, set status error and
// write base_state.json. Then the conversation is recovered and persisted
// (the error event in the journal); closing it, which waits for the error
// event's own file, and undoing the changes are not timed.
func BenchmarkRecovery1000(b *testing.B) {
	dir := writeBenchLog(b, 1000, true)
	basePath := filepath.Join(dir, filestore.BaseStateFile)
	indexPath := filepath.Join(dir, filestore.IndexFile)
	base, _ := os.ReadFile(basePath)
	idx, _ := os.ReadFile(indexPath)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	defer cpu.report(b)
	for range b.N {
		st := openState(b, dir)
		ev, err := st.RecoverRunning()
		if err != nil || ev == nil {
			b.Fatalf("recovery: %v, %v", ev, err)
		}
		cpu.stop(b)
		st.Close()
		os.Remove(filepath.Join(dir, filestore.EventsDir, fmt.Sprintf("event-%05d-%s.json", 1000, ev.ID)))
		os.WriteFile(basePath, base, 0o644)
		os.WriteFile(indexPath, idx, 0o644)
		cpu.start(b)
	}
}

// BenchmarkSearch2000 fetches one page of 100 from a search over 2,000
// events: observations after a page id, within a time range. "entries"
// returns the index entries (all a search needs to decide and page);
// "raw" also reads the 100 event files, as the server's search endpoint
// returns the stored JSON.
func BenchmarkSearch2000(b *testing.B) {
	dir := writeBenchLog(b, 2000, false)
	st := openState(b, dir)
	defer st.Close()
	s := st.Events()
	mid, _ := s.Entry(500)
	last, _ := s.Entry(1900)
	q := conversation.Query{Kind: "ObservationEvent", PageID: mid.ID, TimestampLT: last.Timestamp, Limit: 100}
	if p, err := s.Search(q); err != nil || len(p.Entries) != 100 || p.NextPageID == "" {
		b.Fatalf("search: %d entries, %v", len(p.Entries), err)
	}
	b.Run("entries", func(b *testing.B) {
		b.ReportAllocs()
		cpu := startCPU()
		defer cpu.report(b)
		for range b.N {
			if _, err := s.Search(q); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		b.ReportAllocs()
		cpu := startCPU()
		defer cpu.report(b)
		for range b.N {
			p, err := s.Search(q)
			if err != nil {
				b.Fatal(err)
			}
			for _, e := range p.Entries {
				if _, err := s.Raw(b.Context(), e.Index); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
