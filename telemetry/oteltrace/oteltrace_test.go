package oteltrace

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/gohands/gohands/telemetry"
)

// memExporter keeps what it is given.
type memExporter struct {
	mu      sync.Mutex
	batches [][]*SpanData
}

func (m *memExporter) Export(_ context.Context, _ *Resource, spans []*SpanData) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.batches = append(m.batches, spans)
	return nil
}

func (m *memExporter) Shutdown(context.Context) error { return nil }

func clearOTLPEnv(t *testing.T) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_EXPORTER",
		"OTEL_SDK_DISABLED", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_HEADERS",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_INSECURE", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES"} {
		t.Setenv(k, "")
	}
}

// TestTree: parents, the remote parent, attribute replacement, a failed
// span, and batches of at most OTEL_BSP_MAX_EXPORT_BATCH_SIZE delivered by
// Shutdown.
func TestTree(t *testing.T) {
	clearOTLPEnv(t)
	t.Setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "2")
	mem := &memExporter{}
	p, err := Setup(context.Background(), &Options{Exporters: []Exporter{mem}})
	if err != nil || p == nil {
		t.Fatal(p, err)
	}
	remote, _ := telemetry.ParseSpanContext("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	ctx := telemetry.WithRemoteParent(context.Background(), remote)
	ctx, run := telemetry.Start(ctx, telemetry.KindRun, "conversation.run")
	_, step := telemetry.Start(ctx, telemetry.KindStep, "agent.step")
	step.SetInt(telemetry.AttrStep, 1)
	step.SetInt(telemetry.AttrStep, 2)
	step.End(errors.New("boom"))
	run.End(nil)
	_, other := telemetry.Start(context.Background(), telemetry.KindModelCall, "chat m")
	other.End(nil)
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if telemetry.Enabled() {
		t.Fatal("tracer installed after Shutdown")
	}
	var all []*SpanData
	for _, b := range mem.batches {
		if len(b) > 2 {
			t.Errorf("batch of %d spans, want at most 2", len(b))
		}
		all = append(all, b...)
	}
	if len(all) != 3 {
		t.Fatalf("%d spans exported, want 3", len(all))
	}
	st, r, o := all[0], all[1], all[2]
	if r.TraceID != remote.TraceID || r.ParentSpanID != remote.SpanID || !r.RemoteParent {
		t.Errorf("run span %x/%x, want under the remote parent", r.TraceID, r.ParentSpanID)
	}
	if st.TraceID != r.TraceID || st.ParentSpanID != r.SpanID || st.RemoteParent {
		t.Errorf("step span not a child of the run")
	}
	if !st.Failed || st.Message != "boom" {
		t.Errorf("step status %v %q", st.Failed, st.Message)
	}
	var steps []int64
	for _, a := range st.Attrs {
		if a.Key == telemetry.AttrStep {
			steps = append(steps, a.Int)
		}
	}
	if len(steps) != 1 || steps[0] != 2 {
		t.Errorf("step attributes %v, want one, replaced by the last", steps)
	}
	if o.TraceID == r.TraceID || o.ParentSpanID != ([8]byte{}) || o.Kind != SpanKindClient {
		t.Errorf("unrelated span: trace %x parent %x kind %d", o.TraceID, o.ParentSpanID, o.Kind)
	}
}

// TestOTLPHTTP exports to a loopback server speaking OTLP/HTTP: the
// configured headers, gzip and JSON arrive, a 503 is retried, a 400 is
// not.
func TestOTLPHTTP(t *testing.T) {
	clearOTLPEnv(t)
	var mu sync.Mutex
	var got []string
	statuses := []int{503, 200, 400}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		body, _ := io.ReadAll(r.Body)
		got = append(got, r.URL.Path+" "+r.Header.Get("Content-Type")+" "+r.Header.Get("Authorization")+" "+r.Header.Get("Content-Encoding")+" "+string(body[:2]))
		code := statuses[0]
		statuses = statuses[1:]
		w.WriteHeader(code)
	}))
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL+"/base/")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer%20tok, x-other = 1")
	e, err := newOTLPExporter()
	if err != nil {
		t.Fatal(err)
	}
	res := resourceFromEnv("")
	d := &SpanData{Name: "s", Kind: SpanKindInternal}
	if err := e.Export(context.Background(), res, []*SpanData{d}); err != nil {
		t.Fatalf("export after one 503: %v", err)
	}
	if err := e.Export(context.Background(), res, []*SpanData{d}); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("export answered 400: %v", err)
	}
	want := "/base/v1/traces application/json Bearer tok  {\""
	if len(got) != 3 || got[0] != want || got[1] != want {
		t.Errorf("requests %q, want three of %q", got, want)
	}

	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", srv.URL+"/exact")
	statuses = []int{200}
	got = nil
	if e, err = newOTLPExporter(); err != nil {
		t.Fatal(err)
	}
	if err := e.Export(context.Background(), res, []*SpanData{d}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], "/exact application/x-protobuf Bearer tok gzip") {
		t.Errorf("protobuf request %q", got)
	}
}

