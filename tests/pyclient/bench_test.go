package pyclient_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gohands/gohands/internal/proctree"
	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
)

// The server benchmarks measure `gohands serve` and the reference's
// openhands-agent-server with the same Go client (REST + WebSocket) and
// the same zero-latency scripted model, side by side: sub-benchmark
// gohands and reference. They report their figures as custom metrics and
// are meant for scripts/bench.sh with -benchtime 1x; each sizes its own
// work (the reference is slower, so it gets less).

// benchServer starts the named server with extra environment.
func benchServer(b *testing.B, name string, interval time.Duration, env ...string) *server {
	b.Helper()
	switch name {
	case "gohands":
		bin := gohandsBinary(b)
		port := freePort(b)
		return launch(b, name, []string{bin, "serve", "--host", "127.0.0.1", "--port", strconv.Itoa(port)},
			append(append(os.Environ(), "OH_SESSION_API_KEYS_0="+apiKey), env...), port, interval, time.Minute)
	case "reference":
		py := testenv.ReferencePython(b)
		port := freePort(b)
		return launch(b, name, []string{py, "-m", "openhands.agent_server", "--host", "127.0.0.1", "--port", strconv.Itoa(port)},
			referenceEnv(b, append([]string{"OH_SESSION_API_KEYS_0=" + apiKey}, env...)...), port, interval, 3*time.Minute)
	}
	b.Fatalf("no server %q", name)
	return nil
}

var benchServers = []string{"gohands", "reference"}

// settledRSS waits for the server to go quiet and returns its tree's RSS.
func settledRSS(b *testing.B, s *server) int64 {
	b.Helper()
	time.Sleep(2 * time.Second)
	return proctree.RSS(s.Pid)
}

