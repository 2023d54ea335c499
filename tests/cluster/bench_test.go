package cluster_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/pgtest"
	"github.com/gohands/gohands/llm/llmtest"
)

// benchPlaybook scripts "#think" conversations of think steps then
// finish, with an instant model (the agent's and the servers' work is
// what is timed), and "#slow" conversations of slow terminal steps that
// are still running when a node dies.
func benchPlaybook(b *testing.B, think int) *llmtest.Playbook {
	thinks := make([]llmtest.Reply, 0, think+1)
	for i := range think {
		thinks = append(thinks, llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{Name: "think", Arguments: llmtest.Args(map[string]string{"thought": fmt.Sprintf("step %d", i)})}}})
	}
	thinks = append(thinks, llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}})
	var slow []llmtest.Reply
	for i := range 200 {
		slow = append(slow, llmtest.Reply{Delay: 100 * time.Millisecond, ToolCalls: []llmtest.ToolCall{{Name: "terminal",
			Arguments: llmtest.Args(map[string]string{"command": fmt.Sprintf("echo slow-%d >> steps.log", i)})}}})
	}
	p, err := llmtest.NewPlaybook(
		llmtest.Rule{Name: "title", System: "(?i)title", Replies: []llmtest.Reply{{Text: "Bench"}}, Loop: true},
		llmtest.Rule{Name: "think", FirstUser: "^#think", Replies: thinks},
		llmtest.Rule{Name: "slow", FirstUser: "^#slow", Replies: slow},
	)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// benchCluster starts n nodes on a fresh database.
func benchCluster(b *testing.B, n int) *cluster {
	pgtest.Require(b, pg)
	dsn := pg.NewDatabase(b)
	cl := &cluster{hc: &http.Client{Timeout: 30 * time.Second}}
	for i := range n {
		cl.nodes = append(cl.nodes, startNode(b, dsn, i))
	}
	return cl
}

