package telemetry_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/telemetry"
)

type recTracer struct{ log *[]string }

func (t recTracer) Start(ctx context.Context, kind telemetry.Kind, name string) (context.Context, telemetry.Recorder) {
	*t.log = append(*t.log, "start "+kind.String()+" "+name)
	return ctx, rec(t)
}

type rec recTracer

func (r rec) SetString(k, v string)        { *r.log = append(*r.log, k+"="+v) }
func (r rec) SetInt(k string, v int64)     { *r.log = append(*r.log, k+"=int") }
func (r rec) SetFloat(k string, v float64) { *r.log = append(*r.log, k+"=float") }
func (r rec) End(err error) {
	s := "end"
	if err != nil {
		s += " " + err.Error()
	}
	*r.log = append(*r.log, s)
}

func TestOffAllocatesNothing(t *testing.T) {
	telemetry.SetTracer(nil)
	ctx := context.Background()
	tool := strings.Repeat("t", 40) // longer than a concatenation's stack buffer
	allocs := testing.AllocsPerRun(100, func() {
		c, span := telemetry.Start(ctx, telemetry.KindStep, "agent.step")
		_, op := telemetry.StartOp(c, telemetry.KindToolCall, "execute_tool", tool)
		op.End(nil)
		span.SetString(telemetry.AttrToolName, "x")
		span.SetInt(telemetry.AttrStep, 1)
		span.SetFloat(telemetry.AttrCost, 1)
		span.End(nil)
		if telemetry.Observing() != nil {
			t.Fatal("observing with no tracer")
		}
		_ = c
	})
	if allocs != 0 {
		t.Fatalf("Start with tracing off: %v allocations, want 0", allocs)
	}
	if telemetry.Enabled() {
		t.Fatal("Enabled with no tracer")
	}
}

func TestMultiAndSetTracer(t *testing.T) {
	var a, b []string
	prev := telemetry.SetTracer(telemetry.Multi(recTracer{&a}, recTracer{&b}))
	defer telemetry.SetTracer(prev)
	_, span := telemetry.Start(context.Background(), telemetry.KindToolCall, "execute_tool x")
	if !span.Recording() {
		t.Fatal("span not recording with a tracer installed")
	}
	span.SetString(telemetry.AttrToolName, "x")
	span.SetInt(telemetry.AttrExitCode, 0)
	span.End(errors.New("boom"))
	want := []string{"start tool_call execute_tool x", "gen_ai.tool.name=x", "process.exit.code=int", "end boom"}
	if !slices.Equal(a, want) || !slices.Equal(b, want) {
		t.Fatalf("recorded\n%q\n%q\nwant %q", a, b, want)
	}
	if old := telemetry.SetTracer(nil); old == nil {
		t.Fatal("SetTracer did not return the tracer it replaced")
	}
	if _, span := telemetry.Start(context.Background(), telemetry.KindRun, "r"); span.Recording() {
		t.Fatal("span recording after SetTracer(nil)")
	}
}

func BenchmarkStartOff(b *testing.B) {
	telemetry.SetTracer(nil)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, span := telemetry.Start(ctx, telemetry.KindStep, "agent.step")
		span.End(nil)
	}
}