// BenchmarkServeColdStart starts the server and polls /health every
// millisecond until it answers 200; it also reports the idle server's RSS.
func BenchmarkServeColdStart(b *testing.B) {
	for _, name := range benchServers {
		b.Run(name, func(b *testing.B) {
			var starts []time.Duration
			var rss int64
			for range b.N {
				s := benchServer(b, name, time.Millisecond)
				starts = append(starts, s.healthy.Sub(s.started))
				rss = settledRSS(b, s)
				if err := s.stop(); err != nil {
					b.Error(err)
				}
			}
			slices.Sort(starts)
			b.ReportMetric(float64(starts[len(starts)/2].Microseconds())/1000, "ms-to-health")
			b.ReportMetric(float64(rss)/(1<<20), "idle-MB")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// stepsPlaybook scripts conversations of steps think steps each, then
// finish; the thoughts differ so no stuck detector sees a loop.
func stepsPlaybook(b *testing.B, steps int) *llmtest.Playbook {
	b.Helper()
	replies := make([]llmtest.Reply, 0, steps+1)
	for i := range steps {
		replies = append(replies, llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{Name: "think", Arguments: llmtest.Args(map[string]string{"thought": fmt.Sprintf("step %d", i)})},
		}})
	}
	replies = append(replies, llmtest.Reply{ToolCalls: []llmtest.ToolCall{
		{Name: "finish", Arguments: `{"message":"done"}`},
	}})
	p, err := llmtest.NewPlaybook(
		llmtest.Rule{Name: "title", System: "(?i)titles|write a short title", Replies: []llmtest.Reply{{Text: "Bench"}}, Loop: true},
		llmtest.Rule{Name: "load", FirstUser: "^#load", Replies: []llmtest.Reply{
			{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"echo load-ok"}`}}},
			{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}},
		}},
		llmtest.Rule{Name: "steps", FirstUser: "^#steps", Replies: replies},
	)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// createConversations creates n conversations concurrently.
func createConversations(ctx context.Context, b *testing.B, c *apiClient, modelURL string, n int) []string {
	b.Helper()
	ids := make([]string, n)
	var g errgroup.Group
	g.SetLimit(16)
	for i := range n {
		g.Go(func() error {
			id, err := c.create(ctx, startBody(modelURL, b.TempDir()))
			ids[i] = id
			return err
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	return ids
}

// BenchmarkServeConversationRSS reports the server's resident memory per
// idle loaded conversation: created (agent and state in memory, no run
// yet) and after one run of a terminal command (its shell included).
func BenchmarkServeConversationRSS(b *testing.B) {
	sizes := map[string]int{"gohands": 200, "reference": 20}
	for _, name := range benchServers {
		b.Run(name, func(b *testing.B) {
			n := sizes[name]
			for range b.N {
				model := llmtest.NewResponder(b, stepsPlaybook(b, 0).Respond, &llmtest.ResponderOptions{NoRecord: true})
				s := benchServer(b, name, 50*time.Millisecond, fmt.Sprintf("OH_MAX_CONCURRENT_RUNS=%d", n))
				c := &apiClient{base: s.URL, http: &http.Client{}}
				ctx := b.Context()
				idle := settledRSS(b, s)
				ids := createConversations(ctx, b, c, model.URL, n)
				created := settledRSS(b, s)
				var g errgroup.Group
				g.SetLimit(16)
				for i, id := range ids {
					g.Go(func() error {
						sub, err := c.subscribe(ctx, id)
						if err != nil {
							return err
						}
						defer sub.close()
						if err := c.send(ctx, id, fmt.Sprintf("#load %d", i)); err != nil {
							return err
						}
						_, err = sub.untilFinished(ctx)
						return err
					})
				}
				if err := g.Wait(); err != nil {
					b.Fatal(err)
				}
				ran := settledRSS(b, s)
				b.ReportMetric(float64(idle)/(1<<20), "idle-MB")
				b.ReportMetric(float64(created-idle)/float64(n)/(1<<20), "MB/created-conv")
				b.ReportMetric(float64(ran-idle)/float64(n)/(1<<20), "MB/conv-after-run")
				b.ReportMetric(float64(n), "convs")
				if err := s.stop(); err != nil {
					b.Error(err)
				}
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkServeAgentSteps runs many conversations at once, each a chain
// of think steps against the zero-latency model, and reports agent steps
// per second across the server (one step = one LLM call and its action).
func BenchmarkServeAgentSteps(b *testing.B) {
	type size struct{ convs, steps int }
	sizes := map[string]size{"gohands": {50, 40}, "reference": {10, 20}}
	for _, name := range benchServers {
		b.Run(name, func(b *testing.B) {
			sz := sizes[name]
			model := llmtest.NewResponder(b, stepsPlaybook(b, sz.steps).Respond, &llmtest.ResponderOptions{NoRecord: true})
			s := benchServer(b, name, 50*time.Millisecond, fmt.Sprintf("OH_MAX_CONCURRENT_RUNS=%d", sz.convs))
			c := &apiClient{base: s.URL, http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: sz.convs}}}
			ctx := b.Context()
			var elapsed, cpu time.Duration
			for range b.N {
				ids := createConversations(ctx, b, c, model.URL, sz.convs)
				subs := make([]*subscriber, len(ids))
				for i, id := range ids {
					sub, err := c.subscribe(ctx, id)
					if err != nil {
						b.Fatal(err)
					}
					subs[i] = sub
				}
				start, cpu0 := time.Now(), proctree.CPU(s.Pid)
				var g errgroup.Group
				for i, id := range ids {
					g.Go(func() error {
						defer subs[i].close()
						if err := c.send(ctx, id, "#steps go"); err != nil {
							return err
						}
						_, err := subs[i].untilFinished(ctx)
						return err
					})
				}
				if err := g.Wait(); err != nil {
					b.Fatal(err)
				}
				elapsed += time.Since(start)
				cpu += proctree.CPU(s.Pid) - cpu0
			}
			steps := float64(b.N * sz.convs * (sz.steps + 1))
			b.ReportMetric(steps/elapsed.Seconds(), "steps/s")
			b.ReportMetric(steps/cpu.Seconds(), "steps/cpu-s")
			b.ReportMetric(float64(sz.convs), "convs")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkServeSocketFanout runs one conversation of think steps watched
// by 100 WebSocket subscribers and reports the frames per second
// delivered across them, from the run's start to the last subscriber's
// finished snapshot. The reference accepts at most 50 subscribers per
// conversation, its own included (it closes the next with 1013), so it
// gets 40.
func BenchmarkServeSocketFanout(b *testing.B) {
	stepsFor := map[string]int{"gohands": 300, "reference": 50}
	subscribersFor := map[string]int{"gohands": 100, "reference": 40}
	for _, name := range benchServers {
		b.Run(name, func(b *testing.B) {
			steps, subscribers := stepsFor[name], subscribersFor[name]
			model := llmtest.NewResponder(b, stepsPlaybook(b, steps).Respond, &llmtest.ResponderOptions{NoRecord: true})
			s := benchServer(b, name, 50*time.Millisecond)
			c := &apiClient{base: s.URL, http: &http.Client{}}
			ctx := b.Context()
			var (
				elapsed, cpu time.Duration
				frames       int
			)
			for range b.N {
				id := createConversations(ctx, b, c, model.URL, 1)[0]
				subs := make([]*subscriber, subscribers)
				for i := range subs {
					sub, err := c.subscribe(ctx, id)
					if err != nil {
						b.Fatalf("subscriber %d: %v", i, err)
					}
					subs[i] = sub
				}
				var mu sync.Mutex
				start, cpu0 := time.Now(), proctree.CPU(s.Pid)
				var g errgroup.Group
				for _, sub := range subs {
					g.Go(func() error {
						defer sub.close()
						n, err := sub.untilFinished(ctx)
						mu.Lock()
						frames += n
						mu.Unlock()
						return err
					})
				}
				if err := c.send(ctx, id, "#steps go"); err != nil {
					b.Fatal(err)
				}
				if err := g.Wait(); err != nil {
					b.Fatal(err)
				}
				elapsed += time.Since(start)
				cpu += proctree.CPU(s.Pid) - cpu0
			}
			b.ReportMetric(float64(frames)/elapsed.Seconds(), "frames/s")
			b.ReportMetric(float64(frames)/cpu.Seconds(), "frames/cpu-s")
			b.ReportMetric(float64(frames)/float64(b.N*subscribers), "frames/sub")
			b.ReportMetric(float64(subscribers), "subscribers")
			b.ReportMetric(0, "ns/op")
		})
	}
}