// BenchmarkClusterSteps runs conversations of think steps through a
// client that talks to random nodes, on one node and on three sharing
// PostgreSQL, and reports agent steps per second from the first message
// to the last conversation finished. All nodes run on this machine, so
// three nodes share its cores: the figure shows what coordination costs
// (leases, forwarding, the shared store) more than what more machines
// would add. Each sizes its own work: use -benchtime 1x.
func BenchmarkClusterSteps(b *testing.B) {
	const convs, steps = 30, 20
	for _, nodes := range []int{1, 3} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			model := llmtest.NewResponder(b, benchPlaybook(b, steps).Respond, &llmtest.ResponderOptions{NoRecord: true})
			cl := benchCluster(b, nodes)
			ctx, cancel := context.WithTimeout(b.Context(), 20*time.Minute)
			defer cancel()
			var elapsed time.Duration
			for range b.N {
				ids := make([]string, convs)
				for i := range convs {
					dir := filepath.Join(b.TempDir(), "w")
					os.MkdirAll(dir, 0o755)
					id, err := cl.create(ctx, model.URL, dir)
					if err != nil {
						b.Fatal(err)
					}
					ids[i] = id
				}
				start := time.Now()
				var g errgroup.Group
				for _, id := range ids {
					g.Go(func() error {
						if err := cl.send(ctx, id, "#think"); err != nil {
							return err
						}
						return cl.waitStatus(ctx, id, "finished", 500*time.Millisecond)
					})
				}
				if err := g.Wait(); err != nil {
					b.Fatal(err)
				}
				// The end is the last event's time, so that the client's
				// slow polling neither loads the nodes nor counts.
				var end time.Time
				for _, id := range ids {
					t, err := cl.lastEventTime(ctx, id)
					if err != nil {
						b.Fatal(err)
					}
					if t.After(end) {
						end = t
					}
				}
				elapsed += end.Sub(start)
			}
			b.ReportMetric(float64(b.N*convs*(steps+1))/elapsed.Seconds(), "steps/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// lastEventTime returns the time of the conversation's last event.
func (c *cluster) lastEventTime(ctx context.Context, id string) (time.Time, error) {
	var page struct {
		Items []struct {
			Timestamp string `json:"timestamp"`
		} `json:"items"`
	}
	if err := c.do(ctx, "GET", "/api/conversations/"+id+"/events/search?sort_order=TIMESTAMP_DESC&limit=1", nil, &page); err != nil {
		return time.Time{}, err
	}
	if len(page.Items) == 0 {
		return time.Time{}, fmt.Errorf("conversation %s has no events", id)
	}
	return parseTime(page.Items[0].Timestamp)
}

// parseTime parses an event timestamp (local time, see event.FormatTime).
func parseTime(ts string) (time.Time, error) {
	return time.ParseInLocation("2006-01-02T15:04:05.999999", ts, time.Local)
}

// BenchmarkFailover runs conversations of slow steps on one node of
// three, SIGKILLs that node, and reports the time from the kill to each
// conversation's next action on a live node (the timestamp of its first
// ActionEvent after the kill): mean and max over the conversations. The
// nodes run with --lease 2s; a conversation is taken over once its lease
// has expired, by the first request that needs it or by a sweeper
// (every lease/2), so failover is bounded by about 1.5 leases.
func BenchmarkFailover(b *testing.B) {
	const convs = 10
	model := llmtest.NewResponder(b, benchPlaybook(b, 0).Respond, &llmtest.ResponderOptions{NoRecord: true})
	var all []time.Duration
	for range b.N {
		cl := benchCluster(b, 3)
		ctx, cancel := context.WithTimeout(b.Context(), 10*time.Minute)
		// The conversations are created on node 0, which holds them.
		victim := cl.nodes[0]
		on0 := &cluster{nodes: []*node{victim}, hc: cl.hc}
		ids := make([]string, convs)
		dirs := make([]string, convs)
		for i := range convs {
			dirs[i] = filepath.Join(b.TempDir(), "w")
			os.MkdirAll(dirs[i], 0o755)
			id, err := on0.create(ctx, model.URL, dirs[i])
			if err != nil {
				b.Fatal(err)
			}
			ids[i] = id
			if err := on0.send(ctx, id, "#slow"); err != nil {
				b.Fatal(err)
			}
		}
		// Every conversation has run a few steps.
		for _, d := range dirs {
			for {
				data, _ := os.ReadFile(filepath.Join(d, "steps.log"))
				if strings.Count(string(data), "\n") >= 3 {
					break
				}
				if ctx.Err() != nil {
					b.Fatal("the conversations did not start")
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		victim.dead.Store(true)
		killed := time.Now()
		victim.cmd.Process.Kill()
		victim.cmd.Wait()

		var g errgroup.Group
		times := make([]time.Duration, convs)
		for i, id := range ids {
			g.Go(func() error {
				q := url.Values{"kind": {"ActionEvent"}, "timestamp__gte": {event.FormatTime(killed)}, "limit": {"1"}}
				for {
					var page struct {
						Items []struct {
							Timestamp string `json:"timestamp"`
						} `json:"items"`
					}
					if err := cl.do(ctx, "GET", "/api/conversations/"+id+"/events/search?"+q.Encode(), nil, &page); err != nil {
						return err
					}
					if len(page.Items) > 0 {
						t, err := parseTime(page.Items[0].Timestamp)
						if err != nil {
							return err
						}
						times[i] = t.Sub(killed)
						return nil
					}
					select {
					case <-ctx.Done():
						return fmt.Errorf("conversation %s: no action after the kill", id)
					case <-time.After(50 * time.Millisecond):
					}
				}
			})
		}
		if err := g.Wait(); err != nil {
			b.Fatal(err)
		}
		all = append(all, times...)
		cancel()
	}
	var sum time.Duration
	for _, d := range all {
		sum += d
	}
	b.ReportMetric(float64(sum.Milliseconds())/float64(len(all)), "failover-ms")
	b.ReportMetric(float64(slices.Max(all).Milliseconds()), "max-failover-ms")
	b.ReportMetric(0, "ns/op")
}
