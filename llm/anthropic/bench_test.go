package anthropic_test

import (
	"context"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/secret"
)

// BenchmarkCompletion measures one call with two tool calls in the reply,
// over loopback HTTP to a scripted server: the provider's own cost
// (request building, encoding, decoding) plus the local round trip.
func BenchmarkCompletion(b *testing.B) {
	for _, stream := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "stream"}[stream]
		b.Run(name, func(b *testing.B) {
			srv := llmtest.NewAnthropic(b)
			cfg := llm.DefaultConfig("anthropic/claude-sonnet-4-5")
			cfg.BaseURL, cfg.APIKey, cfg.Stream = srv.URL, secret.New("k"), stream
			l, err := llm.New(cfg, nil)
			if err != nil {
				b.Fatal(err)
			}
			reply := llmtest.Reply{Reasoning: "Let me look.", Signature: "sig", Text: "Looking.", ToolCalls: []llmtest.ToolCall{
				{Name: "terminal", Arguments: `{"command":"ls -la"}`}, {Name: "terminal", Arguments: `{"command":"git status"}`},
			}}
			msgs := append(conversation(), event.Message{Role: event.RoleAssistant, Content: event.List[event.Content]{event.Text("Earlier reply.")}}, event.UserMessage("Go on."))
			opts := &llm.CallOptions{OnDelta: func(llm.Delta) error { return nil }}
			ctx := context.Background()
			for b.Loop() {
				srv.Add(reply)
				if _, err := l.Completion(ctx, msgs, []llm.ToolSpec{terminal}, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
