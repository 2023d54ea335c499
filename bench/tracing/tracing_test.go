//go:build unix

// Package tracing measures what tracing costs the agent loop: the same
// 200-step scripted run with no tracer, with spans exported by
// telemetry/oteltrace or by the OpenTelemetry SDK, and with /metrics'
// recorder next to them.
//
//	go test -run '^$' -bench Overhead -benchtime 10x ./bench/tracing/
//	go test -run '^$' -bench Run200 -benchtime 20x -count 5 ./bench/tracing/
//	go test -run '^$' -bench StepSpans -benchtime 100000x -count 5 ./bench/tracing/
//
// Most of a step's CPU time is the file store's, in the kernel (one file
// per event): under a loaded disk it varies more than tracing costs.
// BenchmarkOverhead pairs untraced and traced runs, each pair's two a
// moment apart, for a machine whose load varies; BenchmarkRun200's modes
// are best run alternately (a mode alone: -bench 'Run200/trace\+metrics$',
// the + quoted), their user-ns/step compared as well as cpu-ns/step.
// TMPDIR=/dev/shm puts the store on tmpfs: a step then costs less, and
// tracing's share is its worst case.
package tracing

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/telemetry"
	"github.com/gohands/gohands/telemetry/otelbridge"
	"github.com/gohands/gohands/telemetry/oteltrace"
	"github.com/gohands/gohands/telemetry/prom"
)

const steps = 200

// BenchmarkRun200 runs a 200-step job (an in-process scripted model
// asking for the think tool at each step, events persisted to files) per
// op. Sub-benchmarks: "off" installs no tracer; "trace" exports every
// span (run, steps, model and tool calls: 601 per run) in batches over
// OTLP/HTTP protobuf to a loopback receiver in the process; "trace+metrics"
// adds the Prometheus recorder gohands serve installs; "sdk" and
// "sdk+metrics" do the same with the official OpenTelemetry SDK
// (telemetry/otelbridge, its batch span processor, otlptracehttp) in place
// of telemetry/oteltrace. It reports the process's CPU time and the
// allocations per step; compare "off" with the others for the cost of
// tracing.
func BenchmarkRun200(b *testing.B) {
	for _, mode := range modes {
		b.Run(mode, func(b *testing.B) {
			install(b, mode, false)
			run(b)
		})
	}
}

var modes = []string{"off", "trace", "trace+metrics", "sdk", "sdk+metrics"}

// burstQueue is the span queue of BenchmarkStepSpans, which makes spans
// faster than any run: long enough that none is dropped at -benchtime
// 100000x, so that every one is encoded and sent.
const burstQueue = 524288

// install installs the tracer of mode ("metrics" alone is a mode of
// BenchmarkStepSpans) until b ends, and a loopback OTLP/HTTP receiver
// that reads and drops (its work is small next to the exporter's: one
// request per 512 spans). It returns the exporter's shutdown, which
// exports what is queued; b's cleanup calls it too. With burst, the
// exporter's queue holds burstQueue spans, not the default 2048.
func install(b *testing.B, mode string, burst bool) (shutdown func()) {
	shutdown = func() {}
	if telemetry.Enabled() {
		b.Fatal("a tracer is installed")
	}
	b.Cleanup(func() { telemetry.SetTracer(nil) })
	exporter, metrics, _ := strings.Cut(mode, "+")
	if exporter == "metrics" {
		exporter, metrics = "", "metrics"
	}
	if exporter == "trace" || exporter == "sdk" {
		rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
		b.Cleanup(rcv.Close)
		b.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", rcv.URL+"/v1/traces")
		b.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	}
	// Shut down (flushed: the export counts too) before the receiver
	// closes, cleanups running last first.
	switch exporter {
	case "trace":
		if burst {
			b.Setenv("OTEL_BSP_MAX_QUEUE_SIZE", strconv.Itoa(burstQueue))
		}
		p, err := oteltrace.Setup(context.Background(), nil)
		if err != nil || p == nil {
			b.Fatal(p, err)
		}
		shutdown = sync.OnceFunc(func() { p.Shutdown(context.Background()) })
	case "sdk":
		e, err := otlptracehttp.New(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		var opts []sdktrace.BatchSpanProcessorOption
		if burst {
			opts = append(opts, sdktrace.WithMaxQueueSize(burstQueue))
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(e, opts...))
		shutdown = sync.OnceFunc(func() { tp.Shutdown(context.Background()) })
		telemetry.SetTracer(otelbridge.New(tp.Tracer("github.com/gohands/gohands")))
	}
	b.Cleanup(shutdown)
	if metrics != "" {
		prev := telemetry.SetTracer(nil)
		telemetry.SetTracer(telemetry.Multi(prev, prom.New()))
	}
	return shutdown
}

func run(b *testing.B) {
	var cpu, user time.Duration
	var mallocs uint64
	b.ReportAllocs()
	for range b.N {
		c, u, m := job(b)
		cpu, user, mallocs = cpu+c, user+u, mallocs+m
	}
	n := float64(b.N * steps)
	b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/step")
	b.ReportMetric(float64(user.Nanoseconds())/n, "user-ns/step")
	b.ReportMetric(float64(mallocs)/n, "allocs/step")
}

// job runs the 200-step job once with the tracer installed, and returns
// the process's CPU time (all, user) and its allocations during the run,
// set-up left out. The benchmark's timer runs during the run only.
func job(b *testing.B) (cpu, user time.Duration, mallocs uint64) {
	b.StopTimer()
	defer b.StartTimer()
	ctx := context.Background()
	replies := make([]llmtest.Reply, 0, steps)
	for i := range steps - 1 {
		replies = append(replies, llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{Name: "think", Arguments: fmt.Sprintf(`{"thought":"step %d: look at the next file"}`, i)},
		}})
	}
	replies = append(replies, llmtest.Reply{Text: "Done."})
	cfg := llm.DefaultConfig("openai/gpt-4o")
	l, err := llm.New(cfg, &llm.Options{Provider: llmtest.NewProvider(b, replies...)})
	if err != nil {
		b.Fatal(err)
	}
	a := agent.New(cfg, nil, &agent.Options{Model: l})
	c, err := conversation.New(ctx, a, b.TempDir(), &conversation.LocalOptions{
		MaxIterations: steps + 1, Backend: filestore.NewBackend(b.TempDir(), nil),
	})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if err := c.SendMessage(ctx, event.UserMessage("Think it through.")); err != nil {
		b.Fatal(err)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m0 := ms.Mallocs
	c0, u0 := cpuTime()
	b.StartTimer()
	err = c.Run(ctx)
	b.StopTimer()
	c1, u1 := cpuTime()
	runtime.ReadMemStats(&ms)
	if err != nil {
		b.Fatal(err)
	}
	if c.Status() != conversation.StatusFinished {
		b.Fatalf("status %s", c.Status())
	}
	return c1 - c0, u1 - u0, ms.Mallocs - m0
}

