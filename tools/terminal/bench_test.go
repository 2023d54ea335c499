package terminal

import (
	"context"
	"slices"
	"testing"
	"time"
)

// BenchmarkTerminalEcho measures the round trip of `echo hi` through the
// persistent session and reports its median and 99th percentile.
func BenchmarkTerminalEcho(b *testing.B) {
	term := newTerminal(b, nil)
	ctx := context.Background()
	a := &Action{Command: "echo hi"}
	if o, err := term.Run(ctx, a); err != nil || o.Text() != "hi" {
		b.Fatalf("warm-up: %v %+v", err, o)
	}
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		o, err := term.Run(ctx, a)
		times = append(times, time.Since(start))
		if err != nil || o.Text() != "hi" {
			b.Fatalf("%v %+v", err, o)
		}
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(times[len(times)*99/100].Nanoseconds()), "p99-ns")
}
