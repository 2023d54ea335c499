package server_test

import (
	"bytes"
	"fmt"
	"net/http"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server"
)

// crowdModel scripts conversations named "#crowd-K": steps think steps,
// then finish, each reply after latency. It holds every conversation's
// first reply until all have asked (so that all run at once), counts the
// calls of each step (a step asked twice is a duplicated step), and
// measures the agent's own time per step: from a reply to the same
// conversation's next request.
type crowdModel struct {
	steps   int
	latency time.Duration
	all     chan struct{} // closed when every conversation has asked once

	mu       sync.Mutex
	n        int
	first    int
	calls    map[[2]int]int    // (conversation, step) -> calls
	asked    map[int]time.Time // first request of each conversation
	replied  map[int]time.Time
	overhead []time.Duration
}

var crowdTask = regexp.MustCompile(`#crowd-(\d+)`)

func (m *crowdModel) respond(r llmtest.Request) (llmtest.Reply, error) {
	now := time.Now()
	if r.Body["tools"] == nil {
		return llmtest.Reply{Text: "Crowd"}, nil // a title
	}
	sm := crowdTask.FindSubmatch(r.RawBody)
	if sm == nil {
		return llmtest.Reply{}, fmt.Errorf("no #crowd task in the request")
	}
	k, _ := strconv.Atoi(string(sm[1]))
	step := bytes.Count(r.RawBody, []byte(`"role":"tool"`))
	m.mu.Lock()
	m.calls[[2]int{k, step}]++
	if t, ok := m.replied[k]; ok {
		m.overhead = append(m.overhead, now.Sub(t))
	}
	if step == 0 {
		m.asked[k] = now
		m.first++
		if m.first == m.n {
			close(m.all)
		}
	}
	m.mu.Unlock()
	<-m.all
	time.Sleep(m.latency)
	reply := llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "think", Arguments: fmt.Sprintf(`{"thought":"step %d"}`, step)}}}
	if step >= m.steps {
		reply = llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}}
	}
	m.mu.Lock()
	m.replied[k] = time.Now()
	m.mu.Unlock()
	return reply, nil
}

// TestManyRunsAtOnce runs conversations at once on one server (50, or
// 1,000 with GOHANDS_FULL=1) on a scripted model answering each step
// after a delay (100 ms; 1 s at full size), with MaxConcurrentRuns at their
// number. While all run, one more run is refused with 429 and a
// Retry-After. Every conversation finishes; no step is asked twice; each
// log holds every step once, every id once, an observation for every
// action. It asserts no speed: the agent's own time per step (p50, p99)
// and the heap per running conversation are logged.
func TestManyRunsAtOnce(t *testing.T) {
	n, steps, latency := 50, 3, 100*time.Millisecond
	if !testenv.Short() {
		n, latency = 1000, time.Second
	}
	m := &crowdModel{steps: steps, latency: latency, n: n, all: make(chan struct{}), calls: map[[2]int]int{}, asked: map[int]time.Time{}, replied: map[int]time.Time{}}
	model := llmtest.NewResponder(t, m.respond, &llmtest.ResponderOptions{NoRecord: true})
	ts := newTestServer(t, &server.Options{MaxConcurrentRuns: n})
	var base, heap runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&base)
	start := time.Now()
	ids := make([]string, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for k := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			msg := map[string]any{"role": "user", "run": true, "content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("#crowd-%d go", k)}}}
			var info struct {
				ID string `json:"id"`
			}
			ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{"initial_message": msg, "stuck_detection": false}), &info)
			ids[k] = info.ID
		})
	}
	wg.Wait()
	// Every run holds a slot until the model's first replies go out.
	var extra struct {
		ID string `json:"id"`
	}
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, nil), &extra)
	resp, err := http.Post(ts.http.URL+"/api/conversations/"+extra.ID+"/run", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a run beyond %d at once: %d, Retry-After %q; want 429 and a Retry-After", n, resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	select {
	case <-m.all:
		runtime.GC() // the runs wait for the model: what they hold is live
		runtime.ReadMemStats(&heap)
	case <-time.After(10 * time.Minute): // a hang guard
		t.Fatalf("only %d of %d conversations asked the model", m.first, n)
	}

	for _, id := range ids {
		ts.waitStatus(id, "finished")
	}
	wall := time.Since(start)
	for _, id := range ids {
		var page struct {
			Items []struct {
				ID         string `json:"id"`
				Kind       string `json:"kind"`
				ToolCallID string `json:"tool_call_id"`
			} `json:"items"`
			Next *string `json:"next_page_id"`
		}
		ts.must(200, "GET", "/api/conversations/"+id+"/events/search?limit=100", nil, &page)
		if page.Next != nil {
			t.Fatalf("%s: more than 100 events", id)
		}
		seen := map[string]bool{}
		actions, observed := map[string]int{}, map[string]int{}
		for _, e := range page.Items {
			if seen[e.ID] {
				t.Errorf("%s: event %s twice", id, e.ID)
			}
			seen[e.ID] = true
			switch e.Kind {
			case "ActionEvent":
				actions[e.ToolCallID]++
			case "ObservationEvent":
				observed[e.ToolCallID]++
			}
		}
		if len(actions) != steps+1 {
			t.Errorf("%s: %d actions, want %d", id, len(actions), steps+1)
		}
		for call, k := range actions {
			if k != 1 || observed[call] != 1 {
				t.Errorf("%s: tool call %s: %d actions, %d observations; want 1 and 1", id, call, k, observed[call])
			}
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for key, calls := range m.calls {
		if calls != 1 {
			t.Errorf("conversation %d asked step %d %d times", key[0], key[1], calls)
		}
	}
	if len(m.calls) != n*(steps+1) {
		t.Errorf("%d steps asked, want %d", len(m.calls), n*(steps+1))
	}
	// Fairness: how long each conversation took, from its first request
	// to its last reply, slowest beside the median (no conversation
	// starves while others run).
	var took []time.Duration
	for k, t0 := range m.asked {
		took = append(took, m.replied[k].Sub(t0))
	}
	slices.Sort(took)
	slices.Sort(m.overhead)
	pct := func(q float64) time.Duration {
		if len(m.overhead) == 0 {
			return 0
		}
		return m.overhead[min(len(m.overhead)-1, int(q*float64(len(m.overhead))))]
	}
	t.Logf("%d conversations of %d steps at %s per reply: all finished in %s; each took %s (median), %s (slowest); the agent's time per step p50 %s, p99 %s (%d samples); live heap and stacks %.0f KB per running conversation",
		n, steps+1, latency, wall.Round(time.Millisecond), took[len(took)/2].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond),
		pct(0.5).Round(time.Microsecond), pct(0.99).Round(time.Microsecond), len(m.overhead),
		(float64(heap.HeapAlloc+heap.StackInuse)-float64(base.HeapAlloc+base.StackInuse))/float64(n)/1e3)
}
