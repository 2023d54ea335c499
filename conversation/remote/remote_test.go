package remote_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/remote"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/freeport"
	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/server"
	"github.com/gohands/gohands/tool"
	_ "github.com/gohands/gohands/tools/preset"
	"github.com/gohands/gohands/workspace"
)

const key = "remote-test-key"

// testServer is gohands' agent server in this process, behind a proxy
// that can drop its sockets and be pointed at a restarted server.
type testServer struct {
	t     testing.TB
	dir   string
	srv   *server.Server
	http  *httptest.Server
	proxy *proxy
}

func startServer(t *testing.T) *testServer { return startServerTB(t) }

func startServerTB(t testing.TB) *testServer {
	t.Helper()
	ts := &testServer{t: t, dir: t.TempDir()}
	ts.start()
	ts.proxy = newProxy(t, ts.http.Listener.Addr().String())
	t.Cleanup(func() { ts.stop() })
	return ts
}

func (ts *testServer) start() {
	srv, err := server.New(&server.Options{
		ConversationsPath: ts.dir + "/conversations",
		WorkspacePath:     ts.dir + "/project",
		BashEventsDir:     ts.dir + "/bash_events",
		SessionAPIKeys:    []string{key},
	})
	if err != nil {
		ts.t.Fatal(err)
	}
	ts.srv, ts.http = srv, httptest.NewServer(srv)
}

// stop shuts the server down as gohands serve does on SIGTERM: running
// conversations are paused and persisted.
func (ts *testServer) stop() {
	if ts.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ts.http.CloseClientConnections()
	if err := ts.srv.Close(ctx); err != nil {
		ts.t.Errorf("server Close: %v", err)
	}
	ts.http.Close()
	ts.srv = nil
}

// restart replaces the server by a new one over the same directories.
func (ts *testServer) restart() {
	// Down, as a stopped process: no connection reaches the old server
	// while it shuts down.
	ts.proxy.setTarget("127.0.0.1:1")
	ts.stop()
	ts.start()
	ts.proxy.setTarget(ts.http.Listener.Addr().String())
}

// workspace is a remote workspace reaching the server through the proxy.
func (ts *testServer) workspace(dir string) *workspace.Remote {
	return &workspace.Remote{Host: "http://" + ts.proxy.addr(), APIKey: key, WorkingDir: dir}
}

// direct reaches the server without the proxy.
func (ts *testServer) direct() *workspace.Remote {
	return &workspace.Remote{Host: ts.http.URL, APIKey: key, WorkingDir: ts.dir}
}

// proxy forwards TCP connections to a target and can drop the event
// sockets among them.
type proxy struct {
	t  testing.TB
	ln net.Listener

	mu      sync.Mutex
	target  string
	sockets map[net.Conn]bool // client side of live event sockets
	drops   atomic.Int64
}

func newProxy(t testing.TB, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, ln: ln, target: target, sockets: map[net.Conn]bool{}}
	go p.serve()
	t.Cleanup(func() { ln.Close() })
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) setTarget(addr string) {
	p.mu.Lock()
	p.target = addr
	p.mu.Unlock()
}

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

func (p *proxy) forward(c net.Conn) {
	defer c.Close()
	p.mu.Lock()
	target := p.target
	p.mu.Unlock()
	s, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer s.Close()
	// The first bytes tell an event socket from a REST call.
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if err != nil {
		return
	}
	if strings.HasPrefix(string(buf[:n]), "GET /sockets/events/") {
		p.mu.Lock()
		p.sockets[c] = true
		p.mu.Unlock()
		defer func() {
			p.mu.Lock()
			delete(p.sockets, c)
			p.mu.Unlock()
		}()
	}
	if _, err := s.Write(buf[:n]); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() { io.Copy(s, c); done <- struct{}{} }()
	go func() { io.Copy(c, s); done <- struct{}{} }()
	<-done
}

// drop closes one live event socket, if there is one.
func (p *proxy) drop() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.sockets {
		c.Close()
		delete(p.sockets, c)
		p.drops.Add(1)
		return true
	}
	return false
}

// scriptedAgent is an agent with the terminal tool whose model is the
// responder at url.
func scriptedAgent(url string) *agent.Agent {
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.BaseURL, cfg.APIKey, cfg.UsageID, cfg.NumRetries = url+"/v1", secret.New("scripted"), "agent", 0
	return agent.New(cfg, []tool.Spec{{Name: "terminal"}}, nil)
}

