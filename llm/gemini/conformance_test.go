package gemini_test

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
// and not, to a Gemini 2.5 model with sampling parameters and a Gemini 3
// one thinking, and checks each request body against the request types of
// Google's official Python SDK, google-genai (llmtest.ValidateWithSDK):
// Google publishes no OpenAPI document of the Gemini API (its discovery
// document is not reachable from the tests, which use loopback only).
func TestSDKConformance(t *testing.T) {
	models := []struct {
		name string
		edit func(*llm.Config)
	}{
		{"gemini/gemini-2.5-pro", func(c *llm.Config) { c.Temperature, c.TopP, c.TopK = new(0.2), new(0.9), new(40.0) }},
		{"gemini/gemini-3-pro-preview", func(c *llm.Config) { c.ReasoningEffort = "high" }},
	}
	var cases []llmtest.SDKCase
	for _, m := range models {
		for _, shape := range llmtest.Shapes() {
			for _, stream := range []bool{false, true} {
				srv := llmtest.NewGemini(t, llmtest.Reply{Text: "ok"})
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
	// The validator must be able to refuse: an unknown key in a part, an
	// unknown top-level key.
	bad := []llmtest.SDKCase{
		{Name: "bad: unknown part key", Body: json.RawMessage(`{"contents":[{"role":"user","parts":[{"txt":"hi"}]}]}`)},
		{Name: "bad: unknown top-level key", Body: json.RawMessage(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"messages":[]}`)},
	}
	got := llmtest.ValidateWithSDK(t, "gemini", append(cases, bad...))
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
