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
