package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
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

// BenchmarkSearchStored lists a page of 100 from the middle of a server
// holding stored conversations (copies of one written by the server, as
// bench/compare's startup job makes them), after reporting how long New
// took over them: a page should cost O(page), not O(stored).
func BenchmarkSearchStored(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := b.TempDir()
			tmpl := newTestServer(b, &server.Options{ConversationsPath: dir + "/tmpl"})
			var info struct {
				ID string `json:"id"`
			}
			tmpl.must(201, "POST", "/api/conversations", tmpl.startBody(llmtest.NewChat(b), nil), &info)
			if err := tmpl.srv.Close(context.Background()); err != nil {
				b.Fatal(err)
			}
			cloneStored(b, filepath.Join(dir, "tmpl", strings.ReplaceAll(info.ID, "-", "")), dir+"/convs", n)
			start := time.Now()
			ts := newTestServer(b, &server.Options{ConversationsPath: dir + "/convs"})
			startMS := float64(time.Since(start)) / 1e6
			var page struct {
				Items []json.RawMessage `json:"items"`
				Next  *string           `json:"next_page_id"`
			}
			q := "/api/conversations/search?limit=100"
			for range n / 200 { // to the middle
				ts.must(200, "GET", q, nil, &page)
				q = "/api/conversations/search?limit=100&page_id=" + *page.Next
			}
			b.ResetTimer()
			for range b.N {
				ts.must(200, "GET", q, nil, &page)
				if len(page.Items) != 100 {
					b.Fatalf("a page of %d", len(page.Items))
				}
			}
			b.ReportMetric(startMS, "start-ms")
		})
	}
}

// cloneStored writes n copies of the conversation directory tmpl under
// dir, each with an id of its own.
func cloneStored(b *testing.B, tmpl, dir string, n int) {
	hexID := filepath.Base(tmpl)
	dashed := hexID[:8] + "-" + hexID[8:12] + "-" + hexID[12:16] + "-" + hexID[16:20] + "-" + hexID[20:]
	files := map[string][]byte{}
	err := filepath.WalkDir(tmpl, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(tmpl, path)
		data, err := os.ReadFile(path)
		files[rel] = data
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		nh := fmt.Sprintf("%08x%s", i, hexID[8:])
		for rel, data := range files {
			path := filepath.Join(dir, nh, rel)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				b.Fatal(err)
			}
			s := strings.ReplaceAll(string(data), filepath.Dir(tmpl), dir)
			s = strings.ReplaceAll(strings.ReplaceAll(s, dashed, nh[:8]+dashed[8:]), hexID, nh)
			if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
}
