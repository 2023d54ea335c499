package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/workspace/docker/dockertest"
)

// The tests below send SIGINT or SIGTERM to the real binary at a moment
// they wait for (a model call held, a tool running), and check the exit
// status, what is on disk, and that nothing the command started is left.
// The deadlines are hang guards; the time each exit took is logged.

// signalAt sends sig to p and returns the exit and how long it took.
func signalAt(t *testing.T, p *proc, sig os.Signal) (result, time.Duration) {
	t.Helper()
	start := time.Now()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	r := p.wait(time.Minute)
	took := time.Since(start)
	t.Logf("%v: exit %d after %s", sig, r.code, took.Round(time.Millisecond))
	return r, took
}

// processesWith returns the pids of the processes whose command line
// holds marker.
func processesWith(marker string) []string {
	var out []string
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(marker)) {
			out = append(out, d.Name())
		}
	}
	return out
}

// A suite whose model never answers (every connection is closed at once)
// retries with long waits; SIGTERM during a wait ends it at once with 143
// and a summary marked interrupted.
func TestE2ESignalEvalRetryWait(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	calls := make(chan struct{}, 100)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			calls <- struct{}{}
		}
	}()
	e := newE2E(t)
	cfg := filepath.Join(t.TempDir(), "llm.json")
	os.WriteFile(cfg, []byte(`{"model": "openai/gpt-4o", "base_url": "http://`+ln.Addr().String()+`/v1", "api_key": "k",
		"num_retries": 50, "retry_min_wait": 60, "retry_max_wait": 60, "retry_multiplier": 1}`), 0o644)
	out := filepath.Join(t.TempDir(), "results")
	p := e.start("eval", "--llm-config", cfg, "--base-url", "http://"+ln.Addr().String()+"/v1", "--out", out)
	select {
	case <-calls: // the first attempt failed: the run now waits to retry
	case <-time.After(2 * time.Minute):
		t.Fatalf("no model call; stderr:\n%s", p.stderr.String())
	}
	r, _ := signalAt(t, p, unix.SIGTERM)
	if r.code != exitTerminated {
		t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, exitTerminated, r.stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatalf("no summary after SIGTERM: %v", err)
	}
	var s struct {
		Interrupted bool `json:"interrupted"`
	}
	if json.Unmarshal(b, &s); !s.Interrupted {
		t.Errorf("summary.json is not marked interrupted: %s", b)
	}
	if !strings.Contains(r.stderr, "run the same command again to resume") {
		t.Errorf("stderr has no hint:\n%s", r.stderr)
	}
}

// SIGINT while a task's command runs: the command is ended (no process
// left), the suite exits 130, and the same command resumes it.
func TestE2ESignalEvalToolCall(t *testing.T) {
	t.Parallel()
	marks := t.TempDir()
	e := newE2E(t,
		finishReply("a is done"),
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("c1", "terminal", map[string]any{"command": "touch " + marks + "/started && sleep 6071", "timeout": 7000})}},
	)
	suite := evalSuite(t, "a", "b")
	out := filepath.Join(t.TempDir(), "results")
	args := []string{"eval", "--llm-config", e.config, "--out", out, suite}
	p := e.start(args...)
	p.waitFile(filepath.Join(marks, "started"), 2*time.Minute)
	r, _ := signalAt(t, p, os.Interrupt)
	if r.code != exitInterrupted {
		t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, exitInterrupted, r.stderr)
	}
	if left := processesWith("sleep 6071"); len(left) > 0 {
		t.Errorf("the task's command outlived the suite: pids %v", left)
		for _, pid := range left {
			exec.Command("kill", "-9", pid).Run()
		}
	}
	if _, err := os.Stat(filepath.Join(out, "openai_gpt-4o", "a", "result.json")); err != nil {
		t.Errorf("the finished task's result: %v", err)
	}
	e.srv.Add(finishReply("b is done"))
	r = e.mustRun(0, args...)
	if n := strings.Count(r.stderr, "(from an earlier run)"); n != 1 {
		t.Errorf("resumed %d tasks, want 1:\n%s", n, r.stderr)
	}
}

