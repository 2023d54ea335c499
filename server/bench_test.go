package server_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server"
)

// BenchmarkAgentSteps runs conversations of think steps against a scripted
// model over HTTP and reports agent steps per second across them.
func BenchmarkAgentSteps(b *testing.B) {
	for _, convs := range []int{1, 20} {
		b.Run(fmt.Sprintf("conversations=%d", convs), func(b *testing.B) {
			const steps = 40
			var replies []llmtest.Reply
			for range b.N * convs {
				for range steps {
					replies = append(replies, llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "think", Arguments: `{"thought":"hmm"}`}}})
				}
				replies = append(replies, llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}})
			}
			model := llmtest.NewChat(b, replies...)
			ts := newTestServer(b, &server.Options{MaxConcurrentRuns: 100})
			b.ResetTimer()
			for range b.N {
				var wg sync.WaitGroup
				for range convs {
					wg.Go(func() {
						body := ts.startBody(model, map[string]any{
							"initial_message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "think"}}, "run": true},
							"max_iterations":  1000, "stuck_detection": false,
						})
						var info map[string]any
						ts.must(201, "POST", "/api/conversations", body, &info)
						ts.waitStatus(info["id"].(string), "finished", "error")
					})
				}
				wg.Wait()
			}
			b.ReportMetric(float64(b.N*convs*(steps+1))/b.Elapsed().Seconds(), "steps/s")
		})
	}
}

// BenchmarkShutdown measures Close of a server holding 100 idle
// conversations, each with the shell of one terminal command: the
// graceful shutdown of `gohands serve`.
func BenchmarkShutdown(b *testing.B) {
	const convs = 100
	for range b.N {
		b.StopTimer()
		var replies []llmtest.Reply
		for range convs {
			replies = append(replies,
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"echo hi"}`}}},
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}})
		}
		model := llmtest.NewChat(b, replies...)
		ts := newTestServer(b, &server.Options{MaxConcurrentRuns: convs})
		for range convs {
			body := ts.startBody(model, map[string]any{
				"initial_message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "go"}}, "run": true},
			})
			var info map[string]any
			ts.must(201, "POST", "/api/conversations", body, &info)
			ts.waitStatus(info["id"].(string), "finished")
		}
		b.StartTimer()
		if err := ts.srv.Close(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
