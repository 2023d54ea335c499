// Package cluster_test runs several gohands serve nodes sharing one
// PostgreSQL database, kills nodes mid-run, and checks that no
// conversation, event or action is lost or repeated.
package cluster_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/gohands/gohands/internal/pgtest"
	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"

	"golang.org/x/sys/unix"
)

var (
	pg     *pgtest.Server
	binary string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gohands-cluster-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "gohands")
	if out, err := exec.Command("go", "build", "-o", binary, "github.com/gohands/gohands/cmd/gohands").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building gohands: %v\n%s", err, out)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	pgtest.Main(m, &pg)
}

const steps = 6

// playbook scripts every conversation alike: steps terminal commands, each
// appending its own line to steps.log (a re-run action would show as a
// repeated line), then finish. The replies are slow enough that runs are
// in flight when nodes die.
func playbook(t testing.TB) *llmtest.Playbook {
	var replies []any
	for k := range steps {
		replies = append(replies, map[string]any{"delay_ms": 150, "tool_calls": []any{map[string]any{
			"name": "terminal", "arguments": map[string]any{"command": fmt.Sprintf("echo step-%d >> steps.log", k)}}}})
	}
	replies = append(replies, map[string]any{"tool_calls": []any{map[string]any{
		"name": "finish", "arguments": map[string]any{"message": "done"}}}})
	b, _ := json.Marshal(map[string]any{"rules": []any{
		map[string]any{"name": "title", "system": "(?i)title", "replies": []any{map[string]any{"text": "Cluster"}}, "loop": true},
		map[string]any{"name": "cluster", "first_user": "^#cluster", "replies": replies},
	}})
	p, err := llmtest.ParsePlaybook(b)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// node is one gohands serve process.
type node struct {
	url  string
	cmd  *exec.Cmd
	dead atomic.Bool
	log  bytes.Buffer
}

func startNode(t testing.TB, dsn string, i int, extra ...string) *node {
	t.Helper()
	dir := t.TempDir()
	n := &node{}
	cmd := exec.Command(binary, append([]string{"serve", "--port", "0", "--store", dsn, "--lease", "2s"}, extra...)...)
	cmd.Env = append(os.Environ(),
		"OH_CONVERSATIONS_PATH="+filepath.Join(dir, "conversations"),
		"OH_WORKSPACE_PATH="+filepath.Join(dir, "project"),
		"OH_BASH_EVENTS_DIR="+filepath.Join(dir, "bash"),
		"HOME="+dir,
		// Every conversation may end up on the last node.
		"OH_MAX_CONCURRENT_RUNS=1000",
	)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n.cmd = cmd
	t.Cleanup(func() {
		if !n.dead.Load() {
			cmd.Process.Signal(unix.SIGTERM)
			cmd.Wait()
		}
		if t.Failed() {
			t.Logf("node %d (%s) log:\n%s", i, n.url, tail(n.log.String(), 4000))
		}
	})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if u, ok := strings.CutPrefix(line, "gohands: serving the agent API on "); ok {
				ready <- strings.Fields(u)[0]
			}
			n.log.WriteString(line + "\n")
		}
	}()
	select {
	case n.url = <-ready:
	case <-time.After(60 * time.Second):
		t.Fatalf("node %d did not start", i)
	}
	return n
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// cluster picks live nodes for the client, as a load balancer would.
type cluster struct {
	nodes []*node
	hc    *http.Client
	// leaked is the first refusal that named a node's address.
	leaked atomic.Value
}

func (c *cluster) pick() *node {
	for {
		n := c.nodes[rand.IntN(len(c.nodes))]
		if !n.dead.Load() {
			return n
		}
	}
}