func TestConfigErrors(t *testing.T) {
	clearOTLPEnv(t)
	for _, c := range []struct{ k, v, want string }{
		{"OTEL_EXPORTER_OTLP_PROTOCOL", "thrift", "not supported"},
		{"OTEL_EXPORTER_OTLP_COMPRESSION", "zstd", "not supported"},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "ftp://x/v1/traces", "not an http(s) URL"},
	} {
		t.Run(c.k, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
			t.Setenv(c.k, c.v)
			if p, err := Setup(context.Background(), nil); err == nil || !strings.Contains(err.Error(), c.want) {
				p.Shutdown(context.Background())
				t.Fatalf("%s=%s: %v, want an error saying %q", c.k, c.v, err, c.want)
			}
		})
	}
	if p, err := Setup(context.Background(), nil); p != nil || err != nil {
		t.Fatalf("nothing configured: %v %v", p, err)
	}
}

// TestProtoLengths: a sub-message longer than 127 and 16383 bytes gets a
// two- and three-byte length, and the bytes after it stay in place.
func TestProtoLengths(t *testing.T) {
	for _, n := range []int{3, 200, 20000} {
		b := message([]byte{0xAA}, 9, func(b []byte) []byte { return append(b, strings.Repeat("x", n)...) })
		b = append(b, 0xBB)
		if b[0] != 0xAA || b[1] != 9<<3|wireBytes {
			t.Fatalf("n=%d: prefix % x", n, b[:2])
		}
		l, k := binary.Uvarint(b[2:])
		if int(l) != n || len(b) != 2+k+n+1 || b[len(b)-1] != 0xBB || b[2+k] != 'x' {
			t.Fatalf("n=%d: length %d (%d bytes), total %d", n, l, k, len(b))
		}
	}
}

// TestJSONFile: the file exporter writes one OTLP JSON request per line.
func TestJSONFile(t *testing.T) {
	var buf strings.Builder
	e := NewJSONExporter(&buf)
	d := &SpanData{Name: "s", Kind: SpanKindServer, Attrs: []Attr{{Key: "i", Type: AttrInt, Int: 7}}, Failed: true, Message: "m"}
	d.TraceID[0], d.SpanID[0], d.ParentSpanID[7] = 1, 2, 3
	if err := e.Export(context.Background(), resourceFromEnv("svc"), []*SpanData{d}); err != nil {
		t.Fatal(err)
	}
	var req jsonRequest
	if err := json.Unmarshal([]byte(buf.String()), &req); err != nil || !strings.HasSuffix(buf.String(), "}\n") {
		t.Fatalf("%v: %s", err, buf.String())
	}
	s := req.ResourceSpans[0].ScopeSpans[0].Spans[0]
	if s.TraceID != "01000000000000000000000000000000" || s.ParentSpanID != "0000000000000003" || s.Kind != 2 ||
		*s.Attributes[0].Value.IntValue != "7" || s.Status.Code != 2 || s.Status.Message != "m" {
		t.Errorf("span %+v", s)
	}
}