// serverIDs lists the ids of the server's events for the conversation.
func serverIDs(t *testing.T, ws *workspace.Remote, id string) []string {
	t.Helper()
	var ids []string
	page := ""
	for {
		q := map[string][]string{"limit": {"100"}}
		if page != "" {
			q["page_id"] = []string{page}
		}
		var res struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
			NextPageID *string `json:"next_page_id"`
		}
		if err := ws.Request(t.Context(), "GET", "/api/conversations/"+id+"/events/search", q, nil, &res); err != nil {
			t.Fatal(err)
		}
		for _, it := range res.Items {
			ids = append(ids, it.ID)
		}
		if res.NextPageID == nil {
			return ids
		}
		page = *res.NextPageID
	}
}

// collector records the ids OnEvent receives, and duplicates.
type collector struct {
	mu  sync.Mutex
	ids []string
}

func (c *collector) onEvent(e event.Event) {
	c.mu.Lock()
	c.ids = append(c.ids, e.EventBase().ID)
	c.mu.Unlock()
}

func (c *collector) get() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.ids)
}

// checkExactlyOnce fails t unless got is want: every event once, in order.
func checkExactlyOnce(t *testing.T, got, want []string) {
	t.Helper()
	seen := map[string]int{}
	for _, id := range got {
		seen[id]++
	}
	for id, n := range seen {
		if n > 1 {
			t.Errorf("event %s delivered %d times", id, n)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("delivered %d events, the server logged %d (or in another order)", len(got), len(want))
	}
}

// stepsResponder answers with a terminal command per step until done
// returns true, then finishes.
func stepsResponder(done func(step int) bool) llmtest.Responder {
	var mu sync.Mutex
	return func(req llmtest.Request) (llmtest.Reply, error) {
		mu.Lock()
		defer mu.Unlock()
		var body struct {
			Messages []struct {
				Role string `json:"role"`
			} `json:"messages"`
		}
		if err := req.Decode(&body); err != nil {
			return llmtest.Reply{}, err
		}
		n := 0
		for _, m := range body.Messages {
			if m.Role == "assistant" {
				n++
			}
		}
		if done(n) {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}}, nil
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: fmt.Sprintf(`{"command":"echo step-%d"}`, n)}}}, nil
	}
}

// TestSocketDrops drops the event socket at random moments during a long
// run: every event reaches the callbacks once, in order, and Run returns
// the true final status. GOHANDS_FULL=1 makes it 1,000 drops.
func TestSocketDrops(t *testing.T) {
	target := int64(15)
	if !testenv.Short() {
		target = 1000
	}
	if s := os.Getenv("GOHANDS_SOCKET_DROPS"); s != "" {
		fmt.Sscan(s, &target)
	}
	ts := startServer(t)
	p := ts.proxy
	model := llmtest.NewResponder(t, stepsResponder(func(int) bool { return p.drops.Load() >= target }), nil)
	col := &collector{}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Minute)
	defer cancel()
	c, err := remote.New(ctx, scriptedAgent(model.URL), ts.workspace(t.TempDir()), &remote.Options{
		OnEvent: col.onEvent, MinBackoff: time.Millisecond, MaxBackoff: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		rng := rand.New(rand.NewPCG(1, 2))
		for p.drops.Load() < target {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(rng.IntN(3000)) * time.Microsecond):
			}
			p.drop()
		}
	})
	if err := c.SendMessage(ctx, event.UserMessage("count")); err != nil {
		t.Fatal(err)
	}
	runErr := c.Run(ctx)
	close(stop)
	wg.Wait()
	if runErr != nil {
		t.Fatalf("Run: %v", runErr)
	}
	if st := c.Status(); st != conversation.StatusFinished {
		t.Errorf("status %s, want finished", st)
	}
	want := serverIDs(t, ts.direct(), c.ID())
	checkExactlyOnce(t, col.get(), want)
	t.Logf("%d socket drops, %d events, %d steps", p.drops.Load(), len(want), c.State().Events().Len())
}

