// Package dockertest gives tests a Docker engine, the gohands image built
// from the tree under test, and a check that they leave no container
// behind. A missing engine fails the test under CI=true (internal/testenv).
package dockertest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/dockerapi"
	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/workspace/docker"
)

// TestLabel is set on every container a test starts; its value names the test.
const TestLabel = "org.gohands.test"

// Engine returns a client of the Docker engine, or reports it missing.
func Engine(t testing.TB) *dockerapi.Client {
	t.Helper()
	api, err := dockerapi.New("")
	if err != nil {
		testenv.Missing(t, "docker engine: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := api.Ping(ctx); err != nil {
		testenv.Missing(t, "docker engine (scripts/deps.d/50-docker.sh starts one): %v", err)
	}
	t.Cleanup(func() { api.Close() })
	return api
}

var (
	imageOnce sync.Once
	image     string
	imageErr  error
)

// Image returns the gohands image built from this tree by
// scripts/image.sh (tagged gohands:test, cached by the binary's hash), or
// $GOHANDS_TEST_IMAGE when set. It builds once per test binary.
func Image(t testing.TB) string {
	t.Helper()
	Engine(t)
	imageOnce.Do(func() {
		if image = os.Getenv("GOHANDS_TEST_IMAGE"); image != "" {
			return
		}
		root, err := repoRoot()
		if err != nil {
			imageErr = err
			return
		}
		cmd := exec.Command(filepath.Join(root, "scripts", "image.sh"))
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOHANDS_IMAGE=gohands:test")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			imageErr = fmt.Errorf("scripts/image.sh: %v\n%s", err, errb.String())
			return
		}
		image = strings.TrimSpace(out.String())
	})
	if imageErr != nil {
		if testenv.InCI() {
			t.Fatalf("gohands image: %v", imageErr)
		}
		t.Skipf("gohands image: %v", imageErr)
	}
	return image
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.Contains(b, []byte("module github.com/gohands/gohands\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no gohands module above the test's directory")
		}
		dir = parent
	}
}

// Label returns the labels to give the containers of t, and registers a
// check, run when t ends, that none of them is left: it fails t for each
// one found (and removes it).
func Label(t testing.TB) map[string]string {
	t.Helper()
	api := Engine(t)
	b := make([]byte, 4)
	rand.Read(b)
	v := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()) + "-" + hex.EncodeToString(b)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		// A container being removed still lists for a moment.
		var left []dockerapi.ContainerSummary
		for range 50 {
			var err error
			if left, err = api.ContainerList(ctx, true, TestLabel+"="+v); err != nil {
				t.Errorf("listing the test's containers: %v", err)
				return
			}
			if len(left) == 0 {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		for _, c := range left {
			t.Errorf("container %v (%s) left behind by the test", c.Names, c.State)
			api.ContainerRemove(ctx, c.ID)
		}
	})
	return map[string]string{TestLabel: v}
}

// Options returns container options for t: the test image and labels
// checked by Label.
func Options(t testing.TB) *docker.Options {
	t.Helper()
	return &docker.Options{Image: Image(t), Labels: Label(t), HealthTimeout: 2 * time.Minute}
}
