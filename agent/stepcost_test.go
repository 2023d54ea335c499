package agent_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/secret"
)

// BenchmarkStepHistory measures the agent's own CPU time per step with
// 10, 100 and 1,000 steps of history before it: the real Chat
// Completions provider over HTTP, events persisted to files, no
// condenser (so the history stays whole). The model is another process
// (this test binary as a child, see runModelServer) that discards the
// request and answers a canned think call, so the CPU counted is the
// agent's alone: building, encoding and sending the request, decoding the
// reply, running the tool, persisting. One op is one step; the history is
// built before the timer starts.
//
//	go test -run '^$' -bench BenchmarkStepHistory -benchtime 50x ./agent/
func BenchmarkStepHistory(b *testing.B) {
	for _, history := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("history=%d", history), func(b *testing.B) {
			model := startModelServer(b)
			cfg := llm.DefaultConfig("openai/bench")
			cfg.BaseURL = model.url + "/v1"
			cfg.APIKey = secret.New("bench")
			a := agent.New(cfg, nil, nil)
			c, err := conversation.New(ctx, a, b.TempDir(), &conversation.LocalOptions{
				Backend: filestore.NewBackend(benchDir(b), nil), MaxIterations: history + b.N + 10, DisableStuckDetection: true,
			})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			run := func(steps int) {
				model.stopAfter(b, steps+1)
				if err := c.SendMessage(ctx, event.UserMessage("Go on.")); err != nil {
					b.Fatal(err)
				}
				if err := c.Run(ctx); err != nil {
					b.Fatal(err)
				}
				if c.Status() != conversation.StatusFinished {
					b.Fatalf("status %s", c.Status())
				}
			}
			run(history)
			b.ReportAllocs()
			b.ResetTimer()
			c0 := cpuTime()
			run(b.N)
			cpu := cpuTime() - c0
			b.StopTimer()
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/step")
		})
	}
}

// modelServer is runModelServer running in a child process.
type modelServer struct{ url string }

// startModelServer starts this test binary as a model server (see
// runModelServer) and stops it when b ends.
func startModelServer(b *testing.B) modelServer {
	b.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"=model")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		in.Close() // the child exits when its stdin closes
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatalf("model server: %v", err)
	}
	return modelServer{url: strings.TrimSpace(line)}
}

// stopAfter makes the n-th request from now answer "Paused." with no tool
// call, which finishes the run.
func (m modelServer) stopAfter(b *testing.B, n int) {
	resp, err := http.Post(fmt.Sprintf("%s/stop-after?n=%d", m.url, n), "", nil)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("stop-after: %s", resp.Status)
	}
}

// runModelServer is the child of startModelServer: a Chat Completions
// server on loopback that discards each request and answers a think call
// (or, when told by /stop-after, a plain message). It prints its URL and
// runs until its standard input closes.
func runModelServer() {
	var calls, stopAt atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("POST /stop-after", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.URL.Query().Get("n"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		stopAt.Store(calls.Load() + int64(n))
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		n := calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if n == stopAt.Load() {
			fmt.Fprintf(w, `{"id":"c%d","object":"chat.completion","created":1,"model":"bench","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Paused."}}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`, n)
			return
		}
		fmt.Fprintf(w, `{"id":"c%d","object":"chat.completion","created":1,"model":"bench","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_%d","type":"function","function":{"name":"think","arguments":"{\"thought\":\"step %d: look at the next file and the one after it\"}"}}]}}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`, n, n, n)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	go http.Serve(ln, mux)
	fmt.Printf("http://%s\n", ln.Addr())
	io.Copy(io.Discard, os.Stdin)
}

// BenchmarkResume1000 resumes a stored conversation of ~1,000 events (500
// think steps) and measures until its first model request arrives: open
// the store, rebuild the agent's view, project and encode the history,
// send. Each op resumes the same conversation (which grows by 3 events).
// first-request-ns is the median.
//
//	go test -run '^$' -bench BenchmarkResume1000 -benchtime 20x ./agent/
func BenchmarkResume1000(b *testing.B) {
	var calls atomic.Int64
	arrived := make(chan time.Time, 1)
	var steps atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case arrived <- time.Now():
		default:
		}
		n := calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if steps.Add(-1) < 0 {
			fmt.Fprintf(w, `{"id":"c%d","object":"chat.completion","created":1,"model":"bench","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Paused."}}]}`, n)
			return
		}
		fmt.Fprintf(w, `{"id":"c%d","object":"chat.completion","created":1,"model":"bench","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_%d","type":"function","function":{"name":"think","arguments":"{\"thought\":\"step %d: look at the next file and the one after it\"}"}}]}}]}`, n, n, n)
	}))
	defer srv.Close()
	cfg := llm.DefaultConfig("openai/bench")
	cfg.BaseURL = srv.URL + "/v1"
	cfg.APIKey = secret.New("bench")
	base, work := b.TempDir(), b.TempDir()
	open := func(id string) *conversation.LocalConversation {
		c, err := conversation.New(ctx, agent.New(cfg, nil, nil), work, &conversation.LocalOptions{
			ID: id, Backend: filestore.NewBackend(base, nil), MaxIterations: 600, DisableStuckDetection: true,
		})
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	say := func(c *conversation.LocalConversation) {
		if err := c.SendMessage(ctx, event.UserMessage("Go on.")); err != nil {
			b.Fatal(err)
		}
		if err := c.Run(ctx); err != nil {
			b.Fatal(err)
		}
	}
	steps.Store(499)
	c := open("")
	id := c.ID()
	say(c)
	if n := c.State().Events().Len(); n < 1000 {
		b.Fatalf("%d events", n)
	}
	c.Close()
	<-arrived
	var firsts []time.Duration
	var cpu time.Duration
	b.ResetTimer()
	for range b.N {
		c0 := cpuTime()
		start := time.Now()
		c := open(id)
		say(c)
		firsts = append(firsts, (<-arrived).Sub(start))
		cpu += cpuTime() - c0
		b.StopTimer()
		c.Close()
		b.StartTimer()
	}
	slices.Sort(firsts)
	b.ReportMetric(float64(firsts[len(firsts)/2].Nanoseconds()), "first-request-ns")
	// Includes the rest of the resumed run (one reply, the finish).
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}
