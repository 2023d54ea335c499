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
