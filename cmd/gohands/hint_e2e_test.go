package main

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/server"
)

// TestE2EBareWordIsUnknownCommand: `gohands hi` through the binary is a
// usage error naming the unknown command with a hint on how to give a
// task, and nothing reaches the model.
func TestE2EBareWordIsUnknownCommand(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.mustRun(exitUsage, "hi")
	for _, want := range []string{`unknown command "hi"`, `gohands "hi`} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if n := len(e.srv.Requests()); n != 0 {
		t.Errorf("%d model requests, want none", n)
	}
}

// TestE2EServer401Hint: through the binary, an agent server that refuses
// the session key is an error that says which key to give (TestLsServer
// checks the wording in-process).
func TestE2EServer401Hint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, err := server.New(&server.Options{
		ConversationsPath: dir + "/c", WorkspacePath: dir + "/w", BashEventsDir: dir + "/b",
		SessionAPIKeys: []string{"k"},
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		hs.CloseClientConnections()
		srv.Close(ctx)
		hs.Close()
	})
	e := newE2E(t)
	e.env = withoutEnv(e.env, "SESSION_API_KEY")
	r := e.mustRun(exitError, "ls", "--server", hs.URL)
	if !strings.Contains(r.stderr, "401") || !strings.Contains(r.stderr, "set $SESSION_API_KEY or pass --session-key") {
		t.Errorf("no key: stderr lacks the hint:\n%s", r.stderr)
	}
}
