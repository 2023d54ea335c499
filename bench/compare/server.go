package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gohands/gohands/internal/proctree"
)

// serverResult is what one agent server measured.
type serverResult struct {
	createMS          float64 // creating all conversations, one after another
	idleMB, perConvMB float64
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
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	argv := []string{r.c.Gohands, "serve", "--host", "127.0.0.1", "--port", strconv.Itoa(port)}
	if side == "reference" {
		argv = []string{r.c.Python, "-m", "openhands.agent_server", "--host", "127.0.0.1", "--port", strconv.Itoa(port)}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := commandContext(ctx, argv, dir, r.home)
	cmd.Env = append(cmd.Env, "OH_SESSION_API_KEYS_0="+sessionKey, fmt.Sprintf("OH_MAX_CONCURRENT_RUNS=%d", r.c.Conversations))
	var out tailBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer func() {
		unix.Kill(-cmd.Process.Pid, unix.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cancel()
			<-exited
		}
	}()
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	if err := waitHealthy(ctx, url, exited); err != nil {
		return nil, fmt.Errorf("%w\n%s", err, out.tail())
	}
	idle := settledRSS(cmd.Process.Pid)
	start := time.Now()
	for range r.c.Conversations {
		ws, err := r.dir("ws")
		if err != nil {
			return nil, err
		}
		if err := createConversation(ctx, url, r.modelURL, ws); err != nil {
			return nil, fmt.Errorf("%w\n%s", err, out.tail())
		}
	}
	createMS := float64(time.Since(start)) / 1e6
	created := settledRSS(cmd.Process.Pid)
	return &serverResult{
		createMS:  createMS,
		idleMB:    float64(idle) / 1e6,
		perConvMB: float64(created-idle) / float64(r.c.Conversations) / 1e6,
	}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
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

// settledRSS lets the server go quiet and returns its tree's RSS.
func settledRSS(pid int) int64 {
	time.Sleep(2 * time.Second)
	return proctree.RSS(pid)
}

// createConversation creates an idle conversation as the reference's
// client does: the agent with its LLM and tools, the workspace.
func createConversation(ctx context.Context, url, modelURL, ws string) error {
	body, err := json.Marshal(map[string]any{
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
	})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", url+"/api/conversations", bytes.NewReader(body))
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
		return fmt.Errorf("POST /api/conversations: %d %s", resp.StatusCode, b)
	}
	return nil
}
