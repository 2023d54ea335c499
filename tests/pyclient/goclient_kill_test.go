package pyclient_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/remote"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/workspace"

	"golang.org/x/sys/unix"
)

// searchCounter counts the events/search requests a client sends.
type searchCounter struct {
	n    atomic.Int64
	next http.RoundTripper
}

func (s *searchCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/events/search") {
		s.n.Add(1)
	}
	return s.next.RoundTrip(r)
}

// TestGoClientServerKilled SIGKILLs a `gohands serve` process in the
// middle of a remote conversation's run and starts a new one on the same
// port and directories. The client survives: its socket reconnects, it
// reconciles through events/search, Run returns the server's true status
// (error: the crash-recovery rules answer the action the kill cut short),
// and the next Run finishes. Every event reaches the callback exactly
// once, in the server's order, and no command runs twice.
func TestGoClientServerKilled(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	const steps, killStep = 20, 6
	base := t.TempDir()
	env := []string{
		"OH_CONVERSATIONS_PATH=" + filepath.Join(base, "conversations"),
		"OH_WORKSPACE_PATH=" + filepath.Join(base, "project"),
		"OH_BASH_EVENTS_DIR=" + filepath.Join(base, "bash_events"),
	}
	bin := gohandsBinary(t)
	port := freePort(t)
	start := func() *server {
		return launch(t, "gohands", []string{bin, "serve", "--host", "127.0.0.1", "--port", strconv.Itoa(port)},
			append(append(os.Environ(), "OH_SESSION_API_KEYS_0="+apiKey), env...), port, 50*time.Millisecond, 2*time.Minute)
	}
	srv := start()

	// The model asks for one command per step, each appending its own
	// line to steps.log, until steps are done; then it finishes.
	model := llmtest.NewResponder(t, func(req llmtest.Request) (llmtest.Reply, error) {
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
		if n >= steps {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}}, nil
		}
		// The kill comes while step killStep's command sleeps.
		cmd := fmt.Sprintf("echo step-%d >> steps.log", n)
		if n == killStep {
			cmd += "; sleep 10"
		}
		return llmtest.Reply{Delay: 20 * time.Millisecond, ToolCalls: []llmtest.ToolCall{{Name: "terminal",
			Arguments: fmt.Sprintf(`{"command":%q}`, cmd)}}}, nil
	}, &llmtest.ResponderOptions{NoRecord: true})
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.BaseURL, cfg.APIKey, cfg.UsageID, cfg.NumRetries = model.URL+"/v1", secret.New("scripted"), "agent", 0
	ag := agent.New(cfg, []tool.Spec{{Name: "terminal"}}, nil)

	workdir := t.TempDir()
	searches := &searchCounter{next: http.DefaultTransport}
	ws := &workspace.Remote{Host: srv.URL, APIKey: apiKey, WorkingDir: workdir,
		HTTPClient: &http.Client{Transport: searches, Timeout: time.Minute}}
	var mu sync.Mutex
	var delivered []string
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	c, err := remote.New(ctx, ag, ws, &remote.Options{
		DisableStuckDetection: true,
		MinBackoff:            20 * time.Millisecond, MaxBackoff: 500 * time.Millisecond,
		OnEvent: func(e event.Event) {
			mu.Lock()
			delivered = append(delivered, e.EventBase().ID)
			mu.Unlock()
		},
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
	stepsLog := filepath.Join(workdir, "steps.log")
	for {
		if b, _ := os.ReadFile(stepsLog); strings.Contains(string(b), fmt.Sprintf("step-%d\n", killStep)) {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("Run returned before the kill: %v", err)
		case <-ctx.Done():
			t.Fatal("the run did not get going")
		case <-time.After(5 * time.Millisecond):
		}
	}
	// The server and its commands, at once and without warning.
	if err := unix.Kill(-srv.Pid, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	before := searches.n.Load()
	// The port is free only once the killed process is gone.
	select {
	case <-srv.exited:
	case <-time.After(time.Minute):
		t.Fatal("the killed server did not exit within a minute")
	}
	start() // the same port, directories and key
	t.Logf("killed at step %d (%v into the test); a new server answered %v later", killStep, killed.Sub(t0).Round(time.Millisecond), time.Since(killed).Round(time.Millisecond))

	err = <-done
	var re *conversation.RunError
	switch {
	case err == nil && c.Status() == conversation.StatusFinished:
		// The kill fell between the last step and the end.
	case errors.As(err, &re) && re.Status == conversation.StatusError:
		if err := c.Run(ctx); err != nil {
			t.Fatalf("Run after the restart: %v", err)
		}
	default:
		t.Fatalf("Run across the kill: %v (status %s)", err, c.Status())
	}
	if st := c.Status(); st != conversation.StatusFinished {
		t.Fatalf("status %s, want finished", st)
	}
	if searches.n.Load() == before {
		t.Error("the client did not read events/search after the restart")
	}

	// Every event of the server's log reached the callback once, in order.
	var logged []string
	restarts := 0
	q := url.Values{"limit": {"100"}}
	for {
		var page struct {
			Items []struct {
				ID    string `json:"id"`
				Kind  string `json:"kind"`
				Error string `json:"error"`
			} `json:"items"`
			NextPageID *string `json:"next_page_id"`
		}
		if err := ws.Request(ctx, http.MethodGet, "/api/conversations/"+c.ID()+"/events/search", q, nil, &page); err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			logged = append(logged, it.ID)
			if it.Kind == "AgentErrorEvent" && it.Error == conversation.RestartError {
				restarts++
			}
		}
		if page.NextPageID == nil {
			break
		}
		q.Set("page_id", *page.NextPageID)
	}
	mu.Lock()
	got := slices.Clone(delivered)
	mu.Unlock()
	seen := map[string]bool{}
	for _, id := range got {
		if seen[id] {
			t.Errorf("event %s delivered twice", id)
		}
		seen[id] = true
	}
	if !slices.Equal(got, logged) {
		t.Errorf("delivered %d events, the server logged %d (or in another order)", len(got), len(logged))
	}
	// No command ran twice; the one the kill cut short (if any) was
	// answered with the restart error, not run again.
	b, err := os.ReadFile(stepsLog)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for l := range strings.FieldsSeq(string(b)) {
		if count[l]++; count[l] > 1 {
			t.Errorf("%s ran twice", l)
		}
	}
	if restarts != 1 {
		t.Errorf("%d actions answered with the restart error, want 1 (the command the kill cut short)", restarts)
	}
	t.Logf("%d events; %d events/search requests after the kill; finished %v after it",
		len(logged), searches.n.Load()-before, time.Since(killed).Round(time.Millisecond))
}
