// Package prom counts what the SDK's telemetry spans measure (runs, steps,
// model calls, tokens, cost, tool calls, server requests) and writes the
// counts in the Prometheus text exposition format (version 0.0.4).
//
// A Registry is a telemetry.Tracer: install it (alone or with
// telemetry.Multi next to a trace exporter) and serve it, as gohands serve
// does on /metrics. It imports only the standard library; label values are
// the bounded names the spans carry (models, tools, route templates,
// statuses), never ids or arguments.
package prom

import (
	"bufio"
	"context"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gohands/gohands/telemetry"
)

// ContentType is the media type of the text format.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Buckets of the latency histograms, in seconds: from a fast tool call to
// a slow model answer.
var (
	fastBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
	slowBuckets = []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300}
	// An append to memory takes a microsecond, to a file tens, to
	// PostgreSQL a round trip; a full or slow disk, seconds.
	storeBuckets = []float64{0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5}
)

// Registry holds the metrics. Its zero value is not usable; call New.
type Registry struct {
	now func() time.Time

	runs, runsActive, steps, stepSeconds *family
	modelCalls, tokens, cost, retries    *family
	modelSeconds, firstToken             *family
	toolCalls, toolErrors, toolSeconds   *family
	condensations, subAgents             *family
	requests, requestSeconds             *family
	storeAppend                          *family
	families                             []*family
}

// New returns a registry with every metric at zero.
func New() *Registry {
	r := &Registry{now: time.Now}
	add := func(f *family) *family { r.families = append(r.families, f); return f }
	r.runs = add(newFamily("gohands_runs_total", "Conversation runs ended, by the conversation's status at the end.", counter, nil, "status"))
	r.runsActive = add(newFamily("gohands_runs_in_progress", "Conversation runs in progress.", gauge, nil))
	r.steps = add(newFamily("gohands_steps_total", "Agent steps taken.", counter, nil))
	r.stepSeconds = add(newFamily("gohands_step_duration_seconds", "Duration of agent steps.", histogram, slowBuckets))
	r.modelCalls = add(newFamily("gohands_model_calls_total", "Model calls (retries included in one call), by model and outcome (ok or error).", counter, nil, "model", "outcome"))
	r.tokens = add(newFamily("gohands_model_tokens_total", "Tokens of model calls, by model and type (input, output, cache_read, cache_write, reasoning).", counter, nil, "model", "type"))
	r.cost = add(newFamily("gohands_model_cost_usd_total", "Cost of model calls in US dollars, by model.", counter, nil, "model"))
	r.retries = add(newFamily("gohands_model_retries_total", "Model call attempts beyond the first, by model.", counter, nil, "model"))
	r.modelSeconds = add(newFamily("gohands_model_call_duration_seconds", "Duration of model calls, retries included, by model.", histogram, slowBuckets, "model"))
	r.firstToken = add(newFamily("gohands_model_time_to_first_token_seconds", "Latency to the first streamed token, by model.", histogram, slowBuckets, "model"))
	r.toolCalls = add(newFamily("gohands_tool_calls_total", "Tool calls, by tool.", counter, nil, "tool"))
	r.toolErrors = add(newFamily("gohands_tool_errors_total", "Tool calls that failed, by tool.", counter, nil, "tool"))
	r.toolSeconds = add(newFamily("gohands_tool_call_duration_seconds", "Duration of tool calls, by tool.", histogram, fastBuckets, "tool"))
	r.condensations = add(newFamily("gohands_condensations_total", "Condenser calls, by whether they condensed (true or false).", counter, nil, "applied"))
	r.subAgents = add(newFamily("gohands_subagents_total", "Sub-agent conversations started, by agent.", counter, nil, "agent"))
	r.requests = add(newFamily("gohands_http_requests_total", "Server requests, by method, route template (unmatched for paths no route matches) and status code.", counter, nil, "method", "route", "status"))
	r.requestSeconds = add(newFamily("gohands_http_request_duration_seconds", "Duration of server requests, by method and route template.", histogram, fastBuckets, "method", "route"))
	r.storeAppend = add(newFamily("gohands_event_store_append_duration_seconds", "Duration of event appends to conversation stores, by store kind (file, memory, postgres, other).", histogram, storeBuckets, "store"))
	return r
}

// Observe implements telemetry.Observer. It allocates nothing once a
// label's series exists: it runs on every event appended.
func (r *Registry) Observe(m telemetry.Measure, label string, d time.Duration) {
	switch m {
	case telemetry.MeasureStoreAppend:
		r.storeAppend.observe(d.Seconds(), label)
	}
}

