package server

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gohands/gohands/telemetry"
)

// observability is what a start request says of the conversation's trace:
// the reference's observability_* fields, or its X-OpenHands-Observability-*
// headers for those the body leaves out.
type observability struct {
	metadata json.RawMessage // a JSON object, {} when none
	tags     []string
	spanName string
	parent   *string // a serialized span context (a traceparent or Laminar's JSON)
}

var spanNamePattern = regexp.MustCompile(`^[A-Za-z0-9._:/-]+$`)

// observabilityOf validates the start request's observability fields,
// as the reference does, and completes them from the headers.
func observabilityOf(req *startRequest, h http.Header) (*observability, error) {
	o := &observability{spanName: "conversation", parent: req.ObservabilityParentSpanContext}
	name := req.ObservabilitySpanName
	if name == nil {
		if v := h.Get("X-OpenHands-Observability-Span-Name"); v != "" {
			name = &v
		}
	}
	if name != nil {
		if *name == "" || len(*name) > 128 || !spanNamePattern.MatchString(*name) {
			return nil, invalid("Observability span name must be 1 to 128 letters, numbers, dots, underscores, colons, slashes and hyphens", "body", "observability_span_name")
		}
		o.spanName = *name
	}
	switch {
	case len(req.ObservabilityTags) > 0 && !isNull(req.ObservabilityTags):
		if err := json.Unmarshal(req.ObservabilityTags, &o.tags); err != nil {
			return nil, invalid("Observability tags must be a list of strings", "body", "observability_tags")
		}
		if slices.Contains(o.tags, "") {
			return nil, invalid("Observability tags must be non-empty strings", "body", "observability_tags")
		}
	case req.ObservabilityTags == nil:
		for t := range strings.SplitSeq(h.Get("X-OpenHands-Observability-Tags"), ",") {
			if t = strings.TrimSpace(t); t != "" {
				o.tags = append(o.tags, t)
			}
		}
	}
	meta := map[string]any{}
	if v := h.Get("X-OpenHands-Observability-Metadata"); v != "" {
		if err := decodeNumbers([]byte(v), &meta); err != nil {
			return nil, statusErr(http.StatusUnprocessableEntity, "X-OpenHands-Observability-Metadata must be a JSON object")
		}
	}
	if len(req.ObservabilityMetadata) > 0 && !isNull(req.ObservabilityMetadata) {
		var body map[string]any
		if err := decodeNumbers(req.ObservabilityMetadata, &body); err != nil {
			return nil, invalid("Observability metadata must be an object", "body", "observability_metadata")
		}
		maps.Copy(meta, body) // the body's keys win over the header's
	}
	for k, v := range meta {
		if k == "" || !traceValue(v) {
			return nil, invalid(fmt.Sprintf("Observability metadata value for %q must be a scalar or a list of strings, booleans, integers or floats (one kind)", k), "body", "observability_metadata")
		}
	}
	o.metadata, _ = json.Marshal(meta)
	if o.parent == nil || *o.parent == "" {
		if v := h.Get("X-OpenHands-Observability-Parent-Span-Context"); v != "" {
			o.parent = &v
		} else {
			o.parent = nil
		}
	}
	return o, nil
}

func decodeNumbers(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	return d.Decode(v)
}

// traceValue reports whether v is an OpenTelemetry attribute value: a
// scalar, or a list of one kind of scalar (integers and floats apart).
func traceValue(v any) bool {
	kind := func(x any) string {
		switch x := x.(type) {
		case string:
			return "string"
		case bool:
			return "bool"
		case json.Number:
			if strings.ContainsAny(x.String(), ".eE") {
				return "float"
			}
			return "int"
		}
		return ""
	}
	list, ok := v.([]any)
	if !ok {
		return kind(v) != ""
	}
	for _, x := range list {
		if kind(x) == "" || kind(x) != kind(list[0]) {
			return false
		}
	}
	return true
}

// traceRun starts the span of one run of the conversation, named by its
// observability_span_name ("conversation" by default) and a child of its
// observability_parent_span_context if it has one, so that the caller's
// trace continues into the agent: the run, its steps, model and tool
// calls are its descendants. The reference keeps one such span for the
// conversation's life; a run is what gohands can end and export.
func (c *conv) traceRun() (context.Context, func(error)) {
	ctx := context.Background()
	if !telemetry.Enabled() {
		return ctx, func(error) {}
	}
	c.mu.Lock()
	m := c.meta
	c.mu.Unlock()
	if p := m.ObservabilityParentSpanContext; p != nil && *p != "" {
		if sc, err := telemetry.ParseSpanContext(*p); err == nil {
			ctx = telemetry.WithRemoteParent(ctx, sc)
		} else {
			c.s.log.Warn("observability_parent_span_context not understood; the run starts a trace of its own", "conversation", c.id, "err", err)
		}
	}
	ctx, span := telemetry.Start(ctx, telemetry.KindConversation, cmp.Or(m.ObservabilitySpanName, "conversation"))
	if span.Recording() {
		span.SetString(telemetry.AttrConversationID, c.id)
		var tags []string
		if json.Unmarshal(m.ObservabilityTags, &tags) == nil && len(tags) > 0 {
			span.SetString(telemetry.AttrTags, strings.Join(tags, ","))
		}
		var meta map[string]any
		if decodeNumbers(m.ObservabilityMetadata, &meta) == nil {
			for k, v := range meta {
				setTraceValue(span, k, v)
			}
		}
	}
	return ctx, func(err error) {
		c.mu.Lock()
		lc := c.lc
		c.mu.Unlock()
		if lc != nil {
			span.SetString(telemetry.AttrStatus, string(lc.Status()))
		}
		span.End(err)
	}
}

func setTraceValue(span telemetry.Span, k string, v any) {
	switch v := v.(type) {
	case string:
		span.SetString(k, v)
	case bool:
		span.SetString(k, strconv.FormatBool(v))
	case json.Number:
		if i, err := v.Int64(); err == nil {
			span.SetInt(k, i)
		} else if f, err := v.Float64(); err == nil {
			span.SetFloat(k, f)
		}
	case []any:
		// The hook carries scalars: a list is sent as its JSON.
		b, _ := json.Marshal(v)
		span.SetString(k, string(b))
	}
}
