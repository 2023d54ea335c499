// Package workspace describes where an agent works and lets a program act
// on it: run a command, move files in and out, see what git says changed.
//
// [Local] is a directory on this machine; [Remote] is the workspace of an
// agent server, reached over its /api/bash, /api/file and /api/git routes.
// Both implement [Workspace] and both encode as the reference's JSON
// (kind "LocalWorkspace" and "RemoteWorkspace"), so a conversation's
// persisted state names its workspace the way the Python SDK does.
package workspace

import (
	"context"
	"errors"
	"path"
	"path/filepath"
	"time"
)

// Workspace is a place where an agent works. All methods are safe for
// concurrent use. Paths inside the workspace may be relative: they are
// relative to its working directory.
type Workspace interface {
	// Execute runs command with the system shell and waits for it. A
	// command that exits non-zero or times out is not an error: see
	// CommandResult.ExitCode and TimeoutOccurred. The error is for a
	// command that could not be run at all, or a cancelled ctx.
	Execute(ctx context.Context, command string, opts *ExecOptions) (*CommandResult, error)
	// Upload copies the local file src to dst in the workspace, creating
	// dst's parent directories.
	Upload(ctx context.Context, src, dst string) error
	// Download copies the file src in the workspace to the local path
	// dst, creating dst's parent directories.
	Download(ctx context.Context, src, dst string) error
	// GitChanges lists the files changed in the git repository holding
	// dir, against HEAD, untracked files included. Outside a repository
	// it returns an empty list.
	GitChanges(ctx context.Context, dir string) ([]GitChange, error)
	// GitDiff returns file as in HEAD and as now. Outside a repository
	// both sides are nil.
	GitDiff(ctx context.Context, file string) (*GitDiff, error)
	// Close releases what the workspace holds (connections, a container).
	Close() error
}

// DefaultTimeout is how long Execute lets a command run when
// ExecOptions.Timeout is zero (the reference's 30 s).
const DefaultTimeout = 30 * time.Second

// ExecOptions configure Execute. A nil *ExecOptions is the default.
type ExecOptions struct {
	// Cwd is the command's directory; empty means the working directory.
	Cwd string
	// Timeout ends the command (its whole process group) after this
	// long; zero means DefaultTimeout. The reference counts it in whole
	// seconds, so a remote workspace rounds it up.
	Timeout time.Duration
}

func (o *ExecOptions) cwd() string {
	if o == nil {
		return ""
	}
	return o.Cwd
}

func (o *ExecOptions) timeout() time.Duration {
	if o == nil || o.Timeout <= 0 {
		return DefaultTimeout
	}
	return o.Timeout
}

// CommandResult is the outcome of Execute, in the reference's JSON.
type CommandResult struct {
	Command string `json:"command"`
	// ExitCode is the command's exit status; -1 when it timed out or
	// was killed.
	ExitCode        int    `json:"exit_code"`
	Stdout          string `json:"stdout"`
	Stderr          string `json:"stderr"`
	TimeoutOccurred bool   `json:"timeout_occurred"`
}

// GitChange is a changed file: Status is one of ADDED, DELETED, UPDATED
// and MOVED; Path is relative to the repository, with slashes.
type GitChange struct {
	Status string `json:"status" enum:"ADDED,DELETED,UPDATED,MOVED"`
	Path   string `json:"path"`
}

// GitDiff is a file before (Original, at the base ref) and after
// (Modified, on disk). A missing side is "", and both lose one trailing
// newline, as in the reference.
type GitDiff struct {
	Modified *string `json:"modified"`
	Original *string `json:"original"`
}

// ErrNotAbsolute is returned for a path that must be absolute.
var ErrNotAbsolute = errors.New("workspace: path is not absolute")

// join resolves p against the working directory dir, with the rules of
// the workspace's system (slashes for a remote one).
func join(dir, p string, remote bool) string {
	if remote {
		if path.IsAbs(p) || dir == "" {
			return p
		}
		return path.Join(dir, p)
	}
	if filepath.IsAbs(p) || dir == "" {
		return p
	}
	return filepath.Join(dir, p)
}
