package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gohands/gohands/internal/procgroup"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// killGrace is how long a server gets to exit after its stdin closes and
// after SIGTERM before its process group is killed.
const killGrace = 2 * time.Second

// proc is a running ACP server: its process group and its stdio.
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *io.PipeReader // JSON-RPC lines of stdout, for the SDK
	stderr *tail

	exited  chan struct{} // closed when the process has been reaped
	exitErr error         // set before exited closes

	mu        sync.Mutex
	malformed error // first malformed JSON-RPC message seen
}

// spawn starts argv in its own process group with env, in dir.
func spawn(argv []string, env []string, dir string) (*proc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = dir
	procgroup.Own(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, stdin: stdin, stderr: &tail{max: 4096}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	r, w := io.Pipe()
	p.out = r
	go p.filter(stdout, w)
	go func() {
		err := cmd.Wait()
		p.exitErr = err
		close(p.exited)
	}()
	return p, nil
}

// filter copies the JSON-RPC messages of the server's stdout to w. Lines
// that do not start with '{' are logs some servers print to stdout, and
// are dropped (as the reference does); a line that starts with '{' but is
// not a JSON-RPC 2.0 message breaks the connection, since a peer that
// garbles its messages cannot be trusted with the rest.
func (p *proc) filter(stdout io.Reader, w *io.PipeWriter) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 100<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var msg struct {
			JSONRPC string `json:"jsonrpc"`
		}
		if err := json.Unmarshal(line, &msg); err != nil || msg.JSONRPC != "2.0" {
			if err == nil {
				err = errors.New(`no "jsonrpc": "2.0"`)
			}
			bad := fmt.Errorf("the ACP server sent a malformed JSON-RPC message (%v): %.200s", err, line)
			p.mu.Lock()
			p.malformed = bad
			p.mu.Unlock()
			w.CloseWithError(bad)
			io.Copy(io.Discard, stdout) // let the server finish writing
			return
		}
		if _, err := w.Write(append(line, '\n')); err != nil {
			return
		}
	}
	w.CloseWithError(sc.Err())
}

// broken returns why the connection broke, if the server is to blame: a
// malformed message, or its exit.
func (p *proc) broken() error {
	p.mu.Lock()
	bad := p.malformed
	p.mu.Unlock()
	if bad != nil {
		return bad
	}
	select {
	case <-p.exited:
		return p.exitError()
	default:
		return nil
	}
}

// exitError describes the server's exit, with the end of its stderr.
func (p *proc) exitError() error {
	status := "exited"
	if p.exitErr != nil {
		status = p.exitErr.Error()
	} else {
		status = "exited with status 0"
	}
	msg := "the ACP server " + strings.TrimPrefix(status, "exit ")
	if t := strings.TrimSpace(p.stderr.String()); t != "" {
		msg += "; stderr: " + t
	}
	return errors.New(msg)
}

// stop ends the server: stdin is closed (ACP servers exit at end of
// input), then its process group gets SIGTERM and finally SIGKILL. The
// group is killed even when the leader is gone, so grandchildren (the CLI
// an adapter starts) do not outlive it.
func (p *proc) stop() {
	p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(killGrace):
		procgroup.Terminate(p.cmd)
		select {
		case <-p.exited:
		case <-time.After(killGrace):
		}
	}
	procgroup.Kill(p.cmd)
	<-p.exited
	p.out.Close()
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// environ returns the server's environment: ours, without what npm
// exports to its children (it would make npx resolve against our
// package) and the marker that makes Claude Code refuse to nest, plus
// extra, which wins.
func environ(extra map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "INIT_CWD" || k == "CLAUDECODE" || strings.HasPrefix(k, "npm_") || strings.HasPrefix(k, "NPM_") {
			continue
		}
		if _, ok := extra[k]; ok {
			continue
		}
		env = append(env, kv)
	}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}