func TestParseSpanContext(t *testing.T) {
	const tid, sid = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	for _, in := range []string{
		"00-" + tid + "-" + sid + "-01",
		`{"trace_id":"0af76519-16cd-43dd-8448-eb211c80319c","span_id":"00000000-0000-0000-b7ad-6b7169203331","is_remote":true,"span_path":["x"]}`,
		`{"traceId":"0af76519-16cd-43dd-8448-eb211c80319c","spanId":"00000000-0000-0000-b7ad-6b7169203331"}`,
	} {
		sc, err := telemetry.ParseSpanContext(in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got := fmt.Sprintf("%x-%x", sc.TraceID, sc.SpanID); got != tid+"-"+sid || !sc.Sampled {
			t.Errorf("%s: %s, sampled %v", in, got, sc.Sampled)
		}
	}
	if sc, err := telemetry.ParseSpanContext("00-" + tid + "-" + sid + "-00"); err != nil || sc.Sampled {
		t.Errorf("flags 00: %+v %v, want not sampled", sc, err)
	}
	for _, in := range []string{"", "00-zz-" + sid + "-01", "00-" + tid + "-" + sid + "-1", "00-" + tid + "-" + sid + "-0g", `{"trace_id":"x"}`, "00-" + tid + "-0000000000000000-01", "01-" + tid + "-" + sid + "-01"} {
		if _, err := telemetry.ParseSpanContext(in); err == nil {
			t.Errorf("%q parsed", in)
		}
	}
}

// obsTracer is a tracer that observes measures.
type obsTracer struct {
	recTracer
	got *[]string
}

func (o obsTracer) Observe(m telemetry.Measure, label string, d time.Duration) {
	*o.got = append(*o.got, fmt.Sprint(m, label, d))
}

// TestObserving: the installed tracer observes measures only if it is an
// Observer; a Multi passes them to those of its tracers that are.
func TestObserving(t *testing.T) {
	var log, a, b []string
	prev := telemetry.SetTracer(recTracer{&log})
	defer telemetry.SetTracer(prev)
	if telemetry.Observing() != nil {
		t.Fatal("a tracer that does not observe is observing")
	}
	telemetry.SetTracer(telemetry.Multi(recTracer{&log}, recTracer{&log}))
	if telemetry.Observing() != nil {
		t.Fatal("a Multi of tracers that do not observe is observing")
	}
	telemetry.SetTracer(obsTracer{recTracer{&log}, &a})
	telemetry.Observing().Observe(telemetry.MeasureStoreAppend, "file", time.Millisecond)
	telemetry.SetTracer(telemetry.Multi(recTracer{&log}, obsTracer{recTracer{&log}, &b}, nil, obsTracer{recTracer{&log}, &b}))
	o := telemetry.Observing()
	if o == nil {
		t.Fatal("a Multi with observers is not observing")
	}
	o.Observe(telemetry.MeasureStoreAppend, "postgres", 2*time.Millisecond)
	if want := []string{"1file1ms"}; !slices.Equal(a, want) {
		t.Errorf("observed %q, want %q", a, want)
	}
	if want := []string{"1postgres2ms", "1postgres2ms"}; !slices.Equal(b, want) {
		t.Errorf("Multi observed %q, want %q", b, want)
	}
	if len(log) != 0 {
		t.Errorf("observing started spans: %q", log)
	}
}

// nilTracer records nothing: a trace exporter that sampled its trace out.
type nilTracer struct{}

func (nilTracer) Start(ctx context.Context, _ telemetry.Kind, _ string) (context.Context, telemetry.Recorder) {
	return ctx, nil
}

// TestMultiSampledOut: a tracer that records nothing is left out of the
// span; with one other it is that one's recorder, and with none the span
// is not recording.
func TestMultiSampledOut(t *testing.T) {
	var a []string
	prev := telemetry.SetTracer(telemetry.Multi(nilTracer{}, recTracer{&a}))
	defer telemetry.SetTracer(prev)
	_, span := telemetry.Start(context.Background(), telemetry.KindStep, "agent.step")
	span.SetInt(telemetry.AttrStep, 1)
	span.End(nil)
	if want := []string{"start step agent.step", "gohands.step=int", "end"}; !slices.Equal(a, want) {
		t.Errorf("recorded %q, want %q", a, want)
	}
	var b, c []string
	telemetry.SetTracer(telemetry.Multi(recTracer{&a}, nilTracer{}, recTracer{&b}, recTracer{&c}))
	a = nil
	_, span = telemetry.Start(context.Background(), telemetry.KindStep, "agent.step")
	span.End(nil)
	if want := []string{"start step agent.step", "end"}; !slices.Equal(a, want) || !slices.Equal(b, want) || !slices.Equal(c, want) {
		t.Errorf("three of four recorded %q %q %q, want %q each", a, b, c, want)
	}
	telemetry.SetTracer(telemetry.Multi(nilTracer{}, nilTracer{}))
	if _, span := telemetry.Start(context.Background(), telemetry.KindStep, "agent.step"); span.Recording() {
		t.Error("recording with every tracer sampling out")
	}
}
