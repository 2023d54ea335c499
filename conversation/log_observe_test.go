package conversation_test

import (
	"context"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/storetest"
	"github.com/gohands/gohands/telemetry"
)

// appendObserver counts the store-append measures by label; it is a
// Tracer whose spans are left to nobody.
type appendObserver struct {
	n      map[string]int
	others int
	neg    bool
}

func (o *appendObserver) Start(ctx context.Context, _ telemetry.Kind, _ string) (context.Context, telemetry.Recorder) {
	return ctx, nopRecorder{}
}

func (o *appendObserver) Observe(m telemetry.Measure, label string, d time.Duration) {
	if m != telemetry.MeasureStoreAppend {
		o.others++
		return
	}
	o.n[label]++
	o.neg = o.neg || d < 0
}

type nopRecorder struct{}

func (nopRecorder) SetString(string, string) {}
func (nopRecorder) SetInt(string, int64)     {}
func (nopRecorder) SetFloat(string, float64) {}
func (nopRecorder) End(error)                {}

// plainStore hides the memory store's kind.
type plainStore struct{ conversation.Store }

// TestLogObservesAppends: with an observer installed, each append the
// store took is measured once under the store's kind ("other" for a store
// that names none); a refused append is not. Not parallel: the observer
// is the process's.
func TestLogObservesAppends(t *testing.T) {
	o := &appendObserver{n: map[string]int{}}
	prev := telemetry.SetTracer(o)
	t.Cleanup(func() { telemetry.SetTracer(prev) })
	ctx := context.Background()
	for _, c := range []struct {
		store conversation.Store
		kind  string
	}{{conversation.NewMemoryStore(), "memory"}, {plainStore{conversation.NewMemoryStore()}, "other"}} {
		log, err := conversation.LoadLog(ctx, c.store)
		if err != nil {
			t.Fatal(err)
		}
		evs := storetest.Events(7)
		for _, e := range evs {
			if _, err := log.Append(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := log.Append(ctx, evs[0]); err == nil {
			t.Fatal("a duplicate id was appended")
		}
		if o.n[c.kind] != len(evs) {
			t.Errorf("%s store: %d appends measured as %q (all: %v), want %d", c.kind, o.n[c.kind], c.kind, o.n, len(evs))
		}
	}
	if o.others != 0 || o.neg {
		t.Errorf("other measures %d, negative durations %v", o.others, o.neg)
	}
}

// TestLogAppendObservedAllocatesNothingMore: measuring an append adds no
// allocation to it (two logs take the same appends, one observed).
//
// testing.AllocsPerRun truncates to whole allocations, which hides an added
// one behind the appends' amortized slice growth and flips when that growth
// sits near a whole number; the malloc counts are compared as fractions
// instead. They count every goroutine's allocations, so each mode keeps its
// fewest of three tries: a stray allocation elsewhere does not repeat, one the
// observer adds does.
func TestLogAppendObservedAllocatesNothingMore(t *testing.T) {
	const runs = 2000
	allocs := func(o telemetry.Tracer) float64 {
		prev := telemetry.SetTracer(o)
		defer telemetry.SetTracer(prev)
		log, err := conversation.LoadLog(context.Background(), conversation.NewMemoryStore())
		if err != nil {
			t.Fatal(err)
		}
		evs := storetest.Events(runs)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for _, e := range evs {
			if _, err := log.Append(context.Background(), e); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		return float64(after.Mallocs-before.Mallocs) / runs
	}
	off, on := math.Inf(1), math.Inf(1)
	for range 3 {
		off = min(off, allocs(nil))
		o := &appendObserver{n: map[string]int{}}
		on = min(on, allocs(o))
		if o.n["memory"] != runs {
			t.Fatalf("%d appends observed, want %d", o.n["memory"], runs)
		}
	}
	if on-off >= 0.5 {
		t.Errorf("an observed append allocates %.2f times, unobserved %.2f", on, off)
	}
}
