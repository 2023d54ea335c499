// Package oteltrace records the SDK's telemetry spans as OpenTelemetry
// traces: exported over OTLP (gRPC, HTTP with protobuf or JSON) as the
// standard OTEL_* environment variables say, and/or written to a local
// OTLP JSON file.
//
// It is written on the standard library alone: the spans, their batching
// and the OTLP encodings (protobuf and JSON) are small, and the official
// OpenTelemetry SDK with its OTLP exporters costs several times the CPU
// time and the allocations per span (its spans deduplicate their
// attributes through a map and copy themselves when they end; its
// exporter builds protobuf structs, three allocations per attribute,
// before marshalling them) and 14 MB of binary: bench/tracing's modes
// trace and sdk compare the two. An application that runs the SDK itself
// records gohands' spans there with telemetry/otelbridge instead.
//
// Setup installs the tracer for the process; with no OTLP variable set and
// no file asked for it installs nothing, and gohands' spans cost one atomic
// load each.
//
// The variables read: OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER (otlp or
// none), OTEL_EXPORTER_OTLP_[TRACES_]{ENDPOINT, PROTOCOL (grpc,
// http/protobuf, http/json), HEADERS, TIMEOUT, COMPRESSION (gzip),
// INSECURE, CERTIFICATE, CLIENT_CERTIFICATE, CLIENT_KEY}, OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES, OTEL_BSP_{SCHEDULE_DELAY, MAX_QUEUE_SIZE,
// MAX_EXPORT_BATCH_SIZE, EXPORT_TIMEOUT} and OTEL_TRACES_SAMPLER[_ARG]
// (sampler.go). A span of a trace sampled out costs its tracer nothing but
// the trace's first, which marks the context.
package oteltrace

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gohands/gohands/telemetry"
)

// Options says where spans go besides what the environment says. A nil
// *Options is the environment alone.
type Options struct {
	// File, when set, receives every span as OTLP JSON, one
	// ExportTraceServiceRequest per line.
	File string
	// ServiceName is the resource's service.name when OTEL_SERVICE_NAME
	// is unset; "gohands" when empty.
	ServiceName string
	// Exporters are more exporters (tests use in-memory ones).
	Exporters []Exporter
	// Sync exports each span as it ends instead of in batches (the file
	// and tests).
	Sync bool
	// Logger receives export failures; nil means slog.Default().
	Logger *slog.Logger
}

// An Exporter sends ended spans somewhere. Export is not called
// concurrently.
type Exporter interface {
	Export(ctx context.Context, r *Resource, spans []*SpanData) error
	Shutdown(ctx context.Context) error
}

// Resource is what produced the spans: the service and its attributes.
type Resource struct {
	Attrs []Attr
	// Scope names the instrumentation (gohands' module path).
	Scope string
}

// SpanKind is OTLP's Span.SpanKind.
type SpanKind uint8

// The span kinds gohands uses.
const (
	SpanKindInternal SpanKind = 1
	SpanKindServer   SpanKind = 2
	SpanKindClient   SpanKind = 3
)

// SpanData is one ended span.
type SpanData struct {
	TraceID      [16]byte
	SpanID       [8]byte
	ParentSpanID [8]byte // zero for a root
	RemoteParent bool    // the parent is another process's
	Kind         SpanKind
	Failed       bool
	Name         string
	Start, End   time.Time
	Attrs        []Attr
	Message      string // the error of a failed span
}

// AttrType is the type of an Attr's value.
type AttrType uint8

// The attribute value types the telemetry hook carries.
const (
	AttrString AttrType = iota
	AttrInt
	AttrFloat
)

// Attr is one attribute.
type Attr struct {
	Key  string
	Type AttrType
	Str  string
	Int  int64
	Flt  float64
}

