package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gohands/gohands/internal/pgtest"
)

// clusterLease is the nodes' lease: far longer than the reads take, so
// that every read after the kill is one node B answers while node A's
// leases still hold.
const clusterLease = 2 * time.Minute

// cluster is the cluster job, gohands only (the reference has no
// cluster): two gohands serve nodes on one PostgreSQL database (a
// throw-away server, as tests/cluster starts); c.ClusterConversations
// conversations run to their finish on node A; node A is killed
// (SIGKILL) while it holds their leases; then node B is read: each
// conversation's record, events and event count, and the conversation
// search, c.ClusterRounds times. Rows: the reads answered (200, and at
// least the event count node A answered), their latency p50 and p99, and
// the time from the kill to node B's first answer.
func (r *runner) cluster(ctx context.Context, t *table) error {
	c := r.c
	n := max(c.ClusterConversations, 1)
	pg, err := pgtest.Start()
	if err != nil {
		return err
	}
	defer pg.Stop()
	lease := []string{"--store", pg.DSN(), "--lease", clusterLease.String()}
	var nodes [2]*serverProc
	for i := range nodes {
		dir, err := r.dir("node")
		if err != nil {
			return err
		}
		if nodes[i], err = r.startServer(ctx, "gohands", dir, n, lease...); err != nil {
			return fmt.Errorf("node %c: %w", 'A'+i, err)
		}
		defer nodes[i].stop()
	}
	a, b := nodes[0], nodes[1]

	ids := make([]string, n)
	for i := range ids {
		task := r.task("cluster")
		r.model.expect(task, "think", 2)
		ws, err := r.dir("ws")
		if err != nil {
			return err
		}
		if ids[i], err = createConversation(ctx, a.url, r.modelURL, ws, task); err != nil {
			return fmt.Errorf("node A: %w", err)
		}
	}
	for {
		var finished int
		if err := call(ctx, "GET", a.url+"/api/conversations/count?status=finished", nil, &finished); err != nil {
			return fmt.Errorf("node A: %w", err)
		}
		if finished == n {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	counts := make([]int, n) // events per conversation, as node A counts them
	for i, id := range ids {
		if err := call(ctx, "GET", a.url+"/api/conversations/"+id+"/events/count", nil, &counts[i]); err != nil {
			return fmt.Errorf("node A: %w", err)
		}
	}

	unix.Kill(-a.pid, unix.SIGKILL)
	a.stop() // waits for the exit
	killed := time.Now()
	var firstAnswer time.Duration
	var lat []float64
	reads, failed := 0, 0
	read := func(path string, want *int) {
		t0 := time.Now()
		var got int
		var out any
		if want != nil {
			out = &got
		}
		err := call(ctx, "GET", b.url+path, nil, out)
		d := time.Since(t0)
		reads++
		// At least what node A counted: nothing it stored is lost (it
		// may have stored more, such as a title's, after it counted).
		if err == nil && want != nil && got < *want {
			err = fmt.Errorf("%d events, node A counted %d", got, *want)
		}
		if err != nil {
			failed++
			fmt.Fprintf(c.Log, "cluster: node B: GET %s: %v\n", path, err)
			return
		}
		if firstAnswer == 0 {
			firstAnswer = time.Since(killed)
		}
		lat = append(lat, float64(d)/1e6)
	}
	for range max(c.ClusterRounds, 1) {
		read("/api/conversations/search?limit=100", nil)
		for i, id := range ids {
			p := "/api/conversations/" + id
			read(p, nil)
			read(p+"/events/search?limit=100", nil)
			read(p+"/events/count", &counts[i])
		}
	}
	if since := time.Since(killed); since >= clusterLease {
		return fmt.Errorf("the reads took %s, longer than the lease (%s): node B may have taken the conversations over", since, clusterLease)
	}
	slices.Sort(lat)
	row := fmt.Sprintf("cluster: 2 nodes on PostgreSQL, node A killed (SIGKILL), reads of its %d finished conversations through node B", n)
	t.add(row+": answered (%)", "gohands", 100*float64(reads-failed)/float64(reads))
	t.add(row+": latency p50 (ms)", "gohands", pct(lat, 0.50))
	t.add(row+": latency p99 (ms)", "gohands", pct(lat, 0.99))
	t.add(row+": from the kill to the first answer (ms)", "gohands", float64(firstAnswer)/1e6)
	t.note("cluster", fmt.Sprintf("gohands only (the reference has no cluster); %d reads in %d rounds, node A's leases %s", reads, max(c.ClusterRounds, 1), clusterLease))
	fmt.Fprintf(c.Log, "cluster: %d of %d reads through node B failed\n", failed, reads)
	return nil
}
