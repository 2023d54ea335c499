package anthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
)

// TestSDKConformance sends every message shape the agent produces, streamed
// and not, to models with thinking, with sampling parameters and with
// adaptive thinking, and checks each request body against the request
// types of Anthropic's official Python SDK (llmtest.ValidateWithSDK):
// Anthropic publishes no OpenAPI document of the Messages API. Versions:
// those of the reference venv (anthropic 0.125.0 when written).
func TestSDKConformance(t *testing.T) {
	models := []struct {
		name string
		edit func(*llm.Config)
	}{
		{"anthropic/claude-sonnet-4-5", nil},
		{"anthropic/claude-3-5-haiku-20241022", func(c *llm.Config) { c.Temperature, c.TopP, c.TopK = new(0.2), new(0.9), new(40.0) }},
		{"anthropic/claude-opus-4-6", func(c *llm.Config) { c.ReasoningEffort = "high" }},
	}
	var cases []llmtest.SDKCase
	for _, m := range models {
		for _, shape := range llmtest.Shapes() {
			for _, stream := range []bool{false, true} {
				srv := llmtest.NewAnthropic(t, llmtest.Reply{Text: "ok"})
				var opts *llm.CallOptions
				if stream {
					opts = &llm.CallOptions{OnDelta: func(llm.Delta) error { return nil }}
				}
				if _, err := newLLM(t, srv, m.name, m.edit).Completion(context.Background(), shape.Messages, []llm.ToolSpec{terminal}, opts); err != nil {
					t.Fatalf("%s %s: %v", m.name, shape.Name, err)
				}
				cases = append(cases, llmtest.SDKCase{Name: fmt.Sprintf("%s/%s/stream=%v", m.name, shape.Name, stream), Body: srv.LastRequest().RawBody})
			}
		}
	}
	// The validator must be able to refuse: a tool role, and an unknown
	// key in a content block.
	bad := []llmtest.SDKCase{
		{Name: "bad: tool role", Body: json.RawMessage(`{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"tool","content":"x"}]}`)},
		{Name: "bad: unknown key", Body: json.RawMessage(`{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"hi","name":"x"}]}]}`)},
	}
	got := llmtest.ValidateWithSDK(t, "anthropic", append(cases, bad...))
	for _, c := range bad {
		if len(got[c.Name]) == 0 {
			t.Errorf("%s: accepted, want refused", c.Name)
		}
	}
	for _, c := range cases {
		if errs := got[c.Name]; len(errs) > 0 {
			t.Errorf("%s: the SDK's request types refuse the request:\n%s\n%s", c.Name, strings.Join(errs, "\n"), c.Body)
		}
	}
}
