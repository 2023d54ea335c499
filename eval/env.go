package eval

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"time"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
)

// A Sandbox makes a fresh, isolated workspace for each task.
type Sandbox interface {
	// Open prepares an empty workspace; name identifies the task run (for
	// labels and logs).
	Open(ctx context.Context, name string) (Env, error)
}

// An Env is one task's workspace, where its setup, its agent and its
// verifier run.
type Env interface {
	// Dir is the workspace's directory, as the agent sees it.
	Dir() string
	// Exec runs command with bash in Dir. exit is its exit status, or -1
	// when it was killed (by a signal or by ctx); err is set only when it
	// could not be run at all.
	Exec(ctx context.Context, command string) (out []byte, exit int, err error)
	// WriteFile writes a file of the workspace, name relative to Dir,
	// creating its directories.
	WriteFile(ctx context.Context, name string, data []byte, perm fs.FileMode) error
	// ReadFile reads a file of the workspace, name relative to Dir.
	ReadFile(ctx context.Context, name string) ([]byte, error)
	// Start starts the agent's conversation in the workspace. Its events
	// are kept under store, a persistence directory on this machine in the
	// standard layout, so that a result can be inspected (gohands show)
	// after the workspace is gone.
	Start(ctx context.Context, agent conversation.Agent, store string, opts *StartOptions) (conversation.Conversation, error)
	// Close removes the workspace.
	Close() error
}

// StartOptions configure Env.Start.
type StartOptions struct {
	// MaxSteps bounds the agent's steps in one run (0: the default).
	MaxSteps int
}

// LocalSandbox gives each task a temporary directory on this machine. Its
// isolation is the directory only: use a container sandbox for agents or
// tasks that must not touch the machine.
type LocalSandbox struct {
	// Root is where the directories are made ("" is os.TempDir).
	Root string
}

// Open implements Sandbox.
func (s *LocalSandbox) Open(ctx context.Context, name string) (Env, error) {
	dir, err := os.MkdirTemp(s.Root, "gohands-eval-"+name+"-")
	if err != nil {
		return nil, fmt.Errorf("eval: workspace: %w", err)
	}
	// The agent sees the resolved path, as its terminal reports it.
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	return &localEnv{dir: dir}, nil
}

type localEnv struct{ dir string }

func (e *localEnv) Dir() string { return e.dir }

func (e *localEnv) Exec(ctx context.Context, command string) ([]byte, int, error) {
	cmd := exec.CommandContext(ctx, "bash", "-c", command)
	cmd.Dir = e.dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	killGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out.Bytes(), 0, nil
	case errors.As(err, &exit):
		return out.Bytes(), exit.ExitCode(), nil // -1 when signalled
	case ctx.Err() != nil:
		return out.Bytes(), -1, nil
	}
	return out.Bytes(), -1, fmt.Errorf("eval: run %q: %w", command, err)
}

func (e *localEnv) path(name string) (string, error) {
	if !filepath.IsLocal(name) {
		return "", fmt.Errorf("eval: %q is not inside the workspace", name)
	}
	return filepath.Join(e.dir, name), nil
}

func (e *localEnv) WriteFile(_ context.Context, name string, data []byte, perm fs.FileMode) error {
	p, err := e.path(name)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, perm)
}

func (e *localEnv) ReadFile(_ context.Context, name string) ([]byte, error) {
	p, err := e.path(name)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}

func (e *localEnv) Start(ctx context.Context, agent conversation.Agent, store string, opts *StartOptions) (conversation.Conversation, error) {
	o := &conversation.LocalOptions{Backend: filestore.NewBackend(store, nil)}
	if opts != nil {
		o.MaxIterations = opts.MaxSteps
	}
	return conversation.New(ctx, agent, e.dir, o)
}

func (e *localEnv) Close() error {
	// The agent may have left read-only directories (a Go module cache).
	filepath.WalkDir(e.dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
	return os.RemoveAll(e.dir)
}

// copyIn copies the files under dir of fsys into env, keeping their
// executable bits.
func copyIn(ctx context.Context, env Env, fsys fs.FS, dir string) error {
	return fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("eval: %s: only regular files can be copied", p)
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		perm := fs.FileMode(0o644)
		if fi, err := d.Info(); err == nil && fi.Mode()&0o111 != 0 {
			perm = 0o755
		}
		rel := p
		if dir != "." {
			rel = p[len(dir)+1:]
		}
		return env.WriteFile(ctx, path.Clean(rel), data, perm)
	})
}
