package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gohands/gohands/internal/freeport"
	"github.com/gohands/gohands/internal/proctree"
)

// serverResult is what one agent server measured.
type serverResult struct {
	createMS          float64 // creating all conversations, one after another
	idleMB, perConvMB float64
}

// add adds the server job's rows for side, which created n conversations.
func (s *serverResult) add(t *table, side string, n int) {
	t.add(fmt.Sprintf("server: create %d conversations (ms)", n), side, s.createMS)
	t.add("server: idle RSS (MB)", side, s.idleMB)
	t.add("server: RSS per idle conversation (MB)", side, s.perConvMB)
}

const sessionKey = "compare-session-key"

// server starts side's agent server (gohands serve, or the reference's
// python -m openhands.agent_server), creates r.c.Conversations
// conversations and measures the memory they take.
func (r *runner) server(ctx context.Context, side string) (*serverResult, error) {
	dir, err := r.dir("server")
	if err != nil {
		return nil, err
	}
	p, err := r.startServer(ctx, side, dir, r.c.Conversations)
	if err != nil {
		return nil, err
	}
	defer p.stop()
	return r.serverOn(ctx, p)
}

// serverOn creates r.c.Conversations conversations on the running server
// p and measures the memory they take.
func (r *runner) serverOn(ctx context.Context, p *serverProc) (*serverResult, error) {
	// One conversation first, unmeasured: what the first costs once (the
	// code and data a creation touches, pages of the binary or the
	// modules imported) is not a cost per conversation.
	ws, err := r.dir("ws")
	if err != nil {
		return nil, err
	}
	if _, err := createConversation(ctx, p.url, r.modelURL, ws, ""); err != nil {
		return nil, fmt.Errorf("%w\n%s", err, p.out.tail())
	}
	idle := r.settledRSS(p.pid)
	start := time.Now()
	for range r.c.Conversations {
		ws, err := r.dir("ws")
		if err != nil {
			return nil, err
		}
		if _, err := createConversation(ctx, p.url, r.modelURL, ws, ""); err != nil {
			return nil, fmt.Errorf("%w\n%s", err, p.out.tail())
		}
	}
	createMS := float64(time.Since(start)) / 1e6
	created := r.settledRSS(p.pid)
	return &serverResult{
		createMS:  createMS,
		idleMB:    float64(idle) / 1e6,
		perConvMB: float64(created-idle) / float64(r.c.Conversations) / 1e6,
	}, nil
}

// serverProc is a running agent server.
type serverProc struct {
	url  string
	pid  int
	out  *tailBuffer
	stop func()
}

// startServer starts side's agent server in dir (its conversations in
// dir/workspace/conversations, both sides' default), allowing maxRuns
// conversations to run at once, and waits until it answers /health.
// Extra arguments are gohands serve's.
func (r *runner) startServer(ctx context.Context, side, dir string, maxRuns int, extra ...string) (*serverProc, error) {
	port, err := freeport.Pick()
	if err != nil {
		return nil, err
	}
	argv := append([]string{r.c.Gohands, "serve", "--host", "127.0.0.1", "--port", strconv.Itoa(port)}, extra...)
	if side == "reference" {
		argv = []string{r.c.Python, "-m", "openhands.agent_server", "--host", "127.0.0.1", "--port", strconv.Itoa(port)}
	}
	ctx, cancel := context.WithCancel(ctx)
	cmd := commandContext(ctx, argv, dir, r.home)
	cmd.Env = append(cmd.Env, "OH_SESSION_API_KEYS_0="+sessionKey, fmt.Sprintf("OH_MAX_CONCURRENT_RUNS=%d", maxRuns))
	out := new(tailBuffer)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop := func() {
		unix.Kill(-cmd.Process.Pid, unix.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cancel()
			<-exited
		}
		cancel()
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	if err := waitHealthy(ctx, url, exited); err != nil {
		stop()
		return nil, fmt.Errorf("%w\n%s", err, out.tail())
	}
	return &serverProc{url: url, pid: cmd.Process.Pid, out: out, stop: stop}, nil
}

// waitHealthy polls /health until it answers 200; the reference takes
// seconds to import.
func waitHealthy(ctx context.Context, url string, exited <-chan struct{}) error {
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("the server exited before answering %s/health", url)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if resp, err := http.Get(url + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("no 200 from %s/health in 5 minutes", url)
}

// settledRSS lets the server go quiet for r.c.Settle (2 s by default)
// and returns its tree's RSS.
func (r *runner) settledRSS(pid int) int64 {
	time.Sleep(cmp.Or(r.c.Settle, 2*time.Second))
	return proctree.RSS(pid)
}

// createConversation creates a conversation as the reference's client
// does: the agent with its LLM and tools, the workspace; idle, or running
// task when it is not "". It returns the conversation's id.
func createConversation(ctx context.Context, url, modelURL, ws, task string) (string, error) {
	req := map[string]any{
		"agent": map[string]any{
			"kind": "Agent",
			"llm": map[string]any{
				"model": "openai/bench", "base_url": modelURL + "/v1",
				"api_key": "bench", "usage_id": "agent",
			},
			"tools":                 []any{map[string]any{"name": "terminal", "params": map[string]any{}}},
			"include_default_tools": []any{"FinishTool", "ThinkTool"},
		},
		"workspace":      map[string]any{"kind": "LocalWorkspace", "working_dir": ws},
		"max_iterations": 500,
	}
	if task != "" {
		req["initial_message"] = map[string]any{"role": "user", "run": true, "content": []any{map[string]any{"type": "text", "text": task}}}
		req["stuck_detection"] = false
	}
	var info struct {
		ID string `json:"id"`
	}
	err := call(ctx, "POST", url+"/api/conversations", req, &info)
	return info.ID, err
}

// call sends a request with the session key and decodes the JSON answer
// into out (if not nil).
func call(ctx context.Context, method, url string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return err
	}
	req.Header.Set("X-Session-API-Key", sessionKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %d %s", method, req.URL.Path, resp.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}