// TestServerRestart stops the server mid-run and starts it again on the
// same directories: the client reconnects, Run returns the true status
// (paused by the shutdown), and the next Run finishes, every event once.
func TestServerRestart(t *testing.T) {
	ts := startServer(t)
	var steps atomic.Int64
	model := llmtest.NewResponder(t, stepsResponder(func(n int) bool { steps.Store(int64(n)); return n >= 30 }), nil)
	col := &collector{}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	c, err := remote.New(ctx, scriptedAgent(model.URL), ts.workspace(t.TempDir()), &remote.Options{
		OnEvent: col.onEvent, MinBackoff: 10 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SendMessage(ctx, event.UserMessage("count")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	for steps.Load() < 5 {
		time.Sleep(5 * time.Millisecond)
	}
	ts.restart()
	if err := <-done; err != nil {
		t.Fatalf("Run across the restart: %v", err)
	}
	if st := c.Status(); st != conversation.StatusPaused && st != conversation.StatusFinished {
		t.Fatalf("status after the restart %s, want paused (or finished)", st)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatalf("Run after the restart: %v", err)
	}
	if st := c.Status(); st != conversation.StatusFinished {
		t.Errorf("status %s, want finished", st)
	}
	checkExactlyOnce(t, col.get(), serverIDs(t, ts.direct(), c.ID()))
}

// TestBadInput: each is a clear error, soon.
func TestBadInput(t *testing.T) {
	ts := startServer(t)
	model := llmtest.NewResponder(t, stepsResponder(func(n int) bool { return true }), nil)
	ag := scriptedAgent(model.URL)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	t.Run("unreachable", func(t *testing.T) {
		addr, err := freeport.Addr()
		if err != nil {
			t.Fatal(err)
		}
		ws := &workspace.Remote{Host: "http://" + addr, WorkingDir: "/w"}
		_, err = remote.New(ctx, ag, ws, nil)
		if err == nil || !strings.Contains(err.Error(), "unreachable") {
			t.Errorf("New: %v, want unreachable", err)
		}
		if _, err := ws.Execute(ctx, "true", nil); err == nil || !strings.Contains(err.Error(), "unreachable") {
			t.Errorf("Execute: %v", err)
		}
	})
	t.Run("wrong key", func(t *testing.T) {
		ws := ts.workspace(t.TempDir())
		ws.APIKey = "wrong"
		if _, err := remote.New(ctx, ag, ws, nil); !errors.Is(err, remote.ErrUnauthorized) {
			t.Errorf("New: %v, want ErrUnauthorized", err)
		}
		if _, err := ws.Execute(ctx, "true", nil); !errors.Is(err, workspace.ErrUnauthorized) {
			t.Errorf("Execute: %v, want ErrUnauthorized", err)
		}
	})
	t.Run("unknown id", func(t *testing.T) {
		_, err := remote.Attach(ctx, ts.workspace(t.TempDir()), "6a0f4e2c-1b3d-4c5e-8f70-9a1b2c3d4e5f", nil)
		if !errors.Is(err, remote.ErrNotFound) {
			t.Errorf("Attach: %v, want ErrNotFound", err)
		}
		if _, err := remote.Attach(ctx, ts.workspace(t.TempDir()), "not-an-id", nil); err == nil {
			t.Error("Attach accepted a malformed id")
		}
	})
	t.Run("garbage", func(t *testing.T) {
		g := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "<html>this is not an agent server</html>")
		}))
		defer g.Close()
		ws := &workspace.Remote{Host: g.URL, WorkingDir: "/w"}
		if _, err := remote.New(ctx, ag, ws, nil); err == nil || !strings.Contains(err.Error(), "bad answer") {
			t.Errorf("New: %v, want a bad answer", err)
		}
		if _, err := ws.Execute(ctx, "true", nil); err == nil || !strings.Contains(err.Error(), "bad answer") {
			t.Errorf("Execute: %v, want a bad answer", err)
		}
	})
	t.Run("socket refused", func(t *testing.T) {
		// REST answers, the socket is closed with 4004: fatal, not retried.
		c, err := remote.New(ctx, ag, ts.workspace(t.TempDir()), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := ts.direct().Request(ctx, "DELETE", "/api/conversations/"+c.ID(), nil, nil, nil); err != nil {
			t.Fatal(err)
		}
		ts.proxy.drop()
		err = c.Run(ctx)
		if !errors.Is(err, remote.ErrNotFound) {
			t.Errorf("Run on a deleted conversation: %v, want ErrNotFound", err)
		}
	})
}

