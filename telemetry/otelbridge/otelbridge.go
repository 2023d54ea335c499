// Package otelbridge records the SDK's telemetry spans with an
// OpenTelemetry tracer: an application that already runs the official
// OpenTelemetry SDK (its own TracerProvider, exporters, samplers and span
// processors) installs
//
//	telemetry.SetTracer(otelbridge.New(tp.Tracer("github.com/gohands/gohands")))
//
// and gohands' spans (runs, steps, model and tool calls, …) join its
// traces: a span of the application's in the context of a
// Conversation.Run is the parent of the run's span.
//
// The package imports OpenTelemetry's API only (go.opentelemetry.io/otel/trace),
// never its SDK or exporters. gohands' own commands export with
// telemetry/oteltrace, which does the same work in a fraction of the CPU
// time per span and 14 MB less binary (bench/tracing, modes trace and sdk).
package otelbridge

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/gohands/gohands/telemetry"
)

// New returns a telemetry.Tracer that starts its spans with t. A span of
// t's in the context is the parent of the next one; with none, a remote
// parent (telemetry.WithRemoteParent) is, with its sampled flag for the
// provider's sampler.
func New(t trace.Tracer) telemetry.Tracer { return tracer{t} }

type tracer struct{ t trace.Tracer }

const numKinds = telemetry.KindConversation + 1

// The kinds' start options and attributes, made once: a span's start then
// allocates no option slice. The kind is an attribute set at End with the
// others, in one call.
var (
	startOpts [numKinds][]trace.SpanStartOption
	kindAttrs [numKinds]attribute.KeyValue
	// attrCaps is how many attributes a span of each kind gets, its
	// kind's included (llm, agent, conversation, server, tools/task set
	// them), when more than a recorder holds.
	attrCaps = [numKinds]int{telemetry.KindModelCall: 16, telemetry.KindConversation: 9}
)

func init() {
	for k := range startOpts {
		sk := trace.SpanKindInternal
		switch telemetry.Kind(k) {
		case telemetry.KindModelCall:
			sk = trace.SpanKindClient
		case telemetry.KindRequest, telemetry.KindConversation:
			sk = trace.SpanKindServer
		}
		startOpts[k] = []trace.SpanStartOption{trace.WithSpanKind(sk)}
		kindAttrs[k] = attribute.String("gohands.span.kind", telemetry.Kind(k).String())
	}
}

func (t tracer) Start(ctx context.Context, kind telemetry.Kind, name string) (context.Context, telemetry.Recorder) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		if p, ok := telemetry.RemoteParent(ctx); ok {
			var flags trace.TraceFlags
			if p.Sampled {
				flags = trace.FlagsSampled
			}
			ctx = trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
				TraceID: p.TraceID, SpanID: p.SpanID, TraceFlags: flags, Remote: true,
			}))
		}
	}
	if kind >= numKinds {
		kind = 0
	}
	ctx, s := t.t.Start(ctx, name, startOpts[kind]...)
	r := &recorder{s: s}
	if n := attrCaps[kind]; n > len(r.buf) {
		r.attrs = make([]attribute.KeyValue, 0, n)
	} else {
		r.attrs = r.buf[:0]
	}
	r.attrs = append(r.attrs, kindAttrs[kind])
	return ctx, r
}

// recorder is one span. Its attributes are kept until End and given to
// the span in one call: the SDK's span takes its lock, allocates the
// argument and grows its slice at each SetAttributes.
type recorder struct {
	s     trace.Span
	mu    sync.Mutex
	attrs []attribute.KeyValue
	buf   [6]attribute.KeyValue
}

func (r *recorder) set(kv attribute.KeyValue) {
	r.mu.Lock()
	r.attrs = append(r.attrs, kv)
	r.mu.Unlock()
}

func (r *recorder) SetString(k, v string) { r.set(attribute.String(k, v)) }

func (r *recorder) SetInt(k string, v int64) { r.set(attribute.Int64(k, v)) }

func (r *recorder) SetFloat(k string, v float64) { r.set(attribute.Float64(k, v)) }

func (r *recorder) End(err error) {
	r.mu.Lock()
	attrs := r.attrs
	r.attrs = nil
	r.mu.Unlock()
	// A key set twice keeps its last value: OpenTelemetry's spans keep
	// the last of a key.
	r.s.SetAttributes(attrs...)
	if err != nil {
		// The message only: an error event would add a stack-less copy
		// of the same text.
		r.s.SetStatus(codes.Error, err.Error())
	}
	r.s.End()
}