// Configured reports whether the environment asks for OTLP export:
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set,
// or OTEL_TRACES_EXPORTER is "otlp"; OTEL_SDK_DISABLED=true or
// OTEL_TRACES_EXPORTER=none turns it off.
func Configured() bool {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	switch strings.ToLower(os.Getenv("OTEL_TRACES_EXPORTER")) {
	case "none":
		return false
	case "otlp":
		return true
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// CredentialVars returns the variables that may hold a tracing backend's
// credentials (the exporter's headers). Setup reads them once; a program
// whose children must not see them unsets them after Setup.
func CredentialVars() []string {
	return []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"}
}

// Provider is an installed trace pipeline.
type Provider struct {
	res     *Resource
	procs   []processor
	prev    telemetry.Tracer
	file    *os.File
	sampler sampler
}

// Setup builds the exporters the environment and opts ask for and
// installs them as the process's telemetry tracer. With nothing asked for
// it returns nil, nil. Shutdown flushes and removes it.
func Setup(ctx context.Context, opts *Options) (*Provider, error) {
	if opts == nil {
		opts = &Options{}
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	smp, err := samplerFromEnv()
	if err != nil {
		return nil, err
	}
	p := &Provider{res: resourceFromEnv(opts.ServiceName), sampler: smp}
	add := func(e Exporter, sync bool) {
		if sync {
			p.procs = append(p.procs, &syncProcessor{e: e, res: p.res, log: log})
		} else {
			p.procs = append(p.procs, newBatcher(e, p.res, log))
		}
	}
	if Configured() {
		e, err := newOTLPExporter()
		if err != nil {
			return nil, err
		}
		add(e, opts.Sync)
	}
	if opts.File != "" {
		f, err := os.OpenFile(opts.File, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			p.shutdownProcs(ctx)
			return nil, fmt.Errorf("oteltrace: trace file: %w", err)
		}
		p.file = f
		// Each span is written as it ends: a killed run keeps its spans.
		add(NewJSONExporter(f), true)
	}
	for _, e := range opts.Exporters {
		add(e, opts.Sync)
	}
	if len(p.procs) == 0 {
		return nil, nil
	}
	p.prev = telemetry.SetTracer(&tracer{p: p})
	return p, nil
}

// Shutdown exports what is left, closes the exporters and restores the
// tracer installed before Setup. A nil *Provider does nothing.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p == nil {
		return nil
	}
	telemetry.SetTracer(p.prev)
	err := p.shutdownProcs(ctx)
	if p.file != nil {
		err = errors.Join(err, p.file.Close())
	}
	return err
}

func (p *Provider) shutdownProcs(ctx context.Context) error {
	var errs []error
	for _, pr := range p.procs {
		errs = append(errs, pr.shutdown(ctx))
	}
	return errors.Join(errs...)
}

// tracer starts spans; each ends into every processor.
type tracer struct{ p *Provider }

var kinds = [...]SpanKind{
	telemetry.KindModelCall:    SpanKindClient,
	telemetry.KindRequest:      SpanKindServer,
	telemetry.KindConversation: SpanKindServer,
}

type spanKey struct{}

// sampledOut is the parent in the context of a trace's spans when the
// trace is not recorded.
var sampledOut = new(span)

func (t *tracer) Start(ctx context.Context, kind telemetry.Kind, name string) (context.Context, telemetry.Recorder) {
	// The parent and the sampling decision first: a span sampled out
	// allocates nothing.
	var tid [16]byte
	var pid [8]byte
	remote := false
	if parent, ok := ctx.Value(spanKey{}).(*span); ok {
		if parent == sampledOut {
			return ctx, nil
		}
		// A span's ids are set when it starts and never change:
		// children read them without its lock.
		tid, pid = parent.d.TraceID, parent.d.SpanID
	} else {
		var rp telemetry.SpanContext
		if rp, remote = telemetry.RemoteParent(ctx); remote {
			tid, pid = rp.TraceID, rp.SpanID
		} else {
			putUint64(tid[:8], rand.Uint64())
			putUint64(tid[8:], rand.Uint64()|1) // never all zero
		}
		if !t.p.sampler.sample(&tid, rp, remote) {
			return context.WithValue(ctx, spanKey{}, sampledOut), nil
		}
	}
	s := &span{t: t}
	d := &s.d
	d.Name, d.Start, d.Kind = name, time.Now(), SpanKindInternal
	if int(kind) < len(kinds) && kinds[kind] != 0 {
		d.Kind = kinds[kind]
	}
	d.TraceID, d.ParentSpanID, d.RemoteParent = tid, pid, remote
	putUint64(d.SpanID[:], rand.Uint64()|1)
	// The attributes start in the span's own array: one allocation per
	// span but for a model call's, whose attributes are allocated once.
	if kind == telemetry.KindModelCall {
		d.Attrs = make([]Attr, 0, modelCallAttrs)
	} else {
		d.Attrs = s.attrs[:0]
	}
	d.Attrs = append(d.Attrs, Attr{Key: "gohands.span.kind", Str: kind.String()})
	return context.WithValue(ctx, spanKey{}, s), s
}

func putUint64(b []byte, v uint64) {
	for i := range 8 {
		b[i] = byte(v >> (56 - 8*i))
	}
}

// modelCallAttrs is how many attributes llm sets on a model call's span,
// and its kind.
const modelCallAttrs = 16

// span is a started span.
type span struct {
	t     *tracer
	mu    sync.Mutex
	d     SpanData
	ended bool
	// Room for the attributes of every kind of span but a model call's
	// and a server's conversation: 6 keeps a span within 512 bytes, the
	// largest size the allocator serves without a per-object header.
	attrs [6]Attr
}

// set sets a, replacing an attribute of the same key, as OpenTelemetry
// does.
func (s *span) set(a Attr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	for i := range s.d.Attrs {
		if s.d.Attrs[i].Key == a.Key {
			s.d.Attrs[i] = a
			return
		}
	}
	s.d.Attrs = append(s.d.Attrs, a)
}

func (s *span) SetString(k, v string) { s.set(Attr{Key: k, Type: AttrString, Str: v}) }

func (s *span) SetInt(k string, v int64) { s.set(Attr{Key: k, Type: AttrInt, Int: v}) }

func (s *span) SetFloat(k string, v float64) { s.set(Attr{Key: k, Type: AttrFloat, Flt: v}) }

func (s *span) End(err error) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	s.d.End = time.Now()
	if err != nil {
		// The message only: an error event would add a stack-less copy
		// of the same text.
		s.d.Failed, s.d.Message = true, err.Error()
	}
	s.mu.Unlock()
	for _, p := range s.t.p.procs {
		p.onEnd(&s.d)
	}
}
