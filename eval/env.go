package eval

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/conversation/open"
	"github.com/gohands/gohands/workspace"
)

// A Sandbox makes a fresh, isolated workspace for each task.
type Sandbox interface {
	// Open prepares an empty workspace; name identifies the task run (for
	// labels and logs). The agent's conversations are to be kept under
	// store, a directory on this machine, in the standard layout, so that
	// a result can be inspected (gohands show) after the workspace is
	// gone.
	Open(ctx context.Context, name, store string) (Env, error)
}

// An Env is one task's workspace, where its setup, its agent and its
// verifier run. Close removes it.
type Env interface {
	workspace.Workspace
	// Dir is the workspace's working directory, as the agent sees it.
	Dir() string
	// Start starts the agent's conversation in the workspace, kept in the
	// store given to Open.
	Start(ctx context.Context, agent conversation.Agent, opts *StartOptions) (conversation.Conversation, error)
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
func (s *LocalSandbox) Open(ctx context.Context, name, store string) (Env, error) {
	dir, err := os.MkdirTemp(s.Root, "gohands-eval-"+name+"-")
	if err != nil {
		return nil, fmt.Errorf("eval: workspace: %w", err)
	}
	// The agent sees the resolved path, as its terminal reports it.
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	return &localEnv{Local: &workspace.Local{WorkingDir: dir}, store: store}, nil
}

type localEnv struct {
	*workspace.Local
	store string
}

func (e *localEnv) Dir() string { return e.WorkingDir }

func (e *localEnv) Start(ctx context.Context, agent conversation.Agent, opts *StartOptions) (conversation.Conversation, error) {
	o := &conversation.LocalOptions{Backend: filestore.NewBackend(e.store, nil)}
	if opts != nil {
		o.MaxIterations = opts.MaxSteps
	}
	return open.Conversation(ctx, agent, e.Local, o)
}

func (e *localEnv) Close() error { return removeAll(e.WorkingDir) }

// removeAll removes dir, also when the agent left read-only directories in
// it (a Go module cache).
func removeAll(dir string) error {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// writeFile writes data to name in the workspace (relative to its
// working directory) through a local temporary file.
func writeFile(ctx context.Context, ws workspace.Workspace, name string, data []byte) error {
	f, err := os.CreateTemp("", "gohands-eval-upload-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return ws.Upload(ctx, f.Name(), name)
}

// readFile reads name in the workspace through a local temporary file.
func readFile(ctx context.Context, ws workspace.Workspace, name string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "gohands-eval-download-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "f")
	if err := ws.Download(ctx, name, p); err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}

// copyIn copies the files under dir of fsys into the workspace, then
// marks the executable ones.
func copyIn(ctx context.Context, ws workspace.Workspace, fsys fs.FS, dir string) error {
	var executables []string
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
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
		rel := p
		if dir != "." {
			rel = p[len(dir)+1:]
		}
		if fi, err := d.Info(); err == nil && fi.Mode()&0o111 != 0 {
			executables = append(executables, shellQuote(rel))
		}
		return writeFile(ctx, ws, rel, data)
	})
	if err != nil || len(executables) == 0 {
		return err
	}
	res, err := ws.Execute(ctx, "chmod +x -- "+strings.Join(executables, " "), nil)
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("chmod: %s", res.Stderr)
	}
	return err
}