// TestAttach attaches a second client to a conversation and sees the
// same history.
func TestAttach(t *testing.T) {
	ts := startServer(t)
	model := llmtest.NewResponder(t, stepsResponder(func(n int) bool { return n >= 2 }), nil)
	ctx := t.Context()
	c, err := remote.New(ctx, scriptedAgent(model.URL), ts.workspace(t.TempDir()), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SendMessage(ctx, event.UserMessage("go")); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	col := &collector{}
	d, err := remote.Attach(ctx, ts.workspace(""), c.ID(), &remote.Options{OnEvent: col.onEvent})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Status() != conversation.StatusFinished {
		t.Errorf("attached status %s", d.Status())
	}
	checkExactlyOnce(t, col.get(), serverIDs(t, ts.direct(), c.ID()))
}

// TestInterrupt interrupts a run waiting on a slow model: Run returns
// with status paused.
func TestInterrupt(t *testing.T) {
	ts := startServer(t)
	model := llmtest.NewResponder(t, func(req llmtest.Request) (llmtest.Reply, error) {
		return llmtest.Reply{Text: "late", Delay: time.Minute}, nil
	}, nil)
	ctx := t.Context()
	c, err := remote.New(ctx, scriptedAgent(model.URL), ts.workspace(t.TempDir()), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SendMessage(ctx, event.UserMessage("wait")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	for c.Status() != conversation.StatusRunning {
		time.Sleep(5 * time.Millisecond)
	}
	if err := c.Interrupt(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if st := c.Status(); st != conversation.StatusPaused {
		t.Errorf("status %s, want paused", st)
	}
}

// TestSubscribeListDelete: a subscriber gets every event logged after it
// subscribed, in order; List lists the conversation with its status;
// Delete removes it from the server.
func TestSubscribeListDelete(t *testing.T) {
	ts := startServer(t)
	model := llmtest.NewResponder(t, stepsResponder(func(n int) bool { return n >= 3 }), nil)
	ctx := t.Context()
	ws := ts.workspace(t.TempDir())
	c, err := remote.New(ctx, scriptedAgent(model.URL), ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before := len(serverIDs(t, ts.direct(), c.ID()))
	var mu sync.Mutex
	var got []string
	unsubscribe := c.Subscribe(func(e event.Event) {
		if _, ok := e.(*event.StreamingDeltaEvent); ok {
			return
		}
		mu.Lock()
		got = append(got, e.EventBase().ID)
		mu.Unlock()
	})
	if err := c.SendMessage(ctx, event.UserMessage("go")); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	want := serverIDs(t, ts.direct(), c.ID())[before:]
	deadline := time.Now().Add(time.Minute)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	unsubscribe()
	mu.Lock()
	checkExactlyOnce(t, got, want)
	mu.Unlock()

	list, err := remote.List(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(list, func(i remote.Info) bool { return i.ID == c.ID() && i.ExecutionStatus == conversation.StatusFinished }) {
		t.Errorf("List: %+v, want %s finished", list, c.ID())
	}
	if err := c.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := remote.Attach(ctx, ws, c.ID(), nil); !errors.Is(err, remote.ErrNotFound) {
		t.Errorf("Attach after Delete: %v, want ErrNotFound", err)
	}
}

// TestRunRetriesUnavailable: a 503 to POST /run (a busy server, or one
// still starting the conversation) is asked again a few times; one that
// stays 503 fails the run with the server's stated cause.
func TestRunRetriesUnavailable(t *testing.T) {
	for _, refusals := range []int64{2, 100} {
		t.Run(fmt.Sprint(refusals), func(t *testing.T) {
			ts := startServer(t)
			var runs atomic.Int64
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/run") && runs.Add(1) <= refusals {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusServiceUnavailable)
					io.WriteString(w, `{"detail":"Internal Server Error","exception":"not ready yet"}`)
					return
				}
				ts.srv.ServeHTTP(w, r)
			}))
			defer front.Close()
			model := llmtest.NewChat(t, llmtest.Reply{Text: "done"})
			ws := &workspace.Remote{Host: front.URL, APIKey: key, WorkingDir: t.TempDir()}
			c, err := remote.New(t.Context(), scriptedAgent(model.URL), ws, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.SendMessage(t.Context(), event.UserMessage("go")); err != nil {
				t.Fatal(err)
			}
			err = c.Run(t.Context())
			if refusals == 2 {
				if err != nil || c.Status() != conversation.StatusFinished {
					t.Errorf("Run after two 503s: %v, status %s; want finished", err, c.Status())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "not ready yet") {
				t.Errorf("Run with every answer 503: %v; want an error with the status and the cause", err)
			}
			if n := runs.Load(); n != 6 {
				t.Errorf("POST /run sent %d times, want 6", n)
			}
		})
	}
}
