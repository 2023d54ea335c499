package workspace_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/server"
	"github.com/gohands/gohands/workspace"
)

// remoteOn starts gohands' agent server in this process and returns a
// remote workspace on it whose working directory is a fresh directory
// (the server runs here, so it is a directory of this machine too).
func remoteOn(t *testing.T) (*workspace.Remote, string) {
	t.Helper()
	dir := t.TempDir()
	srv, err := server.New(&server.Options{
		ConversationsPath: dir + "/conversations",
		WorkspacePath:     dir + "/project",
		BashEventsDir:     dir + "/bash_events",
		SessionAPIKeys:    []string{"k"},
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		srv.Close(ctx)
		hs.Close()
	})
	wd := t.TempDir()
	return &workspace.Remote{Host: hs.URL, APIKey: "k", WorkingDir: wd}, wd
}

// The remote workspace passes the contract tests of the local one: the
// same results (exit codes, output, timeouts, cancellation, files, git)
// through gohands' agent server.
func TestRemoteExecute(t *testing.T) {
	w, _ := remoteOn(t)
	testExecute(t, w)
}

func TestRemoteFiles(t *testing.T) {
	w, _ := remoteOn(t)
	testFiles(t, w)
}

func TestRemoteGit(t *testing.T) {
	w, dir := remoteOn(t)
	testGit(t, w, dir)
}

func TestRemoteJSON(t *testing.T) {
	const want = `{"working_dir":"/w","host":"http://h:1","api_key":"k","kind":"RemoteWorkspace"}`
	b, err := event.MarshalKinded(&workspace.Remote{WorkingDir: "/w", Host: "http://h:1", APIKey: "k"})
	if err != nil || string(b) != want {
		t.Fatalf("got %s, %v; want %s", b, err, want)
	}
	w, err := event.DecodeKinded[*workspace.Remote](b)
	if err != nil || w.Host != "http://h:1" || w.APIKey != "k" {
		t.Fatalf("decode: %#v, %v", w, err)
	}
}
