package oteltrace

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"strconv"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// NewJSONExporter returns an exporter that writes each batch of spans to
// w as one line of OTLP JSON (an ExportTraceServiceRequest, as the
// Collector's file exporter writes them): ids in hex, 64-bit integers and
// times as strings, enums as numbers.
func NewJSONExporter(w io.Writer) sdktrace.SpanExporter { return &jsonExporter{w: w} }

type jsonExporter struct {
	mu sync.Mutex
	w  io.Writer
}

func (e *jsonExporter) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	b, err := json.Marshal(Request(spans))
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	_, err = e.w.Write(append(b, '\n'))
	return err
}

func (e *jsonExporter) Shutdown(context.Context) error { return nil }

// ExportRequest is OTLP's ExportTraceServiceRequest in its JSON mapping.
type ExportRequest struct {
	ResourceSpans []ResourceSpans `json:"resourceSpans"`
}

// ResourceSpans are the spans of one resource.
type ResourceSpans struct {
	Resource   Resource     `json:"resource"`
	ScopeSpans []ScopeSpans `json:"scopeSpans"`
}

// Resource is the entity that produced the spans.
type Resource struct {
	Attributes []KeyValue `json:"attributes"`
}

// ScopeSpans are the spans of one instrumentation scope.
type ScopeSpans struct {
	Scope Scope  `json:"scope"`
	Spans []Span `json:"spans"`
}

// Scope names the instrumentation.
type Scope struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// Span is one span.
type Span struct {
	TraceID           string     `json:"traceId"`
	SpanID            string     `json:"spanId"`
	ParentSpanID      string     `json:"parentSpanId,omitempty"`
	Name              string     `json:"name"`
	Kind              int        `json:"kind"`
	StartTimeUnixNano string     `json:"startTimeUnixNano"`
	EndTimeUnixNano   string     `json:"endTimeUnixNano"`
	Attributes        []KeyValue `json:"attributes,omitempty"`
	Status            Status     `json:"status"`
}

// Status is a span's outcome: code 0 unset, 1 ok, 2 error.
type Status struct {
	Code    int    `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// KeyValue is one attribute.
type KeyValue struct {
	Key   string   `json:"key"`
	Value AnyValue `json:"value"`
}

// AnyValue holds one of the value kinds.
type AnyValue struct {
	StringValue *string  `json:"stringValue,omitempty"`
	BoolValue   *bool    `json:"boolValue,omitempty"`
	IntValue    *string  `json:"intValue,omitempty"`
	DoubleValue *float64 `json:"doubleValue,omitempty"`
}

// Request converts spans to an export request, grouped by resource and
// scope in the order they first appear.
func Request(spans []sdktrace.ReadOnlySpan) ExportRequest {
	var req ExportRequest
	type key struct {
		res   string
		scope string
	}
	rIdx := map[string]int{}
	sIdx := map[key]int{}
	for _, s := range spans {
		rk := s.Resource().Encoded(attribute.DefaultEncoder())
		ri, ok := rIdx[rk]
		if !ok {
			ri = len(req.ResourceSpans)
			rIdx[rk] = ri
			req.ResourceSpans = append(req.ResourceSpans, ResourceSpans{Resource: Resource{Attributes: keyValues(s.Resource().Attributes())}})
		}
		sc := s.InstrumentationScope()
		sk := key{rk, sc.Name + "\x00" + sc.Version}
		si, ok := sIdx[sk]
		if !ok {
			si = len(req.ResourceSpans[ri].ScopeSpans)
			sIdx[sk] = si
			req.ResourceSpans[ri].ScopeSpans = append(req.ResourceSpans[ri].ScopeSpans, ScopeSpans{Scope: Scope{Name: sc.Name, Version: sc.Version}})
		}
		ss := &req.ResourceSpans[ri].ScopeSpans[si]
		ss.Spans = append(ss.Spans, span(s))
	}
	return req
}

func span(s sdktrace.ReadOnlySpan) Span {
	sc := s.SpanContext()
	out := Span{
		TraceID:           hexID(sc.TraceID()),
		SpanID:            hexSpanID(sc.SpanID()),
		Name:              s.Name(),
		Kind:              int(s.SpanKind()),
		StartTimeUnixNano: strconv.FormatInt(s.StartTime().UnixNano(), 10),
		EndTimeUnixNano:   strconv.FormatInt(s.EndTime().UnixNano(), 10),
		Attributes:        keyValues(s.Attributes()),
	}
	if p := s.Parent(); p.SpanID().IsValid() {
		out.ParentSpanID = hexSpanID(p.SpanID())
	}
	switch st := s.Status(); st.Code {
	case codes.Ok:
		out.Status = Status{Code: 1}
	case codes.Error:
		out.Status = Status{Code: 2, Message: st.Description}
	}
	return out
}

func hexID(id trace.TraceID) string    { return hex.EncodeToString(id[:]) }
func hexSpanID(id trace.SpanID) string { return hex.EncodeToString(id[:]) }

func keyValues(kvs []attribute.KeyValue) []KeyValue {
	out := make([]KeyValue, 0, len(kvs))
	for _, kv := range kvs {
		var v AnyValue
		switch kv.Value.Type() {
		case attribute.BOOL:
			b := kv.Value.AsBool()
			v.BoolValue = &b
		case attribute.INT64:
			i := strconv.FormatInt(kv.Value.AsInt64(), 10)
			v.IntValue = &i
		case attribute.FLOAT64:
			f := kv.Value.AsFloat64()
			v.DoubleValue = &f
		default:
			s := kv.Value.String()
			v.StringValue = &s
		}
		out = append(out, KeyValue{Key: string(kv.Key), Value: v})
	}
	return out
}
