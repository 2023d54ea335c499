// Package otelcol tests gohands' traces against the OpenTelemetry
// Collector's own OTLP receiver, started on loopback. It is a module of
// its own so that the Collector's dependencies stay out of gohands'.
package otelcol

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/freeport"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/telemetry"
	"github.com/gohands/gohands/telemetry/otelbridge"
	"github.com/gohands/gohands/telemetry/oteltrace"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/task"

	_ "github.com/gohands/gohands/llm/providers"
	_ "github.com/gohands/gohands/tools/fileeditor"
	_ "github.com/gohands/gohands/tools/tasktracker"
	_ "github.com/gohands/gohands/tools/terminal"
)

const (
	secretValue = "s3cr3t-VALUE-7f1d"
	argMarker   = "ARGMARKER-5521"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	a, err := freeport.Addr()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// receiver starts the Collector's OTLP receiver on loopback, gRPC and
// HTTP, and returns the sink it delivers traces to and its addresses.
func receiver(t *testing.T) (sink *consumertest.TracesSink, grpcAddr, httpAddr string) {
	t.Helper()
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	g := cfg.Protocols.GRPC.GetOrInsertDefault()
	grpcAddr = freeAddr(t)
	g.NetAddr.Endpoint = grpcAddr
	h := cfg.Protocols.HTTP.GetOrInsertDefault()
	httpAddr = freeAddr(t)
	h.ServerConfig.NetAddr.Endpoint = httpAddr
	sink = new(consumertest.TracesSink)
	r, err := f.CreateTraces(context.Background(), receivertest.NewNopSettings(component.MustNewType("otlp")), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Shutdown(context.Background()) })
	return sink, grpcAddr, httpAddr
}

type span struct {
	name, id, parent, trace string
	attrs                   map[string]any
	failed                  bool
}

// spans returns every span the sink received, and the JSON of all it
// received (what a backend would store).
func spans(t *testing.T, sink *consumertest.TracesSink) ([]span, string) {
	t.Helper()
	var out []span
	var all strings.Builder
	for _, td := range sink.AllTraces() {
		b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					out = append(out, span{
						name: s.Name(), id: s.SpanID().String(), parent: s.ParentSpanID().String(), trace: s.TraceID().String(),
						attrs: s.Attributes().AsRaw(), failed: s.Status().Code() == ptrace.StatusCodeError,
					})
				}
			}
		}
	}
	return out, all.String()
}

func call(id, name string, args any) llmtest.ToolCall {
	b, _ := json.Marshal(args)
	return llmtest.ToolCall{ID: id, Name: name, Arguments: string(b)}
}

// runJob runs a conversation whose agent delegates to a sub-agent (which
// runs a command), meets a model error that is retried, then runs a
// command with a secret in its environment and a marker in its arguments.
func runJob(t *testing.T) { t.Helper(); runJobCtx(t, context.Background()) }

