package pyclient_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation/remote"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/workspace"

	"golang.org/x/sys/unix"
)

// TestServerKilledShownRecovered SIGKILLs a `gohands serve` process while
// a conversation runs a command, and starts a new one on the same
// directories. Before any client runs or watches it, the conversation reads
// as error, its interrupted command answered, as the reference recovers
// conversations left running when it starts (issue 35 item 6d: it read
// running until a client called /run).
func TestServerKilledShownRecovered(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	env := append(os.Environ(), "OH_SESSION_API_KEYS_0="+apiKey,
		"OH_CONVERSATIONS_PATH="+filepath.Join(base, "conversations"),
		"OH_WORKSPACE_PATH="+filepath.Join(base, "project"),
		"OH_BASH_EVENTS_DIR="+filepath.Join(base, "bash_events"))
	bin := gohandsBinary(t)
	port := freePort(t)
	start := func() *server {
		// Without titles: a title call would take the scripted reply.
		return launch(t, "gohands", []string{bin, "serve", "--host", "127.0.0.1", "--port", strconv.Itoa(port), "--autotitle=false"},
			env, port, 50*time.Millisecond, 2*time.Minute)
	}
	srv := start()
	model := llmtest.NewChat(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "terminal", Arguments: `{"command":"touch started; sleep 60"}`}}})
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.BaseURL, cfg.APIKey, cfg.UsageID, cfg.NumRetries = model.URL+"/v1", secret.New("scripted"), "agent", 0
	workdir := t.TempDir()
	ws := &workspace.Remote{Host: srv.URL, APIKey: apiKey, WorkingDir: workdir, HTTPClient: &http.Client{Timeout: time.Minute}}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	c, err := remote.New(ctx, agent.New(cfg, []tool.Spec{{Name: "terminal"}}, nil), ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := c.ID()
	if err := c.SendMessage(ctx, event.UserMessage("wait")); err != nil {
		t.Fatal(err)
	}
	// No client watches it across the kill: its socket would load the
	// conversation on the new server.
	c.Close()
	if err := ws.Request(ctx, http.MethodPost, "/api/conversations/"+id+"/run", nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(workdir, "started")); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the command did not start")
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := unix.Kill(-srv.Pid, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-srv.exited:
	case <-time.After(time.Minute):
		t.Fatal("the killed server did not exit within a minute")
	}
	start()

	var info struct {
		ExecutionStatus string `json:"execution_status"`
	}
	if err := ws.Request(ctx, http.MethodGet, "/api/conversations/"+id, nil, nil, &info); err != nil {
		t.Fatal(err)
	}
	if info.ExecutionStatus != "error" {
		t.Fatalf("status %q after the kill and restart, want error at once", info.ExecutionStatus)
	}
	var page struct {
		Items []struct {
			Kind  string `json:"kind"`
			Error string `json:"error"`
		} `json:"items"`
	}
	if err := ws.Request(ctx, http.MethodGet, "/api/conversations/"+id+"/events/search", nil, nil, &page); err != nil {
		t.Fatal(err)
	}
	answered := 0
	for _, e := range page.Items {
		if e.Kind == "AgentErrorEvent" {
			answered++
		}
	}
	if answered != 1 {
		t.Errorf("%d AgentErrorEvents, want 1 answering the command the kill cut short", answered)
	}
}
