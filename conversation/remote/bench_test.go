package remote_test

import (
	"context"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/remote"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
)

// BenchmarkRoundTrip is the latency of one scripted step (a message, a
// run, the model's reply, finished) through a conversation in this
// process and through a remote conversation on gohands' agent server over
// loopback (in this process, so the server's work is counted too). The
// reference's client and server are not measured here.
func BenchmarkRoundTrip(b *testing.B) {
	reply := func(llmtest.Request) (llmtest.Reply, error) { return llmtest.Reply{Text: "ok"}, nil }
	step := func(b *testing.B, c conversation.Conversation) {
		ctx := context.Background()
		for b.Loop() {
			if err := c.SendMessage(ctx, event.UserMessage("hi")); err != nil {
				b.Fatal(err)
			}
			if err := c.Run(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("local", func(b *testing.B) {
		model := llmtest.NewResponder(b, reply, &llmtest.ResponderOptions{NoRecord: true})
		c, err := conversation.New(context.Background(), scriptedAgent(model.URL), b.TempDir(), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		step(b, c)
	})
	b.Run("remote", func(b *testing.B) {
		ts := startServerTB(b)
		model := llmtest.NewResponder(b, reply, &llmtest.ResponderOptions{NoRecord: true})
		c, err := remote.New(context.Background(), scriptedAgent(model.URL), ts.direct(), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		step(b, c)
	})
}
