package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/gohands/gohands/internal/procgroup"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/gohands/gohands/event"
)

// Local is a working directory on the machine the program runs on. It
// encodes as the reference's {"working_dir":...,"kind":"LocalWorkspace"}.
// The zero value works in the process's directory.
type Local struct {
	WorkingDir string `json:"working_dir"`
}

func init() { event.RegisterKind[Local]("LocalWorkspace") }

var _ Workspace = (*Local)(nil)

// path resolves p against the working directory.
func (w *Local) path(p string) string { return join(w.WorkingDir, p, false) }

// Execute runs command with the system shell in its own process group,
// killed whole on timeout or when ctx is cancelled.
func (w *Local) Execute(ctx context.Context, command string, opts *ExecOptions) (*CommandResult, error) {
	timeout := opts.timeout()
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := shell(tctx, command)
	cmd.Dir = w.WorkingDir
	if c := opts.cwd(); c != "" {
		cmd.Dir = w.path(c)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	procgroup.Own(cmd)
	cmd.Cancel = func() error { procgroup.Kill(cmd); return nil }
	// Children that keep the pipes open must not hold Execute up.
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	res := &CommandResult{Command: command, Stdout: out.String(), Stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case tctx.Err() != nil:
		res.ExitCode, res.TimeoutOccurred = -1, true
		res.Stderr += fmt.Sprintf("Command timed out after %v", timeout)
	case err == nil:
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
	case errors.Is(err, exec.ErrWaitDelay):
		// The command exited; a child it left still holds its output.
	default:
		return nil, fmt.Errorf("workspace: run %q: %w", command, err)
	}
	return res, nil
}

// Upload copies the local file src to dst in the workspace.
func (w *Local) Upload(ctx context.Context, src, dst string) error {
	return copyFile(src, w.path(dst))
}

// Download copies src in the workspace to the local path dst.
func (w *Local) Download(ctx context.Context, src, dst string) error {
	return copyFile(w.path(src), dst)
}

// copyFile copies the regular file src to dst, creating dst's parents.
// dst is written to a temporary file first, so a failed copy leaves no
// half file behind.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	defer in.Close()
	if fi, err := in.Stat(); err != nil {
		return fmt.Errorf("workspace: %w", err)
	} else if !fi.Mode().IsRegular() {
		return fmt.Errorf("workspace: %s is not a file", src)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".upload-*")
	if err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	_, err = io.Copy(tmp, in)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("workspace: copy %s to %s: %w", src, dst, err)
	}
	return nil
}

// GitChanges lists the changes in the repository holding dir.
func (w *Local) GitChanges(ctx context.Context, dir string) ([]GitChange, error) {
	return Changes(ctx, w.path(dir), "")
}

// GitDiff returns file at HEAD and on disk.
func (w *Local) GitDiff(ctx context.Context, file string) (*GitDiff, error) {
	return Diff(ctx, w.path(file), "")
}

// Close does nothing: a local workspace holds nothing.
func (w *Local) Close() error { return nil }
