package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/workspace/docker/dockertest"
)

// TestRunSandboxDocker: the same task run locally and with --sandbox
// docker prints the same transcript and leaves the same files; the
// sandboxed agent reaches the scripted model on 127.0.0.1 unchanged.
func TestRunSandboxDocker(t *testing.T) {
	t.Parallel()
	o := dockertest.Options(t)
	replies := func() []llmtest.Reply {
		return []llmtest.Reply{
			{ToolCalls: []llmtest.ToolCall{call("c1", "terminal", map[string]any{"command": `printf 'print("hello from", 6*7)\n' > hello.py && python3 hello.py`})}},
			finishReply("hello.py prints its greeting"),
		}
	}
	normalize := func(e *e2e, s string) string {
		s = strings.ReplaceAll(s, e.work, "WORK")
		s = strings.ReplaceAll(s, e.id, "ID")
		return regexp.MustCompile(`[0-9]+(\.[0-9]+)?\s*(ms|s)\b`).ReplaceAllString(s, "T")
	}
	local := newE2E(t, replies()...)
	lr := local.mustRun(0, local.args("make hello.py")...)
	boxed := newE2E(t, replies()...)
	boxed.env = append(boxed.env, "GOHANDS_TEST_IMAGE="+o.Image)
	br := boxed.mustRun(0, boxed.args("--sandbox", "docker", "--image", o.Image, "make hello.py")...)
	if got, want := normalize(boxed, br.stdout), normalize(local, lr.stdout); got != want {
		t.Errorf("sandboxed transcript differs from the local one:\n--- sandbox\n%s\n--- local\n%s", got, want)
	}
	if !strings.Contains(br.stdout, "hello from 42") {
		t.Errorf("the program's output is not in the transcript:\n%s", br.stdout)
	}
	if b, err := os.ReadFile(filepath.Join(boxed.work, "hello.py")); err != nil || !strings.Contains(string(b), "hello from") {
		t.Errorf("hello.py on the host: %q %v", b, err)
	}
	if boxed.status() != "finished" {
		t.Errorf("stored status %q", boxed.status())
	}
}

// TestRunSandboxRmRf: `rm -rf /` by the agent in the sandbox destroys the
// container, not the host: a file outside the mounts survives.
func TestRunSandboxRmRf(t *testing.T) {
	t.Parallel()
	o := dockertest.Options(t)
	sentinel := filepath.Join(t.TempDir(), "keep.txt")
	if err := os.WriteFile(sentinel, []byte("host file"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newE2E(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("c1", "terminal", map[string]any{"command": "rm -rf --no-preserve-root / 2>/dev/null; ls /usr/bin | wc -l"})}},
		finishReply("gone"),
	)
	// The store is mounted too, so the run may end badly; the host must not.
	e.run(e.args("--sandbox", "docker", "--image", o.Image, "destroy everything")...)
	if b, err := os.ReadFile(sentinel); err != nil || string(b) != "host file" {
		t.Fatalf("host file outside the sandbox: %q %v", b, err)
	}
	for _, p := range []string{"/usr/bin/env", "/etc/passwd", binPath} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("host %s: %v", p, err)
		}
	}
}
