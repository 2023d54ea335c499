package prom

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gohands/gohands/telemetry"
)

// TestText checks the text format with Prometheus's parser: escaped
// label values, cumulative buckets, +Inf, sums and counts.
func TestText(t *testing.T) {
	r := New()
	now := time.Unix(0, 0)
	r.now = func() time.Time { return now }
	odd := "vendor/\"model\"\\\nx"
	for i, d := range []time.Duration{50 * time.Millisecond, 3 * time.Second, 1000 * time.Second} {
		_, rec := r.Start(context.Background(), telemetry.KindModelCall, "chat")
		rec.SetString(telemetry.AttrRequestModel, odd)
		rec.SetInt(telemetry.AttrInputTokens, 10)
		rec.SetFloat(telemetry.AttrCost, 0.5)
		now = now.Add(d)
		var err error
		if i == 2 {
			err = errors.New("down")
		}
		rec.End(err)
	}
	var buf bytes.Buffer
	if _, err := r.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	h := fams["gohands_model_call_duration_seconds"].GetMetric()[0]
	if got := h.GetLabel()[0].GetValue(); got != odd {
		t.Errorf("model label %q, want %q", got, odd)
	}
	hist := h.GetHistogram()
	if hist.GetSampleCount() != 3 || hist.GetSampleSum() != 1003.05 {
		t.Errorf("count %d sum %v", hist.GetSampleCount(), hist.GetSampleSum())
	}
	for _, b := range hist.GetBucket() {
		want := uint64(0)
		switch {
		case b.GetUpperBound() > 1000:
			want = 3
		case b.GetUpperBound() >= 5:
			want = 2
		case b.GetUpperBound() >= 0.1:
			want = 1
		}
		if b.GetCumulativeCount() != want {
			t.Errorf("bucket le=%v: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want)
		}
	}
	calls := map[string]float64{}
	for _, m := range fams["gohands_model_calls_total"].GetMetric() {
		calls[m.GetLabel()[1].GetValue()] = m.GetCounter().GetValue()
	}
	if calls["ok"] != 2 || calls["error"] != 1 {
		t.Errorf("calls by outcome %v", calls)
	}
	if got := fams["gohands_model_cost_usd_total"].GetMetric()[0].GetCounter().GetValue(); got != 1.5 {
		t.Errorf("cost %v", got)
	}
	if got := fams["gohands_steps_total"].GetMetric()[0].GetCounter().GetValue(); got != 0 {
		t.Errorf("steps %v before any", got)
	}
}

// TestObserveStoreAppend: appends are a histogram by store kind, in the
// store buckets, and observing one allocates nothing once its series
// exists (it runs on every event appended).
func TestObserveStoreAppend(t *testing.T) {
	r := New()
	for _, d := range []time.Duration{20 * time.Microsecond, 3 * time.Millisecond, 2 * time.Second} {
		r.Observe(telemetry.MeasureStoreAppend, "file", d)
	}
	r.Observe(telemetry.MeasureStoreAppend, "postgres", time.Millisecond)
	r.Observe(telemetry.Measure(200), "ignored", time.Second)
	if n := testing.AllocsPerRun(100, func() { r.Observe(telemetry.MeasureStoreAppend, "memory", time.Microsecond) }); n != 0 {
		t.Errorf("Observe: %v allocations, want 0", n)
	}
	var buf bytes.Buffer
	if _, err := r.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.Bytes())
	}
	f := fams["gohands_event_store_append_duration_seconds"]
	if f == nil {
		t.Fatalf("no store append histogram:\n%s", buf.Bytes())
	}
	got := map[string][2]float64{} // store → count, sum
	buckets := map[string]map[float64]uint64{}
	for _, m := range f.GetMetric() {
		store := m.GetLabel()[0].GetValue()
		h := m.GetHistogram()
		got[store] = [2]float64{float64(h.GetSampleCount()), h.GetSampleSum()}
		buckets[store] = map[float64]uint64{}
		for _, b := range h.GetBucket() {
			buckets[store][b.GetUpperBound()] = b.GetCumulativeCount()
		}
	}
	if len(got) != 3 || got["file"][0] != 3 || got["postgres"][0] != 1 || got["memory"][0] != 101 {
		t.Errorf("series %v, want file 3, postgres 1, memory 101", got)
	}
	if s := got["file"][1]; s < 2.00302 || s > 2.00303 {
		t.Errorf("file sum %v, want 2.00302", s)
	}
	if b := buckets["file"]; b[0.000025] != 1 || b[0.0025] != 1 || b[0.005] != 2 || b[1] != 2 || b[5] != 3 {
		t.Errorf("file buckets %v", b)
	}
}

// TestEndAllocatesOnlyTheRecorder: once a model's series exist, a span
// allocates its recorder and nothing more (counting runs on every step).
func TestEndAllocatesOnlyTheRecorder(t *testing.T) {
	r := New()
	ctx := context.Background()
	call := func() {
		_, rc := r.Start(ctx, telemetry.KindModelCall, "chat m")
		rc.SetString(telemetry.AttrRequestModel, "openai/gpt-4o")
		rc.SetInt(telemetry.AttrInputTokens, 10)
		rc.SetInt(telemetry.AttrOutputTokens, 5)
		rc.SetFloat(telemetry.AttrCost, 0.01)
		rc.SetFloat(telemetry.AttrTimeToFirst, 0.2)
		rc.End(nil)
		_, tc := r.Start(ctx, telemetry.KindToolCall, "execute_tool think")
		tc.SetString(telemetry.AttrToolName, "think")
		tc.End(nil)
	}
	call()
	if n := testing.AllocsPerRun(100, call); n != 2 {
		t.Fatalf("a model call and a tool call: %v allocations, want 2 (their recorders)", n)
	}
}