// runJobCtx is runJob with the run's context.
func runJobCtx(t *testing.T, ctx context.Context) {
	t.Helper()
	srv := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("t1", "task", map[string]any{"description": "child", "prompt": "CHILD: run a command"})}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("c1", "terminal", map[string]any{"command": "echo child " + argMarker})}, Usage: llmtest.Usage{PromptTokens: 50, CompletionTokens: 5}},
		llmtest.Reply{Text: "child done"},
		llmtest.Reply{Fail: &llmtest.Failure{Status: 500}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("p1", "terminal", map[string]any{"command": "echo $API_TOKEN " + argMarker + "; exit 3"})},
			Usage: llmtest.Usage{PromptTokens: 100, CompletionTokens: 10, CacheReadTokens: 40}},
		llmtest.Reply{Text: "all done"},
	)
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.BaseURL = srv.URL + "/v1"
	cfg.APIKey = secret.New("sk-test")
	cfg.RetryMinWait, cfg.RetryMaxWait, cfg.RetryMultiplier, cfg.NumRetries = 0, 0, 0, 3
	a := agent.New(cfg, []tool.Spec{{Name: task.ToolSetName}, {Name: "terminal"}}, nil)
	ws := t.TempDir()
	c, err := conversation.New(context.Background(), a, ws, &conversation.LocalOptions{
		Backend: filestore.NewBackend(t.TempDir(), nil),
		Secrets: map[string]secret.Source{"API_TOKEN": &secret.StaticSecret{Value: secret.New(secretValue)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SendMessage(context.Background(), event.UserMessage("Do the job.")); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if st := c.Status(); st != conversation.StatusFinished {
		t.Fatalf("status %s, want finished", st)
	}
}

func TestSpanTree(t *testing.T) {
	for _, proto := range []string{"grpc", "http/protobuf", "http/json"} {
		t.Run(strings.ReplaceAll(proto, "/", "_"), func(t *testing.T) {
			sink, grpcAddr, httpAddr := receiver(t)
			endpoint := "http://" + httpAddr
			if proto == "grpc" {
				endpoint = "http://" + grpcAddr
			}
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", proto)
			file := filepath.Join(t.TempDir(), "trace.jsonl")
			p, err := oteltrace.Setup(context.Background(), &oteltrace.Options{File: file})
			if err != nil || p == nil {
				t.Fatalf("Setup: %v %v", p, err)
			}
			runJob(t)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := p.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			if telemetry.Enabled() {
				t.Fatal("tracer still installed after Shutdown")
			}
			got, raw := spans(t, sink)
			checkTree(t, got)
			for _, leak := range []string{secretValue, argMarker, "sk-test", "Do the job"} {
				if strings.Contains(raw, leak) {
					t.Errorf("the receiver's copy contains %q", leak)
				}
			}
			checkFile(t, file, len(got))
		})
	}
}

// TestSpanTreeSDK runs the job with the official OpenTelemetry SDK in
// place of oteltrace, as an application running its own SDK does
// (telemetry/otelbridge): its batch span processor and OTLP exporters
// deliver the same tree, and nothing secret, to the Collector, under the
// application's own span.
func TestSpanTreeSDK(t *testing.T) {
	for _, proto := range []string{"grpc", "http/protobuf"} {
		t.Run(strings.ReplaceAll(proto, "/", "_"), func(t *testing.T) {
			sink, grpcAddr, httpAddr := receiver(t)
			var e sdktrace.SpanExporter
			var err error
			if proto == "grpc" {
				e, err = otlptracegrpc.New(context.Background(), otlptracegrpc.WithEndpoint(grpcAddr), otlptracegrpc.WithInsecure())
			} else {
				e, err = otlptracehttp.New(context.Background(), otlptracehttp.WithEndpoint(httpAddr), otlptracehttp.WithInsecure())
			}
			if err != nil {
				t.Fatal(err)
			}
			tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(e))
			prev := telemetry.SetTracer(otelbridge.New(tp.Tracer("github.com/gohands/gohands")))
			defer telemetry.SetTracer(prev)
			ctx, app := tp.Tracer("app").Start(context.Background(), "app.request")
			runJobCtx(t, ctx)
			app.End()
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := tp.Shutdown(sctx); err != nil {
				t.Fatal(err)
			}
			got, raw := spans(t, sink)
			appID := app.SpanContext().SpanID().String()
			var rest []span
			for _, s := range got {
				switch {
				case s.id == appID:
				case s.parent == appID && s.name != "conversation.run":
					t.Errorf("%s under the application's span", s.name)
				default:
					rest = append(rest, s)
				}
			}
			if len(rest) != len(got)-1 {
				t.Fatal("the application's span did not arrive")
			}
			// The run's parent is the application's span: the one root
			// checkTree finds among gohands' spans.
			for _, s := range rest {
				if s.name == "conversation.run" && s.parent != appID && !slices.ContainsFunc(rest, func(p span) bool { return p.id == s.parent }) {
					t.Errorf("the top run's parent %s is not the application's span %s", s.parent, appID)
				}
			}
			checkTree(t, rest)
			for _, leak := range []string{secretValue, argMarker, "sk-test", "Do the job"} {
				if strings.Contains(raw, leak) {
					t.Errorf("the receiver's copy contains %q", leak)
				}
			}
		})
	}
}

// checkTree checks the spans form one trace: run → steps → model calls
// and tool calls, the sub-agent under the task tool call with its own run,
// steps and tool call.
func checkTree(t *testing.T, got []span) {
	t.Helper()
	byID := map[string]span{}
	for _, s := range got {
		byID[s.id] = s
	}
	var roots []span
	for _, s := range got {
		if s.trace != got[0].trace {
			t.Errorf("span %s in another trace", s.name)
		}
		if _, ok := byID[s.parent]; !ok {
			roots = append(roots, s)
		}
	}
	if len(roots) != 1 || roots[0].name != "conversation.run" {
		t.Fatalf("roots %v, want one conversation.run", roots)
	}
	path := func(s span) string {
		var names []string
		for ok := true; ok; s, ok = byID[s.parent] {
			n := s.name
			if i := strings.IndexByte(n, ' '); i > 0 {
				n = n[:i]
			}
			names = append([]string{n}, names...)
		}
		return strings.Join(names, "/")
	}
	count := map[string]int{}
	for _, s := range got {
		count[path(s)]++
	}
	want := map[string]int{
		"conversation.run":                                                                               1,
		"conversation.run/agent.step":                                                                    3, // task; a call retried once, then terminal; text
		"conversation.run/agent.step/chat":                                                               3,
		"conversation.run/agent.step/execute_tool":                                                       2,
		"conversation.run/agent.step/execute_tool/invoke_agent":                                          1,
		"conversation.run/agent.step/execute_tool/invoke_agent/conversation.run":                         1,
		"conversation.run/agent.step/execute_tool/invoke_agent/conversation.run/agent.step":              2,
		"conversation.run/agent.step/execute_tool/invoke_agent/conversation.run/agent.step/chat":         2,
		"conversation.run/agent.step/execute_tool/invoke_agent/conversation.run/agent.step/execute_tool": 1,
		// The default sub-agent has a condenser; it has nothing to do.
		"conversation.run/agent.step/execute_tool/invoke_agent/conversation.run/agent.step/condense": 2,
	}
	for k, n := range want {
		if count[k] != n {
			t.Errorf("%d spans at %s, want %d", count[k], k, n)
		}
	}
	for k := range count {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected spans at %s", k)
		}
	}
	var retried, tool3 bool
	for _, s := range got {
		switch {
		case strings.HasPrefix(s.name, "chat "):
			if s.attrs[telemetry.AttrRequestModel] != "openai/gpt-4o" || s.attrs[telemetry.AttrOperation] != "chat" {
				t.Errorf("chat span attributes %v", s.attrs)
			}
			if s.attrs[telemetry.AttrRetries] == int64(1) {
				retried = true
				if s.attrs[telemetry.AttrInputTokens] != int64(100) || s.attrs[telemetry.AttrOutputTokens] != int64(10) || s.attrs[telemetry.AttrCacheRead] != int64(40) {
					t.Errorf("retried call's usage %v", s.attrs)
				}
			}
		case s.name == "execute_tool terminal" && s.attrs[telemetry.AttrToolCallID] == "p1":
			tool3 = s.attrs[telemetry.AttrExitCode] == int64(3) && s.attrs[telemetry.AttrToolName] == "terminal"
		}
	}
	if !retried {
		t.Error("no chat span records one retry")
	}
	if !tool3 {
		t.Error("the parent's terminal call does not record exit code 3")
	}
}

// checkFile reads the --trace file back with the Collector's OTLP JSON
// decoder: it holds every span the receiver got.
func checkFile(t *testing.T, file string, want int) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.Lines(string(b)) {
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces([]byte(line))
		if err != nil {
			t.Fatalf("trace file line does not decode as OTLP JSON: %v\n%s", err, line)
		}
		n += td.SpanCount()
	}
	if n != want {
		t.Errorf("trace file has %d spans, the receiver %d", n, want)
	}
}
