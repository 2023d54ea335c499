package providers_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	_ "github.com/gohands/gohands/llm/providers"
	"github.com/gohands/gohands/secret"
)

// TestSwitchByModelString: the same call reaches each wire API with only
// the model string changed.
func TestSwitchByModelString(t *testing.T) {
	for _, tc := range []struct {
		model string
		wire  llmtest.Wire
	}{
		{"openai/gpt-4o", llmtest.WireChat},
		{"openai/gpt-5-mini", llmtest.WireResponses},
		{"anthropic/claude-sonnet-4-5", llmtest.WireAnthropic},
		{"gemini/gemini-2.5-flash", llmtest.WireGemini},
		{"bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0", llmtest.WireBedrock},
		{"bedrock/converse/amazon.nova-pro-v1:0", llmtest.WireBedrock},
		{"openrouter/openai/gpt-4o", llmtest.WireChat},
		{"deepseek/deepseek-chat", llmtest.WireChat},
		{"groq/llama-3.3-70b-versatile", llmtest.WireChat},
		{"mistral/devstral-medium-2507", llmtest.WireChat},
		{"together_ai/Qwen/Qwen3-Coder", llmtest.WireChat},
		{"xai/grok-4", llmtest.WireChat},
		{"ollama/qwen3", llmtest.WireChat},
		{"litellm_proxy/claude-sonnet-4-5", llmtest.WireChat},
	} {
		t.Run(tc.model, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Reply{Text: "hello from " + string(tc.wire)})
			cfg := llm.DefaultConfig(tc.model)
			cfg.APIKey = secret.New("k")
			cfg.BaseURL = srv.URL
			if tc.wire == llmtest.WireChat || tc.wire == llmtest.WireResponses {
				cfg.BaseURL += "/v1"
			}
			l, err := llm.New(cfg, &llm.Options{HTTPClient: srv.Client()})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := l.Completion(context.Background(), []event.Message{event.UserMessage("hi")}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := event.TextOf(resp.Message.Content); !strings.HasSuffix(got, string(tc.wire)) {
				t.Errorf("reply %q", got)
			}
			if w := srv.LastRequest().Wire; w != tc.wire {
				t.Errorf("served as %s, want %s", w, tc.wire)
			}
		})
	}
}
