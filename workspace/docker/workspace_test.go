package docker_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/workspace"
	"github.com/gohands/gohands/workspace/docker"
	"github.com/gohands/gohands/workspace/docker/dockertest"
)

// TestWorkspace: a container as a workspace.Workspace, with a mounted
// project, limits and forwarded environment.
func TestWorkspace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	project := t.TempDir()
	o := dockertest.Options(t)
	o.Volumes = []string{project + ":/workspace"}
	o.Env = map[string]string{"GREETING": "hi"}
	o.Memory = 256 << 20
	o.Pids = 200
	o.CPUs = 1
	ws, err := docker.New(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	var w workspace.Workspace = ws
	res, err := w.Execute(ctx, `echo "$GREETING" > made.txt; cat /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/pids.max 2>/dev/null; cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/memory.max 2>/dev/null; pwd; test -f /.dockerenv && echo container`, &workspace.ExecOptions{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"200", "268435456", "/workspace", "container"} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("output lacks %q: %+v", want, res)
		}
	}
	if b, err := os.ReadFile(filepath.Join(project, "made.txt")); err != nil || string(b) != "hi\n" {
		t.Errorf("made.txt on the host: %q %v", b, err)
	}
	src := filepath.Join(t.TempDir(), "up.txt")
	os.WriteFile(src, []byte("uploaded"), 0o644)
	if err := w.Upload(ctx, src, "sub/up.txt"); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "down.txt")
	if err := w.Download(ctx, "sub/up.txt", dst); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "uploaded" {
		t.Errorf("round trip: %q", b)
	}
	if err := ws.Pause(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ws.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	if res, err := w.Execute(ctx, "echo back", nil); err != nil || strings.TrimSpace(res.Stdout) != "back" {
		t.Errorf("after resume: %+v %v", res, err)
	}
	id := ws.Container().ID()
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := dockertest.Engine(t).ContainerInspect(ctx, id); err == nil {
		t.Error("container still there after Close")
	}
}
