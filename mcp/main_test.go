package mcp

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"golang.org/x/sys/unix"

	"github.com/gohands/gohands/internal/freeport"
)

// npmDir holds the pinned MCP servers, installed by scripts/deps.sh
// (npm ci in that directory).
const npmDir = "testdata/npm"

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		http.DefaultClient.CloseIdleConnections()
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		// opencensus (imported by a provider SDK) starts a worker at init.
		if err := goleak.Find(goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start")); err != nil {
			fmt.Fprintf(os.Stderr, "mcp tests leaked goroutines: %v\n", err)
			code = 1
		}
	}
	if code == 0 {
		if left := leftovers(); len(left) > 0 {
			fmt.Fprintf(os.Stderr, "mcp tests left processes behind:\n%s\n", strings.Join(left, "\n"))
			code = 1
		}
	}
	os.Exit(code)
}

// leftovers lists processes that outlived the tests: children of this
// process (zombies included), and any process running one of the test
// servers (a grandchild reparented elsewhere).
func leftovers() []string {
	abs, _ := filepath.Abs(npmDir)
	me := strconv.Itoa(os.Getpid())
	var out []string
	// Give exiting processes a moment to be reaped.
	for range 50 {
		out = out[:0]
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid := e.Name()
			if _, err := strconv.Atoi(pid); err != nil || pid == me {
				continue
			}
			stat, err := os.ReadFile("/proc/" + pid + "/stat")
			if err != nil {
				continue
			}
			// Fields after the command (which may hold spaces) start after ')'.
			f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
			cmdline, _ := os.ReadFile("/proc/" + pid + "/cmdline")
			cmd := strings.ReplaceAll(string(cmdline), "\x00", " ")
			if (len(f) > 1 && f[1] == me) || strings.Contains(cmd, abs) {
				out = append(out, pid+": "+cmd)
			}
		}
		if len(out) == 0 {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return out
}

// serverScript returns the absolute path of a pinned server's entry
// point. In CI (CI=true) a missing server fails the test; elsewhere the
// test is skipped with the command that installs it.
func serverScript(t testing.TB, pkg string) string {
	t.Helper()
	p, _ := filepath.Abs(filepath.Join(npmDir, "node_modules/@modelcontextprotocol", pkg, "dist/index.js"))
	_, err := os.Stat(p)
	if _, lerr := exec.LookPath("node"); lerr != nil {
		err = lerr
	}
	if err != nil {
		msg := fmt.Sprintf("MCP test server %s not installed (%v); run scripts/deps.sh", pkg, err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

func everythingStdio(t testing.TB) Server {
	return Server{Command: "node", Args: []string{serverScript(t, "server-everything"), "stdio"}}
}

func freePort(t testing.TB) int {
	t.Helper()
	p, err := freeport.Pick()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// startHTTPServer runs server-everything with an HTTP transport ("sse" or
// "streamableHttp") and returns its base URL. The server is killed at the
// end of the test.
func startHTTPServer(t testing.TB, mode string) string {
	t.Helper()
	url, _ := startHTTPServerOn(t, mode, freePort(t))
	return url
}

// startHTTPServerOn is startHTTPServer on a given port; kill stops the
// server early.
func startHTTPServerOn(t testing.TB, mode string, port int) (url string, kill func()) {
	t.Helper()
	script := serverScript(t, "server-everything")
	cmd := exec.Command("node", script, mode)
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	kill = func() {
		unix.Kill(-cmd.Process.Pid, unix.SIGKILL)
		<-done
	}
	t.Cleanup(kill)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	// A hang guard: node takes seconds to start on a loaded machine.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return "http://" + addr, kill
		}
		select {
		case <-done:
			t.Fatalf("server-everything %s exited: %s", mode, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			kill() // the logs are read once their writer has stopped
			t.Fatalf("server-everything %s did not listen on %s: %s", mode, addr, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func connect(t testing.TB, cfg Config, opts *Options) *Set {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	set, err := Connect(ctx, cfg, opts)
	t.Cleanup(func() {
		if err := set.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	return set
}
