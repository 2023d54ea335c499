package mcp

import (
	"github.com/gohands/gohands/internal/procgroup"
	"os/exec"
	"sync"
)

// process is a stdio server's process. It runs in its own process group so
// that Close can stop whatever it started (npx, shell wrappers), and its
// stderr is kept (the last few KB) to explain failures.
type process struct {
	cmd    *exec.Cmd
	stderr *tailBuffer
	once   sync.Once
}

func newProcess(cmd *exec.Cmd) *process {
	p := &process{cmd: cmd, stderr: &tailBuffer{max: 4 << 10}}
	cmd.Stderr = p.stderr
	setProcAttr(cmd)
	return p
}

// kill kills the process group, once. It is called after the process has
// been asked to exit (stdin closed) or found dead.
func (p *process) kill() {
	p.once.Do(func() {
		if p.cmd.Process != nil {
			procgroup.Kill(p.cmd)
		}
	})
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
