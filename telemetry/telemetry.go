// Package telemetry is the SDK's instrumentation hook: the agent loop, the
// model layer and the server open spans through it (a run, a step, a model
// call, a tool call, a condensation, a sub-agent, a server request), and an
// application installs what records them: OpenTelemetry traces
// (telemetry/oteltrace), Prometheus metrics (telemetry/prom), or both (Multi).
//
// The package imports nothing beyond the standard library, so the core
// carries no tracing dependency. With no tracer installed, Start is one
// atomic load and allocates nothing.
package telemetry

import (
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// Kind says what a span measures. Recorders branch on it (a metrics
// recorder counts tool calls by tool, say) instead of on span names.
type Kind uint8

// The kinds of spans the SDK opens.
const (
	KindRun          Kind = iota + 1 // one Conversation.Run
	KindStep                         // one agent step
	KindModelCall                    // one LLM completion, retries included
	KindToolCall                     // one tool execution
	KindCondensation                 // one condenser call
	KindSubAgent                     // a sub-agent's conversation, child of the tool call that started it
	KindRequest                      // one server request
	KindConversation                 // a server's run of a conversation, named by its start request
)

var kindNames = [...]string{"", "run", "step", "model_call", "tool_call", "condensation", "sub_agent", "request", "conversation"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Attribute names. Those of model and tool calls are the OpenTelemetry
// GenAI semantic conventions'; the rest are gohands' own.
const (
	AttrOperation      = "gen_ai.operation.name"
	AttrSystem         = "gen_ai.provider.name"
	AttrConversationID = "gen_ai.conversation.id"
	AttrAgentName      = "gen_ai.agent.name"
	AttrRequestModel   = "gen_ai.request.model"
	AttrResponseModel  = "gen_ai.response.model"
	AttrResponseID     = "gen_ai.response.id"
	AttrInputTokens    = "gen_ai.usage.input_tokens"
	AttrOutputTokens   = "gen_ai.usage.output_tokens"
	AttrCacheRead      = "gen_ai.usage.cache_read.input_tokens"
	AttrCacheWrite     = "gen_ai.usage.cache_creation.input_tokens"
	AttrReasoning      = "gen_ai.usage.reasoning_tokens"
	AttrCost           = "gen_ai.usage.cost"                 // USD, as the provider or the price table says
	AttrTimeToFirst    = "gen_ai.server.time_to_first_token" // seconds
	AttrRetries        = "gohands.llm.retries"               // attempts beyond the first
	AttrToolName       = "gen_ai.tool.name"
	AttrToolCallID     = "gen_ai.tool.call.id"
	AttrToolError      = "gohands.tool.error" // "true" when the tool failed
	AttrExitCode       = "process.exit.code"
	AttrStatus         = "gohands.conversation.status"
	AttrStep           = "gohands.step"
	AttrCondensed      = "gohands.condensation.applied"
	AttrTags           = "gohands.observability.tags" // the start request's observability_tags, comma-separated
	AttrHTTPMethod     = "http.request.method"
	AttrHTTPRoute      = "http.route"
	AttrHTTPStatus     = "http.response.status_code"
)

// An ExitCoder is an observation that knows the exit code of the process
// it ran (a terminal command's); a tool call's span records it.
type ExitCoder interface {
	ProcessExitCode() (code int, ok bool)
}

// A Tracer starts spans. Start returns a context that carries the new span
// as the parent of spans started from it. A nil Recorder is a span the
// tracer does not record (a trace sampled out); the context it returns
// says so to the span's children.
type Tracer interface {
	Start(ctx context.Context, kind Kind, name string) (context.Context, Recorder)
}

// A Recorder is one started span. Attribute values are never arguments or
// outputs of tools, nor any secret: callers pass counts, names and codes.
type Recorder interface {
	SetString(key, value string)
	SetInt(key string, value int64)
	SetFloat(key string, value float64)
	// End ends the span; a non-nil err marks it failed.
	End(err error)
}

// A Measure is a duration the SDK measures too often, and too briefly,
// for a span each: an Observer records it.
type Measure uint8

// The measures the SDK takes.
const (
	// MeasureStoreAppend is one event appended to a conversation's store
	// (Log.Append's store I/O); the label is the store's kind ("file",
	// "memory", "postgres").
	MeasureStoreAppend Measure = iota + 1
)

// An Observer records measures. An installed Tracer that is also an
// Observer (prom.Registry) is given them; a trace exporter need not be one.
type Observer interface {
	// Observe records one measure of duration d. The label is a bounded
	// name (a store's kind), never an id.
	Observe(m Measure, label string, d time.Duration)
}

type box struct {
	t Tracer
	o Observer // t, if it observes; else nil
}

var global atomic.Pointer[box]

// SetTracer installs t for the whole process (nil turns tracing off) and
// returns the tracer it replaces.
func SetTracer(t Tracer) (previous Tracer) {
	var b *box
	if t != nil {
		b = &box{t: t}
		b.o, _ = t.(Observer)
	}
	if old := global.Swap(b); old != nil {
		return old.t
	}
	return nil
}

// Enabled reports whether a tracer is installed.
func Enabled() bool { return global.Load() != nil }

// Observing returns the installed tracer as an Observer, or nil when no
// tracer is installed or it records no measures. Callers read the clock
// only when it is not nil, so a measure costs nothing when off:
//
//	if o := telemetry.Observing(); o != nil {
//		start := time.Now()
//		…
//		o.Observe(telemetry.MeasureStoreAppend, kind, time.Since(start))
//	}
func Observing() Observer {
	if b := global.Load(); b != nil {
		return b.o
	}
	return nil
}

// Start starts a span with the installed tracer. With none it returns ctx
// and a Span whose methods do nothing.
func Start(ctx context.Context, kind Kind, name string) (context.Context, Span) {
	b := global.Load()
	if b == nil {
		return ctx, Span{}
	}
	ctx, r := b.t.Start(ctx, kind, name)
	return ctx, Span{r}
}

// StartOp is Start for a span named "op target", as OpenTelemetry names
// GenAI spans ("chat gpt-4o", "execute_tool terminal"). The name is built
// only when a tracer is installed: with none, StartOp allocates nothing.
func StartOp(ctx context.Context, kind Kind, op, target string) (context.Context, Span) {
	b := global.Load()
	if b == nil {
		return ctx, Span{}
	}
	ctx, r := b.t.Start(ctx, kind, op+" "+target)
	return ctx, Span{r}
}

// Span is a started span, or nothing when tracing is off. Its zero value
// is valid and does nothing.
type Span struct{ r Recorder }

// Recording reports whether the span records anything; callers use it to
// skip computing attributes.
func (s Span) Recording() bool { return s.r != nil }

// SetString sets a string attribute.
func (s Span) SetString(key, value string) {
	if s.r != nil {
		s.r.SetString(key, value)
	}
}

// SetInt sets an integer attribute.
func (s Span) SetInt(key string, value int64) {
	if s.r != nil {
		s.r.SetInt(key, value)
	}
}

// SetFloat sets a float attribute.
func (s Span) SetFloat(key string, value float64) {
	if s.r != nil {
		s.r.SetFloat(key, value)
	}
}

// End ends the span, failed when err is not nil.
func (s Span) End(err error) {
	if s.r != nil {
		s.r.End(err)
	}
}

// Multi returns a Tracer that starts a span in each of ts (a trace
// exporter and a metrics recorder, say), nil ones left out. Each sees the
// context the one before it returned.
func Multi(ts ...Tracer) Tracer {
	ts = slices.DeleteFunc(slices.Clone(ts), func(t Tracer) bool { return t == nil })
	switch len(ts) {
	case 0:
		return nil
	case 1:
		return ts[0]
	}
	var obs []Observer
	for _, t := range ts {
		if o, ok := t.(Observer); ok {
			obs = append(obs, o)
		}
	}
	if len(obs) > 0 {
		return observingMulti{multi(ts), obs}
	}
	return multi(ts)
}

type multi []Tracer

// observingMulti is a multi of which some tracers observe: only then is
// the multi an Observer, so that Observing stays nil otherwise.
type observingMulti struct {
	multi
	obs []Observer
}

func (m observingMulti) Observe(ms Measure, label string, d time.Duration) {
	for _, o := range m.obs {
		o.Observe(ms, label, d)
	}
}

func (m multi) Start(ctx context.Context, kind Kind, name string) (context.Context, Recorder) {
	var buf [4]Recorder
	rs := buf[:0]
	for _, t := range m {
		var r Recorder
		if ctx, r = t.Start(ctx, kind, name); r != nil {
			rs = append(rs, r)
		}
	}
	// A tracer that sampled the span out is left out. One recorder is
	// returned as is and two (a trace exporter's and the metrics') as a
	// pair: one allocation, where a slice in an interface takes two.
	switch len(rs) {
	case 0:
		return ctx, nil
	case 1:
		return ctx, rs[0]
	case 2:
		return ctx, &pair{rs[0], rs[1]}
	}
	return ctx, multiRecorder(slices.Clone(rs))
}

type pair [2]Recorder

func (p *pair) SetString(k, v string) {
	p[0].SetString(k, v)
	p[1].SetString(k, v)
}

func (p *pair) SetInt(k string, v int64) {
	p[0].SetInt(k, v)
	p[1].SetInt(k, v)
}

func (p *pair) SetFloat(k string, v float64) {
	p[0].SetFloat(k, v)
	p[1].SetFloat(k, v)
}

func (p *pair) End(err error) {
	p[0].End(err)
	p[1].End(err)
}

type multiRecorder []Recorder

func (m multiRecorder) SetString(k, v string) {
	for _, r := range m {
		r.SetString(k, v)
	}
}

func (m multiRecorder) SetInt(k string, v int64) {
	for _, r := range m {
		r.SetInt(k, v)
	}
}

func (m multiRecorder) SetFloat(k string, v float64) {
	for _, r := range m {
		r.SetFloat(k, v)
	}
}

func (m multiRecorder) End(err error) {
	for _, r := range m {
		r.End(err)
	}
}

// SpanContext identifies a span of another process: the caller's span a
// conversation's trace continues.
type SpanContext struct {
	TraceID [16]byte
	SpanID  [8]byte
	// Sampled is the W3C trace flags' sampled bit: whether the caller
	// records its trace. A parent-based sampler follows it.
	Sampled bool
}

// ParseSpanContext reads a serialized span context: a W3C traceparent
// ("00-<trace id>-<span id>-<flags>"), or the reference's
// observability_parent_span_context, Laminar's JSON
// {"trace_id": UUID, "span_id": UUID, ...} (camelCase keys accepted), whose
// UUIDs are the ids' hex digits and whose spans are all sampled.
func ParseSpanContext(s string) (SpanContext, error) {
	var sc SpanContext
	s = strings.TrimSpace(s)
	var tid, sid string
	if strings.HasPrefix(s, "{") {
		var v struct {
			TraceID  string `json:"trace_id"`
			SpanID   string `json:"span_id"`
			TraceID2 string `json:"traceId"`
			SpanID2  string `json:"spanId"`
		}
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return sc, fmt.Errorf("telemetry: span context: %w", err)
		}
		tid, sid = cmp.Or(v.TraceID, v.TraceID2), cmp.Or(v.SpanID, v.SpanID2)
		tid, sid = strings.ReplaceAll(tid, "-", ""), strings.ReplaceAll(sid, "-", "")
		if len(sid) == 32 && strings.HasPrefix(sid, "0000000000000000") {
			sid = sid[16:] // a 64-bit span id written as a UUID
		}
		sc.Sampled = true
	} else {
		parts := strings.Split(s, "-")
		if len(parts) != 4 || parts[0] != "00" {
			return sc, fmt.Errorf("telemetry: span context %q is neither a traceparent nor a JSON object", s)
		}
		tid, sid = parts[1], parts[2]
		var flags [1]byte
		if n, err := hex.Decode(flags[:], []byte(parts[3])); err != nil || n != 1 || len(parts[3]) != 2 {
			return sc, fmt.Errorf("telemetry: span context: bad trace flags %q", parts[3])
		}
		sc.Sampled = flags[0]&1 != 0
	}
	if n, err := hex.Decode(sc.TraceID[:], []byte(tid)); err != nil || n != 16 || len(tid) != 32 {
		return sc, fmt.Errorf("telemetry: span context: bad trace id %q", tid)
	}
	if n, err := hex.Decode(sc.SpanID[:], []byte(sid)); err != nil || n != 8 || len(sid) != 16 {
		return sc, fmt.Errorf("telemetry: span context: bad span id %q", sid)
	}
	if sc.TraceID == ([16]byte{}) || sc.SpanID == ([8]byte{}) {
		return sc, errors.New("telemetry: span context: zero id")
	}
	return sc, nil
}

type remoteKey struct{}

// WithRemoteParent returns ctx carrying sc as the parent of the next span
// started from it that has no parent of its own in ctx.
func WithRemoteParent(ctx context.Context, sc SpanContext) context.Context {
	return context.WithValue(ctx, remoteKey{}, sc)
}

// RemoteParent returns the span context WithRemoteParent put in ctx.
func RemoteParent(ctx context.Context) (SpanContext, bool) {
	sc, ok := ctx.Value(remoteKey{}).(SpanContext)
	return sc, ok
}