// Start implements telemetry.Tracer: it records the span's measures when
// it ends. The context is returned as is.
func (r *Registry) Start(ctx context.Context, kind telemetry.Kind, _ string) (context.Context, telemetry.Recorder) {
	if kind == telemetry.KindRun {
		r.runsActive.add(1)
	}
	return ctx, &recorder{r: r, kind: kind, start: r.now()}
}

// ServeHTTP writes the metrics in the text format.
func (r *Registry) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", ContentType)
	r.WriteTo(w)
}

// WriteTo writes every metric in the text format.
func (r *Registry) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	bw := bufio.NewWriter(cw)
	for _, f := range r.families {
		f.write(bw)
	}
	err := bw.Flush()
	return cw.n, err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// WriteGauge writes one gauge family whose series differ by one label
// (conversations by status, say): values maps the label's value to the
// gauge's. With label empty, values must hold the one series under "".
func WriteGauge(w io.Writer, name, help, label string, values map[string]float64) error {
	return writeOne(w, gauge, name, help, label, values)
}

// WriteCounter is WriteGauge for a counter, a total its caller keeps
// (sockets dropped, say): name ends in _total.
func WriteCounter(w io.Writer, name, help, label string, values map[string]float64) error {
	return writeOne(w, counter, name, help, label, values)
}

func writeOne(w io.Writer, typ metricType, name, help, label string, values map[string]float64) error {
	f := newFamily(name, help, typ, nil)
	if label != "" {
		f.labels = []string{label}
	}
	for v, x := range values {
		if label == "" {
			f.add(x)
		} else {
			f.add(x, v)
		}
	}
	bw := bufio.NewWriter(w)
	f.write(bw)
	return bw.Flush()
}

// recorder gathers one span's measures until it ends.
type recorder struct {
	r     *Registry
	kind  telemetry.Kind
	start time.Time

	mu                                       sync.Mutex
	model, tool, status, method, route, code string
	applied, agent                           string
	toolErr                                  bool
	tokens                                   [5]int64 // input, output, cache_read, cache_write, reasoning
	retries                                  int64
	cost, firstToken                         float64
}

var tokenTypes = [5]string{"input", "output", "cache_read", "cache_write", "reasoning"}

func (rc *recorder) SetString(k, v string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	switch k {
	case telemetry.AttrRequestModel:
		rc.model = v
	case telemetry.AttrToolName:
		rc.tool = v
	case telemetry.AttrToolError:
		rc.toolErr = v == "true"
	case telemetry.AttrStatus:
		rc.status = v
	case telemetry.AttrHTTPMethod:
		rc.method = v
	case telemetry.AttrHTTPRoute:
		rc.route = v
	case telemetry.AttrCondensed:
		rc.applied = v
	case telemetry.AttrAgentName:
		rc.agent = v
	}
}

func (rc *recorder) SetInt(k string, v int64) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	switch k {
	case telemetry.AttrInputTokens:
		rc.tokens[0] = v
	case telemetry.AttrOutputTokens:
		rc.tokens[1] = v
	case telemetry.AttrCacheRead:
		rc.tokens[2] = v
	case telemetry.AttrCacheWrite:
		rc.tokens[3] = v
	case telemetry.AttrReasoning:
		rc.tokens[4] = v
	case telemetry.AttrRetries:
		rc.retries = v
	case telemetry.AttrHTTPStatus:
		rc.code = strconv.FormatInt(v, 10)
	}
}

func (rc *recorder) SetFloat(k string, v float64) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	switch k {
	case telemetry.AttrCost:
		rc.cost = v
	case telemetry.AttrTimeToFirst:
		rc.firstToken = v
	}
}

func (rc *recorder) End(err error) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	r := rc.r
	d := r.now().Sub(rc.start).Seconds()
	switch rc.kind {
	case telemetry.KindRun:
		r.runsActive.add(-1)
		status := rc.status
		if status == "" {
			status = "unknown"
		}
		r.runs.add(1, status)
	case telemetry.KindStep:
		r.steps.add(1)
		r.stepSeconds.observe(d)
	case telemetry.KindModelCall:
		outcome := "ok"
		if err != nil {
			outcome = "error"
		}
		r.modelCalls.add(1, rc.model, outcome)
		for i, n := range rc.tokens {
			if n > 0 {
				r.tokens.add(float64(n), rc.model, tokenTypes[i])
			}
		}
		if rc.cost > 0 {
			r.cost.add(rc.cost, rc.model)
		}
		if rc.retries > 0 {
			r.retries.add(float64(rc.retries), rc.model)
		}
		r.modelSeconds.observe(d, rc.model)
		if rc.firstToken > 0 {
			r.firstToken.observe(rc.firstToken, rc.model)
		}
	case telemetry.KindToolCall:
		r.toolCalls.add(1, rc.tool)
		if rc.toolErr || err != nil {
			r.toolErrors.add(1, rc.tool)
		}
		r.toolSeconds.observe(d, rc.tool)
	case telemetry.KindCondensation:
		applied := rc.applied
		if applied == "" {
			applied = "false"
		}
		r.condensations.add(1, applied)
	case telemetry.KindSubAgent:
		r.subAgents.add(1, rc.agent)
	case telemetry.KindRequest:
		route := rc.route
		if route == "" {
			route = "unmatched" // a path no route matched: its text would be a label per path
		}
		r.requests.add(1, rc.method, route, rc.code)
		r.requestSeconds.observe(d, rc.method, route)
	}
}