// BenchmarkOverhead is BenchmarkRun200's comparison made robust to a
// machine whose load changes while it runs: each op runs the job twice,
// with no tracer and with the mode's, in alternating order, and
// overhead-% is the median over the ops of (traced - untraced) /
// untraced CPU time; off-cpu-ns/step and on-cpu-ns/step are the medians
// of each. -benchtime 10x is ten pairs.
func BenchmarkOverhead(b *testing.B) {
	for _, mode := range modes[1:] {
		b.Run(mode, func(b *testing.B) {
			install(b, mode, false)
			tracer := telemetry.SetTracer(nil)
			var ratios, offs, ons []float64
			for i := range b.N {
				var cpu [2]time.Duration // untraced, traced
				for j := range 2 {
					traced := (i+j)%2 == 1
					if traced {
						telemetry.SetTracer(tracer)
					}
					cpu[b2i(traced)], _, _ = job(b)
					telemetry.SetTracer(nil)
				}
				ratios = append(ratios, float64(cpu[1]-cpu[0])/float64(cpu[0]))
				offs, ons = append(offs, float64(cpu[0].Nanoseconds())/steps), append(ons, float64(cpu[1].Nanoseconds())/steps)
			}
			b.ReportMetric(100*median(ratios), "overhead-%")
			b.ReportMetric(median(offs), "off-cpu-ns/step")
			b.ReportMetric(median(ons), "on-cpu-ns/step")
		})
	}
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}

func median(v []float64) float64 {
	slices.Sort(v)
	if n := len(v); n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[len(v)/2]
}

// cpuTime is the CPU time of the process so far: user and system, and
// user alone.
func cpuTime() (total, user time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), time.Duration(ru.Utime.Nano())
}

// BenchmarkStepSpans is the telemetry work of one step alone, as the
// agent loop does it: a step span, a model call span with its 15
// attributes and a tool call span with 4, in each mode of BenchmarkRun200
// but "off", and "metrics" (the Prometheus recorder alone). Its cpu-ns/op
// next to BenchmarkRun200/off's cpu-ns/step is telemetry's share of a
// step, measured without the whole run's variance; the export of what is
// queued at the end counts.
func BenchmarkStepSpans(b *testing.B) {
	for _, mode := range append(modes[1:], "metrics") {
		b.Run(mode, func(b *testing.B) {
			stepSpans(b, install(b, mode, true))
		})
	}
}

func stepSpans(b *testing.B, shutdown func()) {
	ctx, run := telemetry.Start(context.Background(), telemetry.KindRun, "conversation.run")
	b.ReportAllocs()
	c0, _ := cpuTime()
	for i := 0; b.Loop(); i++ {
		sctx, step := telemetry.Start(ctx, telemetry.KindStep, "agent.step")
		step.SetInt(telemetry.AttrStep, int64(i))
		_, chat := telemetry.StartOp(sctx, telemetry.KindModelCall, "chat", "gpt-4o")
		for _, k := range []string{telemetry.AttrOperation, telemetry.AttrSystem, telemetry.AttrRequestModel, telemetry.AttrConversationID, telemetry.AttrResponseModel, telemetry.AttrResponseID} {
			chat.SetString(k, "0123456789abcdef")
		}
		for _, k := range []string{telemetry.AttrInputTokens, telemetry.AttrOutputTokens, telemetry.AttrCacheRead, telemetry.AttrCacheWrite, telemetry.AttrReasoning, telemetry.AttrRetries} {
			chat.SetInt(k, 1234)
		}
		chat.SetFloat(telemetry.AttrCost, 0.0123)
		chat.SetFloat(telemetry.AttrTimeToFirst, 0.5)
		chat.End(nil)
		_, tool := telemetry.StartOp(sctx, telemetry.KindToolCall, "execute_tool", "think")
		tool.SetString(telemetry.AttrOperation, "execute_tool")
		tool.SetString(telemetry.AttrToolName, "think")
		tool.SetString(telemetry.AttrToolCallID, "call_0123456789")
		tool.SetInt(telemetry.AttrExitCode, 0)
		tool.End(nil)
		step.End(nil)
	}
	run.End(nil)
	shutdown()
	c1, _ := cpuTime()
	b.ReportMetric(float64((c1-c0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
