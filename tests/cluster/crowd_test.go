package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/pgtest"
	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
)

// TestManyRunsTwoNodes: conversations (40; 400 with GOHANDS_FULL=1) run at
// once on two nodes sharing PostgreSQL, created, started and watched
// through random nodes, on the scripted model of playbook (steps terminal
// commands, 150 ms per reply). Every conversation finishes; each stored log
// holds every event once; every command ran exactly once.
func TestManyRunsTwoNodes(t *testing.T) {
	pgtest.Require(t, pg)
	testenv.Program(t, "bash")
	convs := 40
	if !testenv.Short() {
		convs = 400
	}
	dsn := pg.NewDatabase(t)
	model := llmtest.NewResponder(t, playbook(t).Respond, &llmtest.ResponderOptions{NoRecord: true})
	cl := &cluster{hc: &http.Client{Timeout: 30 * time.Second}}
	for i := range 2 {
		cl.nodes = append(cl.nodes, startNode(t, dsn, i))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute) // a hang guard
	defer cancel()
	work := t.TempDir()
	ids := make([]string, convs)
	dirs := make([]string, convs)
	errs := make([]error, convs)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range convs {
		dirs[i] = filepath.Join(work, fmt.Sprint(i))
		os.MkdirAll(dirs[i], 0o755)
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if ids[i], errs[i] = cl.create(ctx, model.URL, dirs[i]); errs[i] == nil {
				errs[i] = cl.send(ctx, ids[i], "#cluster task")
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids {
		if err := cl.waitStatus(ctx, id, "finished", 200*time.Millisecond); err != nil {
			t.Fatal(err)
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
		if got := strings.Fields(string(b)); len(got) != steps || bytes.Count(b, []byte("step-")) != steps {
			t.Errorf("%s: commands run: %q, want step-0 … step-%d once each", id, got, steps-1)
		} else {
			for k, l := range got {
				if l != fmt.Sprintf("step-%d", k) {
					t.Errorf("%s: command %d wrote %q", id, k, l)
				}
			}
		}
	}
	if l := cl.leaked.Load(); l != nil {
		t.Errorf("a refusal named a node's internal address: %s", l)
	}
}