// TestSampler: OTEL_TRACES_SAMPLER decides per trace, at its first span
// in the process; the trace's other spans follow, a sampled-out span
// records nothing and allocates nothing, a Multi's other tracer (the
// metrics) still records, and parent-based samplers follow a remote
// parent's flag.
func TestSampler(t *testing.T) {
	remote := func(flags string) context.Context {
		sc, err := telemetry.ParseSpanContext("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-" + flags)
		if err != nil {
			t.Fatal(err)
		}
		return telemetry.WithRemoteParent(context.Background(), sc)
	}
	for _, c := range []struct {
		sampler, arg string
		// traces: 1000 local ones; then one under a sampled and one
		// under an unsampled remote parent.
		minLocal, maxLocal             int
		sampledRemote, unsampledRemote bool
	}{
		{"", "", 1000, 1000, true, false},
		{"always_on", "", 1000, 1000, true, true},
		{"always_off", "", 0, 0, false, false},
		{"traceidratio", "0.25", 150, 350, false, false}, // the fixed trace id's ratio is > 0.25
		{"parentbased_always_off", "", 0, 0, true, false},
		{"parentbased_traceidratio", "0.5", 400, 600, true, false},
	} {
		t.Run(c.sampler+c.arg, func(t *testing.T) {
			clearOTLPEnv(t)
			t.Setenv("OTEL_TRACES_SAMPLER", c.sampler)
			t.Setenv("OTEL_TRACES_SAMPLER_ARG", c.arg)
			mem := &memExporter{}
			p, err := Setup(context.Background(), &Options{Exporters: []Exporter{mem}, Sync: true})
			if err != nil {
				t.Fatal(err)
			}
			var calls int
			prev := telemetry.SetTracer(nil)
			telemetry.SetTracer(telemetry.Multi(prev, countTracer{&calls}))
			trace := func(ctx context.Context) {
				ctx, run := telemetry.Start(ctx, telemetry.KindRun, "conversation.run")
				_, step := telemetry.Start(ctx, telemetry.KindStep, "agent.step")
				step.End(nil)
				run.End(nil)
			}
			for range 1000 {
				trace(context.Background())
			}
			local := countSpans(mem)
			trace(remote("01"))
			sampledRemote := countSpans(mem) - local
			trace(remote("00"))
			unsampledRemote := countSpans(mem) - local - sampledRemote
			telemetry.SetTracer(prev)
			p.Shutdown(context.Background())
			if local%2 != 0 || local/2 < c.minLocal || local/2 > c.maxLocal {
				t.Errorf("%d spans of 1000 local traces of 2, want %d to %d whole traces", local, c.minLocal, c.maxLocal)
			}
			if (sampledRemote == 2) != c.sampledRemote || (unsampledRemote == 2) != c.unsampledRemote {
				t.Errorf("under a sampled remote parent %d spans, an unsampled one %d; want recorded: %v, %v", sampledRemote, unsampledRemote, c.sampledRemote, c.unsampledRemote)
			}
			if calls != 2*1002 {
				t.Errorf("the metrics tracer ended %d spans, want every one, %d", calls, 2*1002)
			}
		})
	}
	t.Run("allocations", func(t *testing.T) {
		clearOTLPEnv(t)
		t.Setenv("OTEL_TRACES_SAMPLER", "always_off")
		p, err := Setup(context.Background(), &Options{Exporters: []Exporter{&memExporter{}}})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Shutdown(context.Background())
		ctx, run := telemetry.Start(context.Background(), telemetry.KindRun, "conversation.run")
		defer run.End(nil)
		if n := testing.AllocsPerRun(100, func() {
			// (StartOp would allocate its name: the tracer decides.)
			_, step := telemetry.Start(ctx, telemetry.KindStep, "agent.step")
			step.End(nil)
		}); n != 0 || run.Recording() {
			t.Errorf("a span of a trace sampled out: %v allocations (recording %v), want 0", n, run.Recording())
		}
	})
	t.Run("errors", func(t *testing.T) {
		clearOTLPEnv(t)
		for _, c := range [][2]string{{"jaeger_remote", ""}, {"traceidratio", "2"}, {"parentbased_traceidratio", "x"}} {
			t.Setenv("OTEL_TRACES_SAMPLER", c[0])
			t.Setenv("OTEL_TRACES_SAMPLER_ARG", c[1])
			if p, err := Setup(context.Background(), &Options{Exporters: []Exporter{&memExporter{}}}); err == nil || !strings.Contains(err.Error(), "OTEL_TRACES_SAMPLER") {
				p.Shutdown(context.Background())
				t.Errorf("%s %s: %v, want an error naming the variable", c[0], c[1], err)
			}
		}
	})
}

func countSpans(m *memExporter) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, b := range m.batches {
		n += len(b)
	}
	return n
}

// countTracer counts the spans it ends, as the metrics registry does.
type countTracer struct{ n *int }

func (c countTracer) Start(ctx context.Context, _ telemetry.Kind, _ string) (context.Context, telemetry.Recorder) {
	return ctx, c
}
func (c countTracer) SetString(string, string) {}
func (c countTracer) SetInt(string, int64)     {}
func (c countTracer) SetFloat(string, float64) {}
func (c countTracer) End(error)                { *c.n++ }

// TestSpanSize: a span stays within 512 bytes, which the allocator serves
// without a per-object header (bench/tracing's StepSpans/trace: 15 % less
// CPU than at 632 bytes).
func TestSpanSize(t *testing.T) {
	if n := unsafe.Sizeof(span{}); n > 512 {
		t.Fatalf("span is %d bytes, want at most 512", n)
	}
}

// TestBufferReuse: a batch's protobuf buffer is the last one's once the
// transport has closed every request body that read it, and a new one
// while one is still open.
func TestBufferReuse(t *testing.T) {
	clearOTLPEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	e, err := newOTLPExporter()
	if err != nil {
		t.Fatal(err)
	}
	first := e.buffer(100)
	e.buf = append(first, "x"...)
	a, b := e.newBody(e.buf), e.newBody(e.buf)
	a.Close()
	if again := e.buffer(100); &again[:1][0] == &first[:1][0] {
		t.Fatal("reused while a request body is open")
	}
	second := e.buf
	e.newBody(second).Close()
	if again := e.buffer(100); &again[:1][0] != &second[:1][0] {
		t.Fatal("not reused once every request body is closed")
	}
	b.Close()
}
