package agent_test

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"

	"golang.org/x/sys/unix"
)

// stepsPerRun is the length of each conversation of BenchmarkAgentStep:
// a typical task, so the cost of a step includes building the model's
// input from a history of realistic length.
const stepsPerRun = 100

// BenchmarkAgentStep measures the full loop: an in-process scripted model
// with no latency asks for the think tool at every step, events are
// persisted to files, stuck detection is on. One op is one step.
//
// Sub-benchmarks choose the persistence (filestore.Options):
// "write-through" writes each event's file before the append returns,
// "write-behind" (the default) commits events to a journal and creates
// their files in the background, "memory" persists nothing. Set
// GOHANDS_BENCH_DIR (e.g. /dev/shm) to keep the disk's latency out of the
// figures.
func BenchmarkAgentStep(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts *filestore.Options
		mem  bool
	}{
		{"write-through", &filestore.Options{WriteThrough: true}, false},
		{"write-behind", nil, false},
		{"memory", nil, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			dir := benchDir(b)
			if bc.mem {
				dir = ""
			}
			benchSteps(b, dir, bc.opts)
		})
	}
}

// benchDir returns a directory for a benchmark's conversations: under
// $GOHANDS_BENCH_DIR if set, else a test temporary directory.
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

// benchSteps times think steps of conversations kept under dir, or in
// memory when dir is "".
func benchSteps(b *testing.B, dir string, fopts *filestore.Options) {
	steps := 0
	var cpu time.Duration // CPU time of the process while timed
	b.ReportAllocs()
	for steps < b.N {
		b.StopTimer()
		n := min(stepsPerRun, b.N-steps)
		replies := make([]llmtest.Reply, 0, n+1)
		for i := range n - 1 {
			replies = append(replies, llmtest.Reply{ToolCalls: []llmtest.ToolCall{
				{Name: "think", Arguments: fmt.Sprintf(`{"thought":"step %d: look at the next file"}`, i)},
			}})
		}
		replies = append(replies, llmtest.Reply{Text: "Done."})
		a, _ := newAgent(b, replies...)
		opts := &conversation.LocalOptions{MaxIterations: n + 1} // in memory when dir is ""
		if dir != "" {
			opts.Backend = filestore.NewBackend(dir, fopts)
		}
		c, err := conversation.New(ctx, a, b.TempDir(), opts)
		if err != nil {
			b.Fatal(err)
		}
		if err := c.SendMessage(ctx, event.UserMessage("Think it through.")); err != nil {
			b.Fatal(err)
		}
		c0 := cpuTime()
		b.StartTimer()
		if err := c.Run(ctx); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cpu += cpuTime() - c0
		if c.Status() != conversation.StatusFinished {
			b.Fatalf("status %s", c.Status())
		}
		c.Close()
		steps += n
		b.StartTimer()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
	// CPU time per step is what a step costs whatever else the machine
	// runs; ns/op also includes waiting for a busy CPU or disk.
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/step")
}

// cpuTime returns the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkIdleConversationMemory reports the heap held by one loaded, idle
// conversation of 1,000 persisted events (heap-B), the size of the events'
// JSON (events-B) and the difference (extra-B: what the conversation holds
// beyond the events' own bytes; negative when it holds less than them, as
// it keeps only an index in memory). Run it with -benchtime=1x or a few
// iterations: each one opens the conversation.
func BenchmarkIdleConversationMemory(b *testing.B) {
	dir := b.TempDir()
	work := b.TempDir()
	const steps = 499 // 2 events for 498 steps + system prompt, 2 user messages, reply = 1000
	replies := make([]llmtest.Reply, 0, steps+1)
	for i := range steps - 1 {
		replies = append(replies, llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{Name: "think", Arguments: fmt.Sprintf(`{"thought":"step %d: look at the next file and the one after it"}`, i)},
		}})
	}
	replies = append(replies, llmtest.Reply{Text: "Done."})
	a, _ := newAgent(b, replies...)
	c, err := conversation.New(ctx, a, work, &conversation.LocalOptions{Backend: filestore.NewBackend(dir, nil), MaxIterations: steps + 1, DisableStuckDetection: true})
	if err != nil {
		b.Fatal(err)
	}
	c.SendMessage(ctx, event.UserMessage("Think it through."))
	c.SendMessage(ctx, event.UserMessage("Take your time."))
	if err := c.Run(ctx); err != nil {
		b.Fatal(err)
	}
	id := c.ID()
	c.Close()

	var extra, size, heap float64
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		c, err := conversation.New(ctx, a, work, &conversation.LocalOptions{Backend: filestore.NewBackend(dir, nil), ID: id})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		total := 0
		for _, e := range c.State().Events().Entries() {
			total += e.Size
		}
		if n := c.State().Events().Len(); n != 1000 {
			b.Fatalf("%d events", n)
		}
		extra = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) - float64(total)
		size = float64(total)
		heap = float64(int64(after.HeapAlloc) - int64(before.HeapAlloc))
		c.Close()
	}
	b.ReportMetric(extra, "extra-B")
	b.ReportMetric(size, "events-B")
	b.ReportMetric(heap, "heap-B")
}