// gohands acp waiting for its editor ends on SIGTERM with 143; before, it
// ignored the signal until killed.
func TestE2ESignalACP(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	cmd := exec.Command(binPath, "acp", "--persistence-dir", e.data)
	cmd.Env = e.env
	stdin, err := cmd.StdinPipe() // held open: the editor is still there
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// It answers initialize, so it is serving.
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`+"\n")
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.Contains(line, `"id":1`) {
		t.Fatalf("initialize: %q %v", line, err)
	}
	start := time.Now()
	cmd.Process.Signal(unix.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitTerminated {
			t.Errorf("acp ended with %v, want exit %d", err, exitTerminated)
		}
		t.Logf("SIGTERM: acp exited after %s", time.Since(start).Round(time.Millisecond))
	case <-time.After(time.Minute):
		t.Fatal("acp did not end on SIGTERM")
	}
}

// gohands serve drains on SIGTERM: a run in progress is paused, a new run
// is paused and its command ended, and it exits 0; a second signal
// during the drain quits at once with 143.
func TestE2ESignalServe(t *testing.T) {
	t.Parallel()
	for _, second := range []bool{false, true} {
		name := "drain"
		if second {
			name = "second signal"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			model := llmtest.New(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("c1", "terminal", map[string]any{"command": "touch started; sleep 6083", "timeout": 7000})}})
			home := t.TempDir()
			work := t.TempDir()
			timeout := "1m"
			if second {
				timeout = "10m"
			}
			// Without titles: a title call would take the scripted reply.
			cmd := exec.Command(binPath, "serve", "--host", "127.0.0.1", "--port", "0", "--shutdown-timeout", timeout, "--autotitle=false")
			cmd.Dir = t.TempDir()
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, "LLM_") && !strings.HasPrefix(kv, "OH_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_") {
					cmd.Env = append(cmd.Env, kv)
				}
			}
			cmd.Env = append(cmd.Env, "HOME="+home, "XDG_DATA_HOME="+home, "XDG_CONFIG_HOME="+home,
				"OH_CONVERSATIONS_PATH="+filepath.Join(home, "convs"), "OH_WORKSPACE_PATH="+work)
			if second {
				// A webhook that never answers holds the drain (its last
				// flush waits up to --shutdown-timeout): the second signal
				// must not wait for it.
				hang, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { hang.Close() })
				go func() {
					for {
						c, err := hang.Accept()
						if err != nil {
							return
						}
						t.Cleanup(func() { c.Close() })
					}
				}()
				cmd.Env = append(cmd.Env, "OH_WEBHOOKS_0_BASE_URL=http://"+hang.Addr().String()+"/hook", "OH_WEBHOOKS_0_EVENT_BUFFER_SIZE=1")
			}
			stderr, _ := cmd.StderrPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			addr := make(chan string, 1)
			draining := make(chan struct{})
			var log syncBuffer
			go func() {
				sc := bufio.NewScanner(stderr)
				for sc.Scan() {
					io.WriteString(&log, sc.Text()+"\n")
					if _, rest, ok := strings.Cut(sc.Text(), "serving the agent API on "); ok {
						addr <- strings.Fields(rest)[0]
					}
					if strings.Contains(sc.Text(), "SIGTERM: shutting down") {
						close(draining)
					}
				}
			}()
			var url string
			select {
			case url = <-addr:
			case <-time.After(time.Minute):
				t.Fatal("serve did not start")
			}
			start := func(task string) (int, string) {
				body := `{"agent":{"kind":"Agent","llm":{"model":"openai/gpt-4o","base_url":"` + model.URL + `/v1","api_key":"k","usage_id":"agent","num_retries":0},` +
					`"tools":[{"name":"terminal","params":{}}]},"workspace":{"kind":"LocalWorkspace","working_dir":"` + work + `"},` +
					`"initial_message":{"role":"user","content":[{"type":"text","text":"` + task + `"}],"run":true}}`
				resp, err := http.Post(url+"/api/conversations", "application/json", strings.NewReader(body))
				if err != nil {
					return 0, err.Error()
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			if code, body := start("sleep"); code != 201 {
				t.Fatalf("create: %d %s", code, body)
			}
			deadline := time.Now().Add(2 * time.Minute)
			for {
				if _, err := os.Stat(filepath.Join(work, "started")); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the tool never started; log:\n%s", log.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			begin := time.Now()
			cmd.Process.Signal(unix.SIGTERM)
			want := 0
			if second {
				<-draining
				// While it drains, a new run is refused with 503.
				if code, body := start("another"); code != http.StatusServiceUnavailable {
					t.Errorf("a run asked for while draining: %d %s, want 503", code, body)
				}
				cmd.Process.Signal(unix.SIGTERM)
				want = exitTerminated
			}
			select {
			case err := <-done:
				code := 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					code = ee.ExitCode()
				}
				if code != want {
					t.Errorf("serve exited %d (%v), want %d; log:\n%s", code, err, want, log.String())
				}
				t.Logf("serve exited %d after %s", code, time.Since(begin).Round(time.Millisecond))
			case <-time.After(2 * time.Minute):
				t.Fatalf("serve did not end; log:\n%s", log.String())
			}
			if left := processesWith("sleep 6083"); len(left) > 0 && !second {
				t.Errorf("the running command outlived the server: pids %v", left)
			}
			for _, pid := range processesWith("sleep 6083") {
				exec.Command("kill", "-9", pid).Run()
			}
		})
	}
}

// gohands run stopped by SIGTERM during a command pauses like Ctrl-C,
// exits 143 and leaves no process; --conversation-id continues it.
func TestE2ESignalRunTerm(t *testing.T) {
	t.Parallel()
	e := newE2E(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("c1", "terminal", map[string]any{
		"command": "touch started && sleep 6097", "timeout": 7000,
	})}})
	p := e.start(e.args("--json", "wait a while")...)
	p.waitFile(filepath.Join(e.work, "started"), time.Minute)
	r, _ := signalAt(t, p, unix.SIGTERM)
	if r.code != exitTerminated {
		t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, exitTerminated, r.stderr)
	}
	if !strings.Contains(lastLine(r.stderr), "paused by SIGTERM; continue with") {
		t.Errorf("last stderr line: %q", lastLine(r.stderr))
	}
	if left := processesWith("sleep 6097"); len(left) > 0 {
		t.Errorf("the command outlived the run: pids %v", left)
	}
	if e.status() != "paused" {
		t.Errorf("status %s, want paused", e.status())
	}
	e.srv.Add(finishReply("done after all"))
	e.mustRun(0, e.args()...)
	if e.status() != "finished" {
		t.Errorf("after resuming: status %s", e.status())
	}
}

// gohands run --sandbox docker stopped by SIGTERM during a command: the
// signal reaches the run in the container, which pauses and stores the
// conversation; the exit status is the run's (143) and the container is
// gone.
func TestE2ESignalSandbox(t *testing.T) {
	t.Parallel()
	o := dockertest.Options(t)
	e := newE2E(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("c1", "terminal", map[string]any{
		"command": "touch started && sleep 6113", "timeout": 7000,
	})}})
	e.env = append(e.env, "GOHANDS_TEST_IMAGE="+o.Image)
	p := e.start(e.args("--sandbox", "docker", "--image", o.Image, "wait a while")...)
	p.waitFile(filepath.Join(e.work, "started"), 3*time.Minute)
	out, err := exec.Command("docker", "ps", "-q", "--filter", "ancestor="+o.Image, "--filter", "volume="+e.work).Output()
	ids := strings.Fields(string(out))
	if err != nil || len(ids) != 1 {
		t.Fatalf("the sandbox container: %q %v", out, err)
	}
	r, _ := signalAt(t, p, unix.SIGTERM)
	if r.code != exitTerminated {
		t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, exitTerminated, r.stderr)
	}
	if err := exec.Command("docker", "inspect", ids[0]).Run(); err == nil {
		t.Errorf("the container %s is left after the run", ids[0])
		exec.Command("docker", "rm", "-f", ids[0]).Run()
	}
	if e.status() != "paused" {
		t.Errorf("stored status %q, want paused", e.status())
	}
}

// The full-screen interface stopped by SIGTERM during a command restores
// the terminal, pauses and stores the conversation, ends the command and
// exits 143.
func TestE2ESignalTUI(t *testing.T) {
	t.Parallel()
	e := newE2E(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("c1", "terminal", map[string]any{"command": "echo started-a; sleep 6127"})}})
	e.env = append(e.env, "XDG_CONFIG_HOME="+e.home)
	s := startScreen(t, e, "sigterm", "--persistence-dir", e.data, "--llm-config", e.config, "--confirm", "never")
	s.waitFor("Ask gohands")
	s.typeLine("wait a while")
	s.waitFor("started-a")
	start := time.Now()
	if err := unix.Kill(s.pid(), unix.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code, stderr := s.exited()
	t.Logf("SIGTERM: exit %s after %s", code, time.Since(start).Round(time.Millisecond))
	if code != "143" {
		t.Errorf("exit %s, want 143; stderr:\n%s", code, stderr)
	}
	if left := processesWith("sleep 6127"); len(left) > 0 {
		t.Errorf("the command outlived the interface: pids %v", left)
	}
	bases, _ := filepath.Glob(filepath.Join(e.data, "*", "base_state.json"))
	if len(bases) != 1 {
		t.Fatalf("stored conversations: %v", bases)
	}
	b, _ := os.ReadFile(bases[0])
	var st struct {
		Status string `json:"execution_status"`
	}
	if json.Unmarshal(b, &st); st.Status != "paused" {
		t.Errorf("stored status %q, want paused", st.Status)
	}
}

// SIGTERM while the model call is in flight (the scripted model holds it)
// cancels the call: gohands run exits 143 and the conversation is paused.
func TestE2ESignalRunModelCall(t *testing.T) {
	t.Parallel()
	held := make(chan struct{}, 1)
	gate := make(chan struct{})
	defer close(gate)
	model := llmtest.NewResponder(t, func(llmtest.Request) (llmtest.Reply, error) {
		select {
		case held <- struct{}{}:
		default:
		}
		<-gate
		return llmtest.Reply{Text: "too late"}, nil
	}, nil)
	e := newE2E(t)
	e.env = append(e.env, "LLM_BASE_URL="+model.URL+"/v1")
	p := e.start(e.args("think hard")...)
	select {
	case <-held:
	case <-time.After(2 * time.Minute):
		t.Fatalf("no model call; stderr:\n%s", p.stderr.String())
	}
	r, _ := signalAt(t, p, unix.SIGTERM)
	if r.code != exitTerminated {
		t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, exitTerminated, r.stderr)
	}
	if e.status() != "paused" {
		t.Errorf("status %s, want paused", e.status())
	}
}
