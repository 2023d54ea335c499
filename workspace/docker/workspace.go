package docker

import (
	"context"
	"errors"

	"github.com/gohands/gohands/workspace"
)

// DefaultWorkingDir is the agent's directory in the container.
const DefaultWorkingDir = "/workspace"

// Workspace is a workspace.Workspace in a container of the gohands image:
// the agent server started there runs commands, moves files and answers
// git questions (as a workspace.Remote), and conversations created with
// this workspace run in that server. Close removes the container.
//
//	ws, err := docker.New(ctx, &docker.Options{Volumes: []string{"./project:/workspace"}})
//	if err != nil { ... }
//	defer ws.Close()
//
// then use ws wherever a workspace.Local was used.
type Workspace struct {
	*workspace.Remote
	c *Container
}

var _ workspace.Workspace = (*Workspace)(nil)

// New starts a container as Start does and returns its workspace, whose
// working directory is workingDir (empty: DefaultWorkingDir).
func New(ctx context.Context, opts *Options) (*Workspace, error) {
	c, err := Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	wd := DefaultWorkingDir
	if opts != nil && opts.WorkingDir != "" {
		wd = opts.WorkingDir
	}
	return &Workspace{Remote: &workspace.Remote{Host: c.URL(), APIKey: c.SessionKey(), WorkingDir: wd}, c: c}, nil
}

// Container is the workspace's container.
func (w *Workspace) Container() *Container { return w.c }

// Pause freezes the container; calls wait until Resume.
func (w *Workspace) Pause(ctx context.Context) error { return w.c.Pause(ctx) }

// Resume thaws the container and waits for its server.
func (w *Workspace) Resume(ctx context.Context) error { return w.c.Resume(ctx) }

// Close stops and removes the container.
func (w *Workspace) Close() error {
	return errors.Join(w.Remote.Close(), w.c.Close())
}