type metricType uint8

const (
	counter metricType = iota
	gauge
	histogram
)

var typeNames = [...]string{"counter", "gauge", "histogram"}

// family is one metric with its series, keyed by their label values.
type family struct {
	name, help string
	typ        metricType
	labels     []string
	buckets    []float64

	mu     sync.Mutex
	series map[string]*series
}

type series struct {
	values []string
	value  float64  // counter, gauge; the sum of a histogram
	counts []uint64 // histogram: per bucket, then +Inf
	count  uint64   // histogram
}

func newFamily(name, help string, typ metricType, buckets []float64, labels ...string) *family {
	return &family{name: name, help: help, typ: typ, labels: labels, buckets: buckets, series: map[string]*series{}}
}

// get returns the series of values, made on first use. f.mu is held. The
// key is built on the stack: looking up a series allocates nothing.
func (f *family) get(values []string) *series {
	var buf [128]byte
	key := buf[:0]
	for i, v := range values {
		if i > 0 {
			key = append(key, 0xff)
		}
		key = append(key, v...)
	}
	s := f.series[string(key)]
	if s == nil {
		s = &series{values: slices.Clone(values)}
		if f.typ == histogram {
			s.counts = make([]uint64, len(f.buckets)+1)
		}
		f.series[string(key)] = s
	}
	return s
}

func (f *family) add(x float64, values ...string) {
	f.mu.Lock()
	f.get(values).value += x
	f.mu.Unlock()
}

func (f *family) observe(x float64, values ...string) {
	f.mu.Lock()
	s := f.get(values)
	i, _ := slices.BinarySearch(f.buckets, x) // le: the first bucket ≥ x
	s.counts[i]++
	s.count++
	s.value += x
	f.mu.Unlock()
}

func (f *family) write(w *bufio.Writer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.WriteString("# HELP " + f.name + " " + escapeHelp(f.help) + "\n")
	w.WriteString("# TYPE " + f.name + " " + typeNames[f.typ] + "\n")
	if len(f.series) == 0 && len(f.labels) == 0 && f.typ != histogram {
		w.WriteString(f.name + " 0\n") // an unlabelled metric exists before its first change
		return
	}
	keys := make([]string, 0, len(f.series))
	for k := range f.series {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		s := f.series[k]
		if f.typ != histogram {
			writeSample(w, f.name, f.labels, s.values, "", "", s.value)
			continue
		}
		var cum uint64
		for i, b := range f.buckets {
			cum += s.counts[i]
			writeSample(w, f.name+"_bucket", f.labels, s.values, "le", formatFloat(b), float64(cum))
		}
		writeSample(w, f.name+"_bucket", f.labels, s.values, "le", "+Inf", float64(s.count))
		writeSample(w, f.name+"_sum", f.labels, s.values, "", "", s.value)
		writeSample(w, f.name+"_count", f.labels, s.values, "", "", float64(s.count))
	}
}

func writeSample(w *bufio.Writer, name string, labels, values []string, extra, extraValue string, v float64) {
	w.WriteString(name)
	if len(labels) > 0 || extra != "" {
		w.WriteByte('{')
		for i, l := range labels {
			if i > 0 {
				w.WriteByte(',')
			}
			w.WriteString(l + `="` + escapeLabel(values[i]) + `"`)
		}
		if extra != "" {
			if len(labels) > 0 {
				w.WriteByte(',')
			}
			w.WriteString(extra + `="` + extraValue + `"`)
		}
		w.WriteByte('}')
	}
	w.WriteByte(' ')
	w.WriteString(formatFloat(v))
	w.WriteByte('\n')
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

var (
	labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
)

func escapeLabel(s string) string { return labelEscaper.Replace(s) }
func escapeHelp(s string) string  { return helpEscaper.Replace(s) }
