package acp

import (
	"errors"
	"fmt"
	"github.com/gohands/gohands/internal/procgroup"
	"os/exec"
	"sync"
	"syscall"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/uuid"
)

// defaultOutputLimit caps a terminal's kept output when the server sets
// no outputByteLimit.
const defaultOutputLimit = 1 << 20

// terminals are the commands the server runs through terminal/*.
type terminals struct {
	dir string
	mu  sync.Mutex
	m   map[string]*term
}

func newTerminals(dir string) *terminals { return &terminals{dir: dir, m: map[string]*term{}} }

// term is one command and its output, of which the last limit bytes are
// kept (the protocol truncates from the start).
type term struct {
	cmd  *exec.Cmd
	done chan struct{}

	mu        sync.Mutex
	out       []byte
	limit     int
	truncated bool
	status    *sdk.TerminalExitStatus
}

func (t *term) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.out = append(t.out, p...)
	if len(t.out) > t.limit {
		cut := len(t.out) - t.limit
		for cut < len(t.out) && !utf8.RuneStart(t.out[cut]) {
			cut++
		}
		t.out = append(t.out[:0], t.out[cut:]...)
		t.truncated = true
	}
	return len(p), nil
}

func (t *term) snapshot() (string, bool, *sdk.TerminalExitStatus) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.out), t.truncated, t.status
}

func (t *term) kill() {
	procgroup.Kill(t.cmd)
}

func (ts *terminals) create(command string, args []string, cwd string, env map[string]string, limit int) (string, error) {
	if limit <= 0 {
		limit = defaultOutputLimit
	}
	cmd := exec.Command(command, args...)
	if len(args) == 0 {
		// A bare command line is what servers send for shell commands.
		cmd = exec.Command("/bin/sh", "-c", command)
	}
	cmd.Dir = cwd
	cmd.Env = environ(env)
	procgroup.Own(cmd)
	t := &term{cmd: cmd, done: make(chan struct{}), limit: limit}
	cmd.Stdout, cmd.Stderr = t, t
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("terminal: %w", err)
	}
	go func() {
		err := cmd.Wait()
		st := &sdk.TerminalExitStatus{}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				s := ws.Signal().String()
				st.Signal = &s
			} else {
				c := ee.ExitCode()
				st.ExitCode = &c
			}
		} else {
			c := 0
			st.ExitCode = &c
		}
		t.mu.Lock()
		t.status = st
		t.mu.Unlock()
		close(t.done)
	}()
	id := "term-" + uuid.NewString()
	ts.mu.Lock()
	ts.m[id] = t
	ts.mu.Unlock()
	return id, nil
}

func (ts *terminals) get(id string) (*term, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t, ok := ts.m[id]
	if !ok {
		return nil, notFound(id)
	}
	return t, nil
}

func (ts *terminals) release(id string) error {
	ts.mu.Lock()
	t, ok := ts.m[id]
	delete(ts.m, id)
	ts.mu.Unlock()
	if !ok {
		return notFound(id)
	}
	t.kill()
	return nil
}

func (ts *terminals) closeAll() {
	ts.mu.Lock()
	m := ts.m
	ts.m = map[string]*term{}
	ts.mu.Unlock()
	for _, t := range m {
		t.kill()
		<-t.done
	}
}
