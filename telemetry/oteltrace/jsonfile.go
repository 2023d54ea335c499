package oteltrace

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"strconv"
	"sync"
)

// NewJSONExporter returns an exporter that writes each batch of spans to
// w as one line of OTLP JSON (an ExportTraceServiceRequest, as the
// Collector's file exporter writes them): ids in hex, 64-bit integers and
// times as strings, enums as numbers.
func NewJSONExporter(w io.Writer) Exporter { return &jsonExporter{w: w} }

type jsonExporter struct {
	mu sync.Mutex
	w  io.Writer
}

func (e *jsonExporter) Export(_ context.Context, r *Resource, spans []*SpanData) error {
	b, err := marshalJSON(r, spans)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	_, err = e.w.Write(append(b, '\n'))
	return err
}

func (e *jsonExporter) Shutdown(context.Context) error { return nil }

// The OTLP JSON mapping of ExportTraceServiceRequest, for what gohands
// sends.
type (
	jsonRequest struct {
		ResourceSpans []jsonResourceSpans `json:"resourceSpans"`
	}
	jsonResourceSpans struct {
		Resource   jsonResource     `json:"resource"`
		ScopeSpans []jsonScopeSpans `json:"scopeSpans"`
	}
	jsonResource struct {
		Attributes []jsonKeyValue `json:"attributes"`
	}
	jsonScopeSpans struct {
		Scope jsonScope  `json:"scope"`
		Spans []jsonSpan `json:"spans"`
	}
	jsonScope struct {
		Name string `json:"name"`
	}
	jsonSpan struct {
		TraceID           string         `json:"traceId"`
		SpanID            string         `json:"spanId"`
		ParentSpanID      string         `json:"parentSpanId,omitempty"`
		Flags             uint32         `json:"flags"`
		Name              string         `json:"name"`
		Kind              int            `json:"kind"`
		StartTimeUnixNano string         `json:"startTimeUnixNano"`
		EndTimeUnixNano   string         `json:"endTimeUnixNano"`
		Attributes        []jsonKeyValue `json:"attributes,omitempty"`
		Status            jsonStatus     `json:"status"`
	}
	// jsonStatus: code 0 unset, 1 ok, 2 error.
	jsonStatus struct {
		Code    int    `json:"code,omitempty"`
		Message string `json:"message,omitempty"`
	}
	jsonKeyValue struct {
		Key   string       `json:"key"`
		Value jsonAnyValue `json:"value"`
	}
	jsonAnyValue struct {
		StringValue *string  `json:"stringValue,omitempty"`
		IntValue    *string  `json:"intValue,omitempty"`
		DoubleValue *float64 `json:"doubleValue,omitempty"`
	}
)

func marshalJSON(r *Resource, spans []*SpanData) ([]byte, error) {
	ss := jsonScopeSpans{Scope: jsonScope{Name: r.Scope}, Spans: make([]jsonSpan, 0, len(spans))}
	for _, d := range spans {
		s := jsonSpan{
			TraceID:           hex.EncodeToString(d.TraceID[:]),
			SpanID:            hex.EncodeToString(d.SpanID[:]),
			Flags:             spanFlags(d),
			Name:              d.Name,
			Kind:              int(d.Kind),
			StartTimeUnixNano: strconv.FormatInt(d.Start.UnixNano(), 10),
			EndTimeUnixNano:   strconv.FormatInt(d.End.UnixNano(), 10),
			Attributes:        jsonAttrs(d.Attrs),
		}
		if d.ParentSpanID != ([8]byte{}) {
			s.ParentSpanID = hex.EncodeToString(d.ParentSpanID[:])
		}
		if d.Failed {
			s.Status = jsonStatus{Code: 2, Message: d.Message}
		}
		ss.Spans = append(ss.Spans, s)
	}
	return json.Marshal(jsonRequest{ResourceSpans: []jsonResourceSpans{{
		Resource:   jsonResource{Attributes: jsonAttrs(r.Attrs)},
		ScopeSpans: []jsonScopeSpans{ss},
	}}})
}

func jsonAttrs(attrs []Attr) []jsonKeyValue {
	out := make([]jsonKeyValue, 0, len(attrs))
	for _, a := range attrs {
		var v jsonAnyValue
		switch a.Type {
		case AttrInt:
			i := strconv.FormatInt(a.Int, 10)
			v.IntValue = &i
		case AttrFloat:
			f := a.Flt
			v.DoubleValue = &f
		default:
			s := a.Str
			v.StringValue = &s
		}
		out = append(out, jsonKeyValue{Key: a.Key, Value: v})
	}
	return out
}
