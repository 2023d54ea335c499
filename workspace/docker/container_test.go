package docker_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/workspace/docker"
	"github.com/gohands/gohands/workspace/docker/dockertest"
)

func get(t *testing.T, url, key string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if key != "" {
		req.Header.Set("X-Session-API-Key", key)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func TestContainerLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := dockertest.Options(t)
	c, err := docker.Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := get(t, c.URL()+"/health", ""); got != 200 {
		t.Fatalf("/health: %d", got)
	}
	if got := get(t, c.URL()+"/api/conversations/count", ""); got != 401 {
		t.Errorf("without the session key: %d, want 401", got)
	}
	if got := get(t, c.URL()+"/api/conversations/count", c.SessionKey()); got != 200 {
		t.Errorf("with the session key: %d, want 200", got)
	}
	if strings.Contains(c.Output(), c.SessionKey()) {
		t.Error("the session key appears in the container's output")
	}
	api := dockertest.Engine(t)
	if err := c.Pause(ctx); err != nil {
		t.Fatal(err)
	}
	if cj, err := api.ContainerInspect(ctx, c.ID()); err != nil || !cj.State.Paused {
		t.Fatalf("after Pause: paused=%v err=%v", cj != nil && cj.State.Paused, err)
	}
	if err := c.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	if got := get(t, c.URL()+"/health", ""); got != 200 {
		t.Fatalf("/health after Resume: %d", got)
	}
	if err := c.Pause(ctx); err != nil { // Close must cope with a paused container
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := api.ContainerInspect(ctx, c.ID()); err == nil {
		t.Error("the container still exists after Close")
	}
	select {
	case <-c.Done():
	default:
		t.Error("Done not closed after Close")
	}
}

func TestStartFailures(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { taken.Close() })
	takenPort := taken.Addr().(*net.TCPAddr).Port
	for _, tc := range []struct {
		name string
		opts func(*docker.Options)
		want []string
		is   error
	}{
		{"crash", func(o *docker.Options) {
			o.Entrypoint = []string{"/bin/sh", "-c", "echo boom: no config >&2; exit 3"}
		}, []string{"exited with status 3", "boom: no config"}, nil},
		{"never-healthy", func(o *docker.Options) {
			o.Entrypoint = []string{"/bin/sh", "-c", "echo waiting forever; exec sleep 600"}
			o.HealthTimeout = 3 * time.Second
		}, []string{"did not answer /health within 3s", "waiting forever"}, nil},
		{"port-taken", func(o *docker.Options) { o.HostPort = takenPort }, []string{fmt.Sprintf("port %d on 127.0.0.1 is taken", takenPort)}, nil},
		{"missing-image", func(o *docker.Options) { o.Image = "gohands:no-such-image" }, []string{"gohands:no-such-image", "scripts/image.sh"}, docker.ErrNoImage},
		{"bad-volume", func(o *docker.Options) { o.Volumes = []string{"relative-without-target"} }, []string{"want host-path:/container-path"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := dockertest.Options(t)
			tc.opts(o)
			c, err := docker.Start(context.Background(), o)
			if err == nil {
				c.Close()
				t.Fatal("Start succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
		})
	}
}

// TestKilledCaller: a program that started a container and dies by
// SIGKILL leaves nothing running.
func TestKilledCaller(t *testing.T) {
	t.Parallel()
	o := dockertest.Options(t)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "GOHANDS_DOCKER_CHILD=1", "GOHANDS_TEST_IMAGE="+o.Image, "GOHANDS_CHILD_LABEL="+o.Labels[dockertest.TestLabel])
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	var got string
	for !strings.Contains(got, "STARTED ") {
		n, err := out.Read(buf)
		got += string(buf[:n])
		if err != nil {
			cmd.Wait()
			t.Fatalf("child ended before starting a container: %v\n%s", err, got)
		}
	}
	id := strings.Fields(got[strings.Index(got, "STARTED ")+8:])[0]
	cmd.Process.Kill()
	cmd.Wait()
	api := dockertest.Engine(t)
	ctx := context.Background()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := api.ContainerInspect(ctx, id); err != nil {
			break // gone
		}
		if time.Now().After(deadline) {
			t.Fatalf("container %s still there 2 minutes after its starter was killed", id)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestMain runs the child of TestKilledCaller when asked: it starts a
// container, prints its id and waits to be killed.
func TestMain(m *testing.M) {
	if os.Getenv("GOHANDS_DOCKER_CHILD") != "1" {
		os.Exit(m.Run())
	}
	o := &docker.Options{Image: os.Getenv("GOHANDS_TEST_IMAGE"), Labels: map[string]string{dockertest.TestLabel: os.Getenv("GOHANDS_CHILD_LABEL")}}
	c, err := docker.Start(context.Background(), o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("STARTED %s\n", c.ID())
	time.Sleep(10 * time.Minute)
	os.Exit(2)
}
