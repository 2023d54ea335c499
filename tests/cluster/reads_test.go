package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/pgtest"
	"github.com/gohands/gohands/llm/llmtest"
)

// TestReadsSurviveKill: node A runs two conversations on a shared
// database, one finished and one in the middle of a model call, and is
// killed (SIGKILL) while it holds both leases (a minute long). At once,
// node B answers every read of both — the record, the event search and
// count, an event, events by id, the conversation search and count — on
// the first try, with what A had stored: reads come from the database,
// not from the lease holder.
func TestReadsSurviveKill(t *testing.T) {
	pgtest.Require(t, pg)
	dsn := pg.NewDatabase(t)
	gate := make(chan struct{})
	model := llmtest.NewResponder(t, func(r llmtest.Request) (llmtest.Reply, error) {
		switch {
		case r.Body["tools"] == nil:
			return llmtest.Reply{Text: "Reads"}, nil // a title
		case !bytes.Contains(r.RawBody, []byte(`"role":"tool"`)):
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"echo one"}`}}}, nil
		case bytes.Contains(r.RawBody, []byte("#slow")):
			<-gate // in flight when node A dies
			return llmtest.Reply{Text: "late"}, nil
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}}, nil
	}, &llmtest.ResponderOptions{NoRecord: true})
	t.Cleanup(func() { close(gate) })
	const lease = time.Minute
	a := startNode(t, dsn, 0, "--lease", lease.String())
	b := startNode(t, dsn, 1, "--lease", lease.String())
	hc := &http.Client{Timeout: 30 * time.Second}
	onA := &cluster{nodes: []*node{a}, hc: hc}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute) // a hang guard
	defer cancel()

	finished, err := onA.create(ctx, model.URL, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := onA.send(ctx, finished, "#quick"); err != nil {
		t.Fatal(err)
	}
	if err := onA.waitStatus(ctx, finished, "finished", 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	running, err := onA.create(ctx, model.URL, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := onA.send(ctx, running, "#slow"); err != nil {
		t.Fatal(err)
	}
	// The terminal step of the running one is stored.
	for {
		var n int
		if err := onA.do(ctx, "GET", "/api/conversations/"+running+"/events/count?kind=ObservationEvent", nil, &n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	// What A answers before it dies.
	before := map[string][]byte{}
	paths := func(id string) []string {
		p := "/api/conversations/" + id
		return []string{p + "/events/search?limit=100", p + "/events/count", p + "/events/search?kind=ObservationEvent"}
	}
	for _, id := range []string{finished, running} {
		for _, p := range paths(id) {
			status, body := get(t, hc, a.url+p)
			if status != 200 {
				t.Fatalf("node A: GET %s: %d %s", p, status, body)
			}
			before[p] = body
		}
	}

	a.dead.Store(true)
	a.cmd.Process.Kill()
	a.cmd.Wait()
	killed := time.Now()

	for _, id := range []string{finished, running} {
		for _, p := range paths(id) {
			status, body := get(t, hc, b.url+p)
			if status != 200 || !bytes.Equal(body, before[p]) {
				t.Errorf("node B after A's death: GET %s: %d %s\nnode A answered %s", p, status, body, before[p])
			}
		}
		var info struct {
			Status string `json:"execution_status"`
		}
		status, body := get(t, hc, b.url+"/api/conversations/"+id)
		if status != 200 || json.Unmarshal(body, &info) != nil {
			t.Errorf("node B after A's death: GET the conversation: %d %s", status, body)
		}
		want := map[string]string{finished: "finished", running: "running"}[id]
		if info.Status != want {
			t.Errorf("node B after A's death: %s is %q, want %q", id, info.Status, want)
		}
		var page struct {
			Items []json.RawMessage `json:"items"`
		}
		json.Unmarshal(before[paths(id)[0]], &page)
		var ev struct {
			ID string `json:"id"`
		}
		json.Unmarshal(page.Items[len(page.Items)-1], &ev)
		if status, body := get(t, hc, b.url+"/api/conversations/"+id+"/events/"+ev.ID); status != 200 || !bytes.Equal(body, page.Items[len(page.Items)-1]) {
			t.Errorf("node B after A's death: GET event %s: %d %s", ev.ID, status, body)
		}
		req, _ := http.NewRequestWithContext(ctx, "GET", b.url+"/api/conversations/"+id+"/events", strings.NewReader(`["`+ev.ID+`","no-such-event"]`))
		req.Header.Set("Content-Type", "application/json")
		if status, body := do(t, hc, req); status != 200 || !bytes.HasPrefix(body, append([]byte("["), page.Items[len(page.Items)-1]...)) || !bytes.HasSuffix(body, []byte(",null]")) {
			t.Errorf("node B after A's death: GET events by id: %d %s", status, body)
		}
	}
	if status, body := get(t, hc, b.url+"/api/conversations/count"); status != 200 || string(body) != "2" {
		t.Errorf("node B after A's death: conversation count: %d %s", status, body)
	}
	var page struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	status, body := get(t, hc, b.url+"/api/conversations/search")
	if status != 200 || json.Unmarshal(body, &page) != nil || len(page.Items) != 2 {
		t.Errorf("node B after A's death: conversation search: %d %s", status, body)
	}
	if since := time.Since(killed); since >= lease {
		t.Fatalf("the reads took %s, longer than the lease: they proved nothing", since)
	}
}

// get sends one GET, without retrying.
func get(t *testing.T, hc *http.Client, url string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, hc, req)
}

func do(t *testing.T, hc *http.Client, req *http.Request) (int, []byte) {
	t.Helper()
	resp, err := hc.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", req.Method, req.URL.Path, err)
		return 0, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}
