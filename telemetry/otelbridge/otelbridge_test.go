package otelbridge_test

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/gohands/gohands/telemetry"
	"github.com/gohands/gohands/telemetry/otelbridge"
)

func attr(s tracetest.SpanStub, key string) (attribute.Value, int) {
	var v attribute.Value
	n := 0
	for _, a := range s.Attributes {
		if string(a.Key) == key {
			v, n = a.Value, n+1
		}
	}
	return v, n
}

// TestSpans: the SDK's spans go to an application's OpenTelemetry
// provider, under the application's span in the context, or under a
// remote parent when there is none; attributes (the last of a key), kinds
// and a failure arrive.
func TestSpans(t *testing.T) {
	mem := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(mem))
	defer tp.Shutdown(context.Background())
	prev := telemetry.SetTracer(otelbridge.New(tp.Tracer("gohands")))
	defer telemetry.SetTracer(prev)

	// The application's span, then gohands' run, step and model call.
	appCtx, app := tp.Tracer("app").Start(context.Background(), "handle request")
	ctx, run := telemetry.Start(appCtx, telemetry.KindRun, "conversation.run")
	sctx, step := telemetry.Start(ctx, telemetry.KindStep, "agent.step")
	step.SetInt(telemetry.AttrStep, 1)
	step.SetInt(telemetry.AttrStep, 2)
	_, chat := telemetry.StartOp(sctx, telemetry.KindModelCall, "chat", "gpt-4o")
	for _, k := range []string{telemetry.AttrInputTokens, telemetry.AttrOutputTokens, telemetry.AttrCacheRead, telemetry.AttrCacheWrite,
		telemetry.AttrReasoning, telemetry.AttrRetries, telemetry.AttrHTTPStatus, telemetry.AttrExitCode, telemetry.AttrStep} {
		chat.SetInt(k, 7) // more than a recorder holds
	}
	chat.SetString(telemetry.AttrRequestModel, "gpt-4o")
	chat.SetFloat(telemetry.AttrCost, 0.5)
	chat.End(errors.New("boom"))
	step.End(nil)
	run.End(nil)
	app.End()

	// No application span: the remote parent, whose sampled flag the
	// provider's (default, parent-based) sampler follows.
	remote, err := telemetry.ParseSpanContext("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	if err != nil {
		t.Fatal(err)
	}
	_, req := telemetry.Start(telemetry.WithRemoteParent(context.Background(), remote), telemetry.KindConversation, "conversation")
	req.End(nil)
	remote.Sampled = false
	_, req = telemetry.Start(telemetry.WithRemoteParent(context.Background(), remote), telemetry.KindConversation, "not sampled")
	req.End(nil)

	got := map[string]tracetest.SpanStub{}
	for _, s := range mem.GetSpans() {
		got[s.Name] = s
	}
	if len(got) != 5 {
		t.Fatalf("spans %v, want 5", got)
	}
	appSC, runS, stepS, chatS := got["handle request"].SpanContext, got["conversation.run"], got["agent.step"], got["chat gpt-4o"]
	if runS.Parent.SpanID() != appSC.SpanID() || runS.SpanContext.TraceID() != appSC.TraceID() {
		t.Errorf("run's parent %s, want the application's span %s", runS.Parent.SpanID(), appSC.SpanID())
	}
	if stepS.Parent.SpanID() != runS.SpanContext.SpanID() || chatS.Parent.SpanID() != stepS.SpanContext.SpanID() {
		t.Error("step not under run, or chat not under step")
	}
	if v, n := attr(stepS, telemetry.AttrStep); n != 1 || v.AsInt64() != 2 {
		t.Errorf("step attribute %v (%d times), want 2 once", v, n)
	}
	if v, _ := attr(chatS, "gohands.span.kind"); v.AsString() != "model_call" || chatS.SpanKind != trace.SpanKindClient {
		t.Errorf("chat span kind %q %v", v.AsString(), chatS.SpanKind)
	}
	if v, _ := attr(chatS, telemetry.AttrCost); v.AsFloat64() != 0.5 || len(chatS.Attributes) != 12 {
		t.Errorf("chat attributes %v", chatS.Attributes)
	}
	if chatS.Status.Code != codes.Error || chatS.Status.Description != "boom" {
		t.Errorf("chat status %v", chatS.Status)
	}
	c := got["conversation"]
	if c.Parent.TraceID() != remote.TraceID || c.Parent.SpanID() != remote.SpanID || !c.Parent.IsRemote() || !c.SpanContext.IsSampled() {
		t.Errorf("conversation span's parent %v, want the remote parent, sampled", c.Parent)
	}
	if c.SpanKind != trace.SpanKindServer {
		t.Errorf("conversation span kind %v", c.SpanKind)
	}
}
