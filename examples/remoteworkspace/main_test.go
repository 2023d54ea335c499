package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/server"
	"github.com/gohands/gohands/workspace"
)

func TestRun(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	as, err := server.New(&server.Options{
		ConversationsPath: state + "/conversations", WorkspacePath: dir,
		BashEventsDir: state + "/bash", SessionAPIKeys: []string{"k"},
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(as)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		hs.CloseClientConnections()
		as.Close(ctx)
		hs.Close()
	}()
	var out bytes.Buffer
	if err := run(t.Context(), &workspace.Remote{Host: hs.URL, APIKey: "k", WorkingDir: dir}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"exit 0: ready in " + dir, "round trip: sent from here", "git: ADDED docs/notes.txt"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
