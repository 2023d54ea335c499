package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"golang.org/x/sys/unix"

	"github.com/gohands/gohands/internal/pgtest"
	"github.com/gohands/gohands/llm/llmtest"
)

// leasesHeld scrapes a node's /metrics with Prometheus's parser and
// returns gohands_cluster_leases_held by node label, and its append
// count on the postgres store.
func leasesHeld(ctx context.Context, hc *http.Client, n *node) (map[string]float64, float64, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", n.url+"/metrics", nil)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		return nil, 0, fmt.Errorf("/metrics: %d %v %s", resp.StatusCode, err, body)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return nil, 0, fmt.Errorf("/metrics does not parse: %w", err)
	}
	held := map[string]float64{}
	for _, m := range fams["gohands_cluster_leases_held"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "node" {
				held[l.GetValue()] = m.GetGauge().GetValue()
			}
		}
	}
	var appends float64
	for _, m := range fams["gohands_event_store_append_duration_seconds"].GetMetric() {
		if len(m.GetLabel()) == 1 && m.GetLabel()[0].GetValue() == "postgres" {
			appends = float64(m.GetHistogram().GetSampleCount())
		}
	}
	return held, appends, nil
}

// TestLeasesHeldMetric: two nodes on PostgreSQL each report on /metrics
// the conversations whose lease they hold, labelled by their node id, as
// the leases move: two conversations held on A and one on B; A killed,
// its clients reconnect to B, which then holds all three; the clients
// gone, B releases the idle conversations and holds none. Node B's
// PostgreSQL appends are measured too.
func TestLeasesHeldMetric(t *testing.T) {
	pgtest.Require(t, pg)
	dsn := pg.NewDatabase(t)
	model := llmtest.NewResponder(t, func(llmtest.Request) (llmtest.Reply, error) {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}}, nil
	}, nil)
	// Idle conversations are released after a second, so that the last
	// step does not wait for the default.
	t.Setenv("OH_CONVERSATION_IDLE_TTL_SECONDS", "1")
	a := startNode(t, dsn, 0)
	b := startNode(t, dsn, 1)
	hc := &http.Client{Timeout: 30 * time.Second}
	onA := &cluster{nodes: []*node{a}, hc: hc}
	onB := &cluster{nodes: []*node{b}, hc: hc}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	// A client on a conversation's socket keeps it loaded, so its lease
	// held, on the node it connected to.
	connect := func(n *node, id string) *websocket.Conn {
		t.Helper()
		ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(n.url, "http")+"/sockets/events/"+id, nil)
		if err != nil {
			t.Fatal(err)
		}
		ws.SetReadLimit(1 << 24)
		if _, _, err := ws.Read(ctx); err != nil { // the state snapshot: loaded, subscribed
			t.Fatal(err)
		}
		return ws
	}
	var ids []string
	var sockets []*websocket.Conn
	for i, cl := range []*cluster{onA, onA, onB} {
		id, err := cl.create(ctx, model.URL, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		sockets = append(sockets, connect(cl.nodes[0], id))
		if i == 2 {
			// B's conversation runs, so B appends to PostgreSQL.
			if err := cl.send(ctx, id, "go"); err != nil {
				t.Fatal(err)
			}
			if err := cl.waitStatus(ctx, id, "finished", 20*time.Millisecond); err != nil {
				t.Fatal(err)
			}
		}
	}
	// want polls until each node reports holding what the test expects;
	// a node's series names that node only.
	want := func(step string, n *node, held float64) float64 {
		t.Helper()
		var last map[string]float64
		for {
			got, appends, err := leasesHeld(ctx, hc, n)
			if err != nil {
				t.Fatalf("%s: %v", step, err)
			}
			if len(got) == 1 && got[n.url] == held {
				return appends
			}
			last = got
			select {
			case <-ctx.Done():
				t.Fatalf("%s: node %s reports leases held %v, want {%s: %v}", step, n.url, last, n.url, held)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	want("two on A", a, 2)
	if appends := want("one on B", b, 1); appends < 5 {
		t.Errorf("node B measured %v appends to PostgreSQL; its conversation was created and ran", appends)
	}

	// A dies holding two leases; once they expire its clients reconnect
	// to B, which loads (takes over) the conversations.
	a.dead.Store(true)
	a.cmd.Process.Signal(unix.SIGKILL)
	a.cmd.Wait()
	for _, ws := range sockets[:2] {
		ws.CloseNow()
	}
	for _, id := range ids[:2] {
		for {
			ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(b.url, "http")+"/sockets/events/"+id, nil)
			if err == nil {
				ws.SetReadLimit(1 << 24)
				if _, _, err = ws.Read(ctx); err == nil {
					sockets = append(sockets, ws)
					break
				}
				ws.CloseNow()
			}
			if ctx.Err() != nil {
				t.Fatalf("reconnecting to %s on B: %v", id, err)
			}
			time.Sleep(100 * time.Millisecond) // A's lease has not expired yet: B answers try later
		}
	}
	want("all three on B after A died", b, 3)

	// The clients gone, B releases the idle conversations and their leases.
	for _, ws := range sockets {
		ws.Close(websocket.StatusNormalClosure, "")
	}
	want("none once idle", b, 0)
}
