// Package pyclient_test drives agent servers with the Python reference's
// own client (testdata/client.py: RemoteConversation and RemoteWorkspace,
// unchanged) against a scripted model (testdata/playbook.json), once
// against the reference's openhands-agent-server and once against gohands'
// server, and checks that the two runs agree on the sequence of event
// kinds, statuses and command outputs.
//
// The Python venv comes from scripts/deps.d/20-reference.sh (see
// testenv.ReferencePython). The program runs once per server, not once per
// case: each run costs the reference's start-up and a few real commands.
package pyclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
)

const apiKey = "pyclient-test-key"

// transcripts holds the reference's transcript for the gohands run to be
// compared with, computed once per test binary.
var reference struct {
	once       sync.Once
	transcript map[string]any
	err        error
}

// model starts the scripted model of testdata/playbook.json.
func model(t *testing.T) *llmtest.Server {
	t.Helper()
	p, err := llmtest.ReadPlaybook(filepath.Join("testdata", "playbook.json"))
	if err != nil {
		t.Fatal(err)
	}
	return llmtest.NewResponder(t, p.Respond, nil)
}

// freePort returns a loopback port nobody listens on right now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitHealthy polls url+"/health" until it answers 200, the process exits
// or the timeout passes.
func waitHealthy(ctx context.Context, url string, exited <-chan struct{}, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return errors.New("the server exited")
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		resp, err := http.Get(url + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("no 200 from %s/health within %v", url, timeout)
}

// referenceEnv is the environment the reference's programs run in: no
// telemetry, no banner, LiteLLM's bundled model prices (no download).
func referenceEnv(extra ...string) []string {
	env := append(os.Environ(),
		"LITELLM_LOCAL_MODEL_COST_MAP=True",
		"OPENHANDS_SUPPRESS_BANNER=1",
		"OH_TELEMETRY_CONSENT=false",
	)
	return append(env, extra...)
}

// startReferenceServer starts `python -m openhands.agent_server` with the
// test's session key in a temporary directory and returns its URL.
func startReferenceServer(t *testing.T, py string) string {
	t.Helper()
	port := freePort(t)
	dir := t.TempDir()
	cmd := exec.Command(py, "-m", "openhands.agent_server", "--host", "127.0.0.1", "--port", strconv.Itoa(port))
	cmd.Dir = dir
	cmd.Env = referenceEnv("OH_SESSION_API_KEYS_0=" + apiKey)
	log, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("reference server log (tail):\n%s", tail(b, 4000))
		}
	})
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	// The reference takes seconds to import (13 s measured on this machine
	// kind); the budget is generous for a loaded CI machine.
	if err := waitHealthy(t.Context(), url, exited, 3*time.Minute); err != nil {
		b, _ := os.ReadFile(log.Name())
		t.Fatalf("reference server: %v\n%s", err, tail(b, 4000))
	}
	return url
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// runClient runs testdata/client.py against the server at url and returns
// its transcript. A failure of the client fails t, with its output.
func runClient(t *testing.T, py, url, modelURL string) map[string]any {
	t.Helper()
	work := t.TempDir()
	out := filepath.Join(t.TempDir(), "transcript.json")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, filepath.Join("testdata", "client.py"),
		"--server", url, "--api-key", apiKey, "--model", modelURL, "--workdir", work, "--out", out)
	cmd.Env = referenceEnv()
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	runErr := cmd.Run()
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("client.py wrote no transcript (%v): %v\n%s", runErr, err, tail(output.Bytes(), 8000))
	}
	var tr map[string]any
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatalf("client.py transcript: %v", err)
	}
	if runErr != nil {
		t.Errorf("client.py: %v; errors: %v\n%s", runErr, tr["errors"], tail(output.Bytes(), 8000))
	}
	t.Logf("transcript:\n%s", b)
	return tr
}

// referenceTranscript runs the client against the reference's server,
// once per test binary.
func referenceTranscript(t *testing.T) map[string]any {
	t.Helper()
	py := testenv.ReferencePython(t)
	reference.once.Do(func() {
		ok := t.Run("reference", func(t *testing.T) {
			srv := model(t)
			url := startReferenceServer(t, py)
			reference.transcript = runClient(t, py, url, srv.URL)
		})
		if !ok {
			reference.err = errors.New("the client failed against the reference's server")
		}
	})
	if reference.err != nil {
		t.Fatal(reference.err)
	}
	return reference.transcript
}

// TestReferenceServer checks the client program itself: against the
// reference's own server it runs without an error, and what it records
// is what the scenarios script.
func TestReferenceServer(t *testing.T) {
	tr := referenceTranscript(t)
	checkScenarios(t, tr)
}

// checkScenarios asserts the behaviour every scenario scripts, whichever
// server ran it.
func checkScenarios(t *testing.T, tr map[string]any) {
	t.Helper()
	if errs, _ := tr["errors"].([]any); len(errs) > 0 {
		t.Errorf("client errors: %v", errs)
	}
	steps := func(scenario string) []any {
		s, _ := tr["scenarios"].(map[string]any)[scenario].(map[string]any)
		l, _ := s["steps"].([]any)
		return l
	}
	status := func(scenario string, i int) any {
		l := steps(scenario)
		if i >= len(l) {
			return nil
		}
		return l[i].(map[string]any)["status"]
	}
	for _, c := range []struct {
		scenario string
		step     int
		want     string
	}{
		{"echo", 0, "finished"},
		{"pause", 1, "paused"},
		{"pause", 2, "finished"},
		{"confirm", 0, "waiting_for_confirmation"},
		{"confirm", 1, "waiting_for_confirmation"},
		{"confirm", 2, "idle"},
		{"confirm", 3, "finished"},
		{"secret", 0, "finished"},
	} {
		if got := status(c.scenario, c.step); got != c.want {
			t.Errorf("%s step %d: status %v, want %s", c.scenario, c.step, got, c.want)
		}
	}
	if l := steps("echo"); len(l) > 1 {
		if got := l[1].(map[string]any)["response"]; got != "I ran echo." {
			t.Errorf("ask_agent answered %q", got)
		}
	}
}
