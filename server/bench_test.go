package server_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

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

// BenchmarkIdleMemory creates conversations as bench/compare's server row
// does (an agent with the terminal, finish and think tools, nothing run)
// and reports the live heap and stacks each idle conversation keeps: kept
// loaded (IdleTTL < 0), and released once idle (the default).
func BenchmarkIdleMemory(b *testing.B) {
	const n = 500
	model := llmtest.NewChat(b)
	for _, mode := range []string{"loaded", "released"} {
		b.Run(mode, func(b *testing.B) {
			opts := &server.Options{IdleTTL: -1}
			if mode == "released" {
				opts = nil
			}
			for range b.N {
				ts := newTestServer(b, opts)
				var before runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				ids := make([]string, 0, n)
				for range n {
					var info struct {
						ID string `json:"id"`
					}
					ts.must(201, "POST", "/api/conversations", map[string]any{
						"agent": map[string]any{
							"kind":                  "Agent",
							"llm":                   map[string]any{"model": "openai/bench", "base_url": model.URL + "/v1", "api_key": "bench", "usage_id": "agent"},
							"tools":                 []any{map[string]any{"name": "terminal", "params": map[string]any{}}},
							"include_default_tools": []any{"FinishTool", "ThinkTool"},
						},
						"workspace":      map[string]any{"kind": "LocalWorkspace", "working_dir": b.TempDir()},
						"max_iterations": 500,
					}, &info)
					ids = append(ids, info.ID)
				}
				if mode == "released" {
					for _, id := range ids {
						for server.Loaded(ts.srv, id) {
							time.Sleep(10 * time.Millisecond)
						}
					}
				}
				var after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&after)
				live := func(m *runtime.MemStats) float64 { return float64(m.HeapAlloc + m.StackInuse) }
				b.ReportMetric((live(&after)-live(&before))/n, "B/conv")
				ts.http.Close()
			}
		})
	}
}