// do sends a request to a random live node, retrying on other nodes while
// the answer is a connection error or a 503 (a node died, a lease is still
// held by the dead), until ctx ends.
func (c *cluster) do(ctx context.Context, method, path string, body, out any) error {
	var b []byte
	if body != nil {
		b, _ = json.Marshal(body)
	}
	for {
		req, _ := http.NewRequestWithContext(ctx, method, c.pick().url+path, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.hc.Do(req)
		if err == nil {
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			switch {
			case resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusBadGateway:
				// A refusal names no node: the caller may hold no key.
				for _, n := range c.nodes {
					if u := strings.TrimPrefix(n.url, "http://"); u != "" && bytes.Contains(data, []byte(u)) {
						c.leaked.Store(string(data))
					}
				}
			case resp.StatusCode >= 300:
				return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, data)
			default:
				if out != nil {
					return json.Unmarshal(data, out)
				}
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s %s: %w (last: %v)", method, path, ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// create creates a conversation of the scripted model at modelURL working
// in dir, and returns its id.
func (c *cluster) create(ctx context.Context, modelURL, dir string) (string, error) {
	body := map[string]any{
		"agent": map[string]any{
			"kind": "Agent",
			"llm": map[string]any{"model": "openai/gpt-4o", "base_url": modelURL + "/v1",
				"api_key": "scripted", "usage_id": "agent", "num_retries": 0},
			"tools":                 []any{map[string]any{"name": "terminal", "params": map[string]any{}}},
			"include_default_tools": []any{"FinishTool", "ThinkTool"},
		},
		"workspace":       map[string]any{"kind": "LocalWorkspace", "working_dir": dir},
		"stuck_detection": false,
	}
	var info struct {
		ID string `json:"id"`
	}
	err := c.do(ctx, "POST", "/api/conversations", body, &info)
	return info.ID, err
}

// send sends a user message that starts a run.
func (c *cluster) send(ctx context.Context, id, text string) error {
	msg := map[string]any{"role": "user", "run": true, "content": []any{map[string]any{"type": "text", "text": text}}}
	return c.do(ctx, "POST", "/api/conversations/"+id+"/events", msg, nil)
}

// waitStatus polls the conversation through random live nodes until its
// status is want.
func (c *cluster) waitStatus(ctx context.Context, id, want string, every time.Duration) error {
	for {
		var info struct {
			Status string `json:"execution_status"`
		}
		if err := c.do(ctx, "GET", "/api/conversations/"+id, nil, &info); err != nil {
			return err
		}
		if info.Status == want {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("conversation %s: still %s", id, info.Status)
		case <-time.After(every):
		}
	}
}

type frame struct {
	ID        string          `json:"id"`
	Kind      string          `json:"kind"`
	Key       string          `json:"key"`
	Timestamp string          `json:"timestamp"`
	Value     json.RawMessage `json:"value"`
}

// watch follows a conversation's socket through random live nodes,
// reconnecting with resend_mode=since after every drop, and returns the
// ids of the logged events it received, deduplicated, in order of
// arrival. It stops when ctx ends.
func (c *cluster) watch(ctx context.Context, id string, reconnects *atomic.Int64) []string {
	var ids []string
	seen := map[string]bool{}
	last := ""
	for ctx.Err() == nil {
		q := url.Values{"resend_mode": {"all"}}
		if last != "" {
			q = url.Values{"resend_mode": {"since"}, "after_timestamp": {last}}
		}
		u := "ws" + strings.TrimPrefix(c.pick().url, "http") + "/sockets/events/" + id + "?" + q.Encode()
		ws, _, err := websocket.Dial(ctx, u, nil)
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		ws.SetReadLimit(1 << 24)
		for {
			_, b, err := ws.Read(ctx)
			if err != nil {
				break
			}
			var f frame
			if json.Unmarshal(b, &f) != nil || f.Key == "full_state" || f.Kind == "StreamingDeltaEvent" {
				continue
			}
			if !seen[f.ID] {
				seen[f.ID] = true
				ids = append(ids, f.ID)
			}
			if f.Timestamp > last {
				last = f.Timestamp
			}
		}
		ws.CloseNow()
		reconnects.Add(1)
	}
	return ids
}

// TestThreeNodesSurviveKills: conversations run on three nodes sharing
// PostgreSQL through a client that talks to random nodes; one node is
// killed mid-run, later a second. Every conversation finishes on the last
// node, no event is lost or stored twice, no action runs twice, and every
// socket client sees the whole log.
func TestThreeNodesSurviveKills(t *testing.T) {
	pgtest.Require(t, pg)
	if _, err := exec.LookPath("bash"); err != nil {
		testenv.Missing(t, "bash")
	}
	convs := 12
	if !testenv.Short() {
		convs = 100
	}
	dsn := pg.NewDatabase(t)
	model := llmtest.NewResponder(t, playbook(t).Respond, &llmtest.ResponderOptions{NoRecord: true})
	cl := &cluster{hc: &http.Client{Timeout: 30 * time.Second}}
	for i := range 3 {
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
	}

	// Socket clients, one per conversation, through random nodes.
	var reconnects atomic.Int64
	watchCtx, stopWatching := context.WithCancel(ctx)
	watched := make([][]string, convs)
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() { watched[i] = cl.watch(watchCtx, id, &reconnects) })
	}
	for _, id := range ids {
		if err := cl.send(ctx, id, "#cluster task"); err != nil {
			t.Fatal(err)
		}
	}

	// Kill a node once a quarter of the steps are done, another at half.
	linesDone := func() int {
		n := 0
		for _, d := range dirs {
			b, _ := os.ReadFile(filepath.Join(d, "steps.log"))
			n += bytes.Count(b, []byte("\n"))
		}
		return n
	}
	for k, frac := range []float64{0.25, 0.5} {
		for linesDone() < int(frac*float64(convs*steps)) {
			if ctx.Err() != nil {
				t.Fatalf("stalled at %d steps before kill %d", linesDone(), k)
			}
			time.Sleep(20 * time.Millisecond)
		}
		n := cl.nodes[k]
		n.dead.Store(true)
		n.cmd.Process.Kill()
		n.cmd.Wait()
		t.Logf("killed node %d at %d/%d steps", k, linesDone(), convs*steps)
	}

	// Every conversation finishes.
	for _, id := range ids {
		if err := cl.waitStatus(ctx, id, "finished", 200*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(500 * time.Millisecond) // the last frames reach the sockets
	stopWatching()
	wg.Wait()

	taken := 0
	for i, id := range ids {
		// The stored log: every id once.
		var page struct {
			Items []struct {
				ID   string `json:"id"`
				Kind string `json:"kind"`
			} `json:"items"`
		}
		if err := cl.do(ctx, "GET", "/api/conversations/"+id+"/events/search?limit=100", nil, &page); err != nil {
			t.Fatal(err)
		}
		var stored []string
		seen := map[string]bool{}
		for _, e := range page.Items {
			if seen[e.ID] {
				t.Errorf("%s: event %s stored twice", id, e.ID)
			}
			seen[e.ID] = true
			stored = append(stored, e.ID)
			if e.Kind == "AgentErrorEvent" {
				taken++
			}
		}
		// The socket client saw exactly the stored log, in order.
		if strings.Join(watched[i], ",") != strings.Join(stored, ",") {
			t.Errorf("%s: the socket client saw %d events, the log holds %d:\nsocket %v\nstored %v", id, len(watched[i]), len(stored), watched[i], stored)
		}
		// No action ran twice.
		b, _ := os.ReadFile(filepath.Join(dirs[i], "steps.log"))
		count := map[string]int{}
		for l := range strings.FieldsSeq(string(b)) {
			count[l]++
			if count[l] > 1 {
				t.Errorf("%s: %s ran twice", id, l)
			}
		}
	}
	if l := cl.leaked.Load(); l != nil {
		t.Errorf("a refusal named a node's internal address: %s", l)
	}
	t.Logf("%d conversations finished; %d actions interrupted by the kills were answered, not re-run; %d socket reconnects", convs, taken, reconnects.Load())
}
