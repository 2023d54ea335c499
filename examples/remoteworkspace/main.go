// Command remoteworkspace uses an agent server's workspace directly, with
// no agent: it runs a command there, sends a file, fetches it back and
// asks git what changed.
//
//	gohands serve &
//	go run ./examples/remoteworkspace -server http://127.0.0.1:8000 -dir /tmp/ws
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/gohands/gohands/workspace"
)

func main() {
	server := flag.String("server", "http://127.0.0.1:8000", "the agent server's `URL`")
	dir := flag.String("dir", "/tmp/gohands-remote-workspace", "the working `directory` on the server")
	flag.Parse()
	ws := &workspace.Remote{Host: *server, APIKey: os.Getenv("SESSION_API_KEY"), WorkingDir: *dir}
	if err := run(context.Background(), ws, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, ws workspace.Workspace, out io.Writer) error {
	defer ws.Close()
	res, err := ws.Execute(ctx, "mkdir -p . && git init -q . && echo ready in $(pwd)", nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "exit %d: %s", res.ExitCode, res.Stdout)

	local, err := os.MkdirTemp("", "remoteworkspace-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(local)
	src := filepath.Join(local, "notes.txt")
	if err := os.WriteFile(src, []byte("sent from here\n"), 0o644); err != nil {
		return err
	}
	// Relative paths are relative to the workspace's working directory.
	if err := ws.Upload(ctx, src, "docs/notes.txt"); err != nil {
		return err
	}
	back := filepath.Join(local, "back.txt")
	if err := ws.Download(ctx, "docs/notes.txt", back); err != nil {
		return err
	}
	b, err := os.ReadFile(back)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "round trip: %s", b)

	changes, err := ws.GitChanges(ctx, ".")
	if err != nil {
		return err
	}
	for _, c := range changes {
		fmt.Fprintf(out, "git: %s %s\n", c.Status, c.Path)
	}
	return nil
}
