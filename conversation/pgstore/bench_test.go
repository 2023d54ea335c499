package pgstore_test

import (
	"context"
	"github.com/gohands/gohands/conversation"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gohands/gohands/conversation/pgstore"
	"github.com/gohands/gohands/conversation/storetest"
	"github.com/gohands/gohands/internal/pgtest"
)

// BenchmarkAppend appends events to one conversation, each in its own
// transaction as the agent does, and reports the latency percentiles.
func BenchmarkAppend(b *testing.B) {
	pgtest.Require(b, pg)
	pb, err := pgstore.Open(context.Background(), pg.NewDatabase(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer pb.Close()
	s, err := pb.Open(context.Background(), uuid.NewString())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	st, err := conversation.LoadLog(context.Background(), s)
	if err != nil {
		b.Fatal(err)
	}
	evs := storetest.Events(b.N)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		t := time.Now()
		if _, err := st.Append(context.Background(), evs[i]); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(len(lat))/b.Elapsed().Seconds(), "events/s")
}
