package dockerapi_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/dockerapi"
	"github.com/gohands/gohands/workspace/docker/dockertest"
)

// TestEngineLifecycle drives a container through every call of the client
// against the real engine (scripts/deps.d/50-docker.sh starts one): create,
// attach, start, stats, pause, inspect, wait, logs, remove.
func TestEngineLifecycle(t *testing.T) {
	t.Parallel()
	api := dockertest.Engine(t)
	image := dockertest.Image(t)
	labels := dockertest.Label(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	v, err := api.Version(ctx)
	if err != nil || v.APIVersion == "" || v.Os != "linux" {
		t.Fatalf("Version = %+v, %v", v, err)
	}
	if im, err := api.ImageInspect(ctx, image); err != nil || !strings.HasPrefix(im.ID, "sha256:") {
		t.Fatalf("ImageInspect(%s) = %+v, %v", image, im, err)
	}
	if _, err := api.ImageInspect(ctx, "gohands-no-such-image:none"); !dockerapi.IsNotFound(err) {
		t.Errorf("ImageInspect of a missing image = %v, want not found", err)
	}

	// The container echoes its stdin, writes to stderr and exits 3 when
	// stdin ends.
	id, err := api.ContainerCreate(ctx, "", &dockerapi.ContainerConfig{
		Image:      image,
		Entrypoint: []string{"/bin/sh", "-c", `cat; echo to-stderr >&2; exit 3`},
		OpenStdin:  true, StdinOnce: true, AttachStdin: true, AttachStdout: true, AttachStderr: true,
		Labels: labels,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer api.ContainerRemove(context.Background(), id)

	att, err := api.ContainerAttach(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	defer att.Close()
	wait, err := api.ContainerWait(ctx, id, "next-exit")
	if err != nil {
		t.Fatal(err)
	}
	if err := api.ContainerStart(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := api.ContainerPause(ctx, id); err != nil {
		t.Fatal(err)
	}
	if cj, err := api.ContainerInspect(ctx, id); err != nil || !cj.State.Paused {
		t.Errorf("after pause: %+v, %v", cj, err)
	}
	if err := api.ContainerUnpause(ctx, id); err != nil {
		t.Fatal(err)
	}
	if mem, err := api.ContainerMemory(ctx, id); err != nil || mem == 0 {
		t.Errorf("ContainerMemory = %d, %v", mem, err)
	}
	if l, err := api.ContainerList(ctx, false, dockertest.TestLabel+"="+labels[dockertest.TestLabel]); err != nil || len(l) != 1 || l[0].ID != id {
		t.Errorf("ContainerList = %+v, %v; want the one running container", l, err)
	}

	if _, err := att.Write([]byte("from-stdin\n")); err != nil {
		t.Fatal(err)
	}
	if err := att.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := att.OutputTo(&out, &errb); err != nil {
		t.Fatal(err)
	}
	if out.String() != "from-stdin\n" || errb.String() != "to-stderr\n" {
		t.Errorf("attached stdout %q, stderr %q", out.String(), errb.String())
	}
	select {
	case r := <-wait:
		if r.Err != nil || r.StatusCode != 3 {
			t.Errorf("wait = %+v, want status 3", r)
		}
	case <-ctx.Done():
		t.Fatal("the container did not exit")
	}
	logs, err := api.ContainerLogs(ctx, id, 0)
	if err != nil || !strings.Contains(logs, "from-stdin\n") || !strings.Contains(logs, "to-stderr\n") {
		t.Errorf("ContainerLogs = %q, %v", logs, err)
	}
	if err := api.ContainerStop(ctx, id, time.Second); err != nil {
		t.Errorf("stopping an exited container: %v", err)
	}
	if err := api.ContainerRemove(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := api.ContainerRemove(ctx, id); err != nil {
		t.Errorf("removing a removed container: %v", err)
	}
	if _, err := api.ContainerInspect(ctx, id); !dockerapi.IsNotFound(err) {
		t.Errorf("inspecting a removed container = %v, want not found", err)
	}
}
