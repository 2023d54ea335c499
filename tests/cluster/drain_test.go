package cluster_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gohands/gohands/internal/pgtest"
	"github.com/gohands/gohands/llm/llmtest"
)

// TestDrainReleasesLeases: a node stopped by SIGTERM while one of its
// conversations runs pauses it, releases its lease and exits 0; another
// node then runs the conversation at once, though the lease (10 minutes)
// is far from expired.
func TestDrainReleasesLeases(t *testing.T) {
	pgtest.Require(t, pg)
	dsn := pg.NewDatabase(t)
	held := make(chan struct{}, 1)
	gate := make(chan struct{})
	model := llmtest.NewResponder(t, func(llmtest.Request) (llmtest.Reply, error) {
		select {
		case <-gate:
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}}, nil
		default:
		}
		select {
		case held <- struct{}{}:
		default:
		}
		<-gate // a model call in flight when the node is told to stop
		return llmtest.Reply{Text: "late"}, nil
	}, nil)
	a := startNode(t, dsn, 0, "--lease", "10m")
	b := startNode(t, dsn, 1, "--lease", "10m")
	onA := &cluster{nodes: []*node{a}, hc: &http.Client{Timeout: 30 * time.Second}}
	onB := &cluster{nodes: []*node{b}, hc: &http.Client{Timeout: 30 * time.Second}}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute) // a hang guard, far below the lease
	defer cancel()

	id, err := onA.create(ctx, model.URL, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := onA.send(ctx, id, "go"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-ctx.Done():
		t.Fatal("no model call on node A")
	}
	start := time.Now()
	a.cmd.Process.Signal(unix.SIGTERM)
	if err := a.cmd.Wait(); err != nil {
		t.Errorf("node A after SIGTERM: %v, want exit 0", err)
	}
	a.dead.Store(true)
	t.Logf("node A drained in %s", time.Since(start).Round(time.Millisecond))
	close(gate)

	if err := onB.send(ctx, id, "go on"); err != nil {
		t.Fatalf("node B could not take the conversation over (was its lease released?): %v", err)
	}
	if err := onB.waitStatus(ctx, id, "finished", 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	t.Logf("node B finished it %s after the SIGTERM", time.Since(start).Round(time.Millisecond))
}
