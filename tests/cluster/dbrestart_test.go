package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/pgtest"
	"github.com/gohands/gohands/llm/llmtest"
)

// TestDatabaseRestart stops the database while conversations run on two
// nodes and starts it again: requests meanwhile get clear errors, not
// hangs; afterwards every conversation runs to its end (a run the outage
// broke is taken over from the database as after a crash, or run again),
// with no event stored twice and no action run twice.
func TestDatabaseRestart(t *testing.T) {
	pgtest.Require(t, pg)
	const convs = 6
	dsn := pg.NewDatabase(t)
	model := llmtest.NewResponder(t, playbook(t).Respond, &llmtest.ResponderOptions{NoRecord: true})
	cl := &cluster{hc: &http.Client{Timeout: 30 * time.Second}}
	for i := range 2 {
		cl.nodes = append(cl.nodes, startNode(t, dsn, i))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	work := t.TempDir()
	ids := make([]string, convs)
	dirs := make([]string, convs)
	for i := range convs {
		dirs[i] = filepath.Join(work, fmt.Sprint(i))
		os.MkdirAll(dirs[i], 0o755)
		id, err := cl.create(ctx, model.URL, dirs[i])
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
		if err := cl.send(ctx, id, "#cluster task"); err != nil {
			t.Fatal(err)
		}
	}
	linesDone := func() int {
		n := 0
		for _, d := range dirs {
			b, _ := os.ReadFile(filepath.Join(d, "steps.log"))
			n += bytes.Count(b, []byte("\n"))
		}
		return n
	}
	for linesDone() < convs*steps/4 {
		if ctx.Err() != nil {
			t.Fatal("the conversations did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}

	pg.StopProcess()
	// While the database is down, a request is answered soon, with an
	// error status and a reason.
	for i, n := range cl.nodes {
		rctx, rcancel := context.WithTimeout(ctx, 2*time.Minute)
		req, _ := http.NewRequestWithContext(rctx, "GET", n.url+"/api/conversations/"+ids[i]+"/events/search", nil)
		resp, err := cl.hc.Do(req)
		rcancel()
		if err != nil {
			t.Errorf("node %d while the database is down: %v", i, err)
			continue
		}
		var body bytes.Buffer
		body.ReadFrom(resp.Body)
		resp.Body.Close()
		// The node holding the conversation may answer from memory;
		// another must say it cannot read the store, never "not found".
		t.Logf("node %d while the database is down: %d %.200s", i, resp.StatusCode, body.String())
		if resp.StatusCode != http.StatusOK && (resp.StatusCode < 500 || body.Len() == 0) {
			t.Errorf("node %d while the database is down: %d %q, want 200 or a 5xx with a reason", i, resp.StatusCode, body.String())
		}
	}
	time.Sleep(time.Second)
	if err := pg.Restart(); err != nil {
		t.Fatal(err)
	}

	// Every conversation ends; one stopped by the outage is run again.
	for _, id := range ids {
		for {
			var info struct {
				Status string `json:"execution_status"`
			}
			if err := cl.do(ctx, "GET", "/api/conversations/"+id, nil, &info); err != nil {
				t.Fatal(err)
			}
			if info.Status == "finished" {
				break
			}
			if info.Status == "error" || info.Status == "paused" || info.Status == "idle" {
				t.Logf("%s: %s after the outage; running it again", id, info.Status)
				if err := cl.do(ctx, "POST", "/api/conversations/"+id+"/run", nil, nil); err != nil && !strings.Contains(err.Error(), "409") {
					t.Fatal(err)
				}
			}
			select {
			case <-ctx.Done():
				t.Fatalf("conversation %s: still %s", id, info.Status)
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	for i, id := range ids {
		var page struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
		}
		if err := cl.do(ctx, "GET", "/api/conversations/"+id+"/events/search?limit=100", nil, &page); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, e := range page.Items {
			if seen[e.ID] {
				t.Errorf("%s: event %s stored twice", id, e.ID)
			}
			seen[e.ID] = true
		}
		b, _ := os.ReadFile(filepath.Join(dirs[i], "steps.log"))
		count := map[string]int{}
		for l := range strings.FieldsSeq(string(b)) {
			if count[l]++; count[l] > 1 {
				t.Errorf("%s: %s ran twice", id, l)
			}
		}
	}
}
