// Package oteltrace records the SDK's telemetry spans as OpenTelemetry
// traces: exported over OTLP (HTTP or gRPC) as the standard OTEL_*
// environment variables say, and/or written to a local OTLP JSON file.
//
// Setup installs the tracer for the process; with no OTLP variable set and
// no file asked for it installs nothing, and the SDK's spans cost one
// atomic load each.
package oteltrace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

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
	Exporters []sdktrace.SpanExporter
	// Sync exports each span as it ends instead of in batches (the file
	// and tests).
	Sync bool
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

// Provider is an installed trace pipeline.
type Provider struct {
	tp   *sdktrace.TracerProvider
	prev telemetry.Tracer
	file *os.File
}

// Setup builds the exporters the environment and opts ask for and
// installs them as the process's telemetry tracer and OpenTelemetry's
// global provider and propagator (W3C trace context and baggage). With
// nothing asked for it returns nil, nil. Shutdown flushes and removes it.
func Setup(ctx context.Context, opts *Options) (*Provider, error) {
	if opts == nil {
		opts = &Options{}
	}
	type exporter struct {
		e    sdktrace.SpanExporter
		sync bool
	}
	var exps []exporter
	if Configured() {
		e, err := otlpExporter(ctx)
		if err != nil {
			return nil, err
		}
		exps = append(exps, exporter{e, opts.Sync})
	}
	p := &Provider{}
	if opts.File != "" {
		f, err := os.OpenFile(opts.File, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return nil, fmt.Errorf("oteltrace: trace file: %w", err)
		}
		p.file = f
		// Each span is written as it ends: a killed run keeps its spans.
		exps = append(exps, exporter{NewJSONExporter(f), true})
	}
	for _, e := range opts.Exporters {
		exps = append(exps, exporter{e, opts.Sync})
	}
	if len(exps) == 0 {
		return nil, nil
	}
	name := opts.ServiceName
	if name == "" {
		name = "gohands"
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", name)))
	if err != nil {
		return nil, err
	}
	if env, err := resource.New(ctx, resource.WithFromEnv()); err == nil {
		if r, err := resource.Merge(res, env); err == nil {
			res = r
		}
	}
	popts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	for _, e := range exps {
		if e.sync {
			popts = append(popts, sdktrace.WithSyncer(e.e))
		} else {
			popts = append(popts, sdktrace.WithBatcher(e.e))
		}
	}
	p.tp = sdktrace.NewTracerProvider(popts...)
	otel.SetTracerProvider(p.tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	p.prev = telemetry.SetTracer(New(p.tp.Tracer("github.com/gohands/gohands")))
	return p, nil
}

// otlpExporter returns the OTLP exporter of the protocol the environment
// names (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL;
// http/protobuf by default, as the specification says). The exporters read
// endpoint, headers, timeout and TLS settings from the environment
// themselves.
func otlpExporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	proto := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch proto {
	case "", "http/protobuf":
		return otlptracehttp.New(ctx)
	case "grpc":
		return otlptracegrpc.New(ctx)
	}
	return nil, fmt.Errorf("oteltrace: OTLP protocol %q not supported (grpc or http/protobuf)", proto)
}

// TracerProvider returns the provider's OpenTelemetry provider.
func (p *Provider) TracerProvider() trace.TracerProvider { return p.tp }

// Shutdown exports what is left, closes the exporters and restores the
// tracer installed before Setup. A nil *Provider does nothing.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p == nil {
		return nil
	}
	telemetry.SetTracer(p.prev)
	err := p.tp.Shutdown(ctx)
	if p.file != nil {
		err = errors.Join(err, p.file.Close())
	}
	return err
}

// New returns a telemetry.Tracer that starts OpenTelemetry spans with t.
func New(t trace.Tracer) telemetry.Tracer { return tracer{t} }

type tracer struct{ t trace.Tracer }

var kinds = [...]trace.SpanKind{
	telemetry.KindModelCall:    trace.SpanKindClient,
	telemetry.KindRequest:      trace.SpanKindServer,
	telemetry.KindSubAgent:     trace.SpanKindInternal,
	telemetry.KindConversation: trace.SpanKindServer,
}

func (t tracer) Start(ctx context.Context, kind telemetry.Kind, name string) (context.Context, telemetry.Recorder) {
	sk := trace.SpanKindInternal
	if int(kind) < len(kinds) && kinds[kind] != trace.SpanKindUnspecified {
		sk = kinds[kind]
	}
	if !trace.SpanContextFromContext(ctx).IsValid() {
		if p, ok := telemetry.RemoteParent(ctx); ok {
			ctx = trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
				TraceID: p.TraceID, SpanID: p.SpanID, TraceFlags: trace.FlagsSampled, Remote: true,
			}))
		}
	}
	ctx, s := t.t.Start(ctx, name, trace.WithSpanKind(sk), trace.WithAttributes(attribute.String("gohands.span.kind", kind.String())))
	return ctx, recorder{s}
}

type recorder struct{ s trace.Span }

func (r recorder) SetString(k, v string) { r.s.SetAttributes(attribute.String(k, v)) }

func (r recorder) SetInt(k string, v int64) { r.s.SetAttributes(attribute.Int64(k, v)) }

func (r recorder) SetFloat(k string, v float64) { r.s.SetAttributes(attribute.Float64(k, v)) }

func (r recorder) End(err error) {
	if err != nil {
		// The message only: an error event would add a stack-less copy
		// of the same text.
		r.s.SetStatus(codes.Error, err.Error())
	}
	r.s.End()
}
