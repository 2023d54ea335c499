package eval

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/open"
	"github.com/gohands/gohands/workspace"
	"github.com/gohands/gohands/workspace/docker"
)

// containerStore is where a DockerSandbox mounts a task's conversation
// store: the agent server of the image keeps its conversations there.
const containerStore = "/var/lib/gohands/conversations"

// DockerSandbox gives each task a fresh container of the gohands image
// (scripts/image.sh): setup, agent and verifier run in it, the agent in the
// container's agent server, so neither the task nor the agent touches this
// machine beyond what Options grants. The task's conversation store is
// mounted into the container, so the conversation is in the results
// directory, in the standard layout, as it is written.
type DockerSandbox struct {
	// Options configure each container (nil: workspace/docker's defaults,
	// on the engine's bridge network). A model server on this machine's
	// loopback needs Network "host". Volumes and Env are kept; the store
	// mount and its variable are added.
	Options *docker.Options
}

// Open implements Sandbox: it starts the container and waits for its
// agent server.
func (s *DockerSandbox) Open(ctx context.Context, name, store string) (Env, error) {
	store, err := filepath.Abs(store)
	if err != nil {
		return nil, fmt.Errorf("eval: store: %w", err)
	}
	if err := os.MkdirAll(store, 0o755); err != nil {
		return nil, fmt.Errorf("eval: store: %w", err)
	}
	var o docker.Options
	if s.Options != nil {
		o = *s.Options
	}
	o.Volumes = append(slices.Clip(o.Volumes), store+":"+containerStore)
	o.Env = maps.Clone(o.Env)
	if o.Env == nil {
		o.Env = map[string]string{}
	}
	o.Env["OH_CONVERSATIONS_PATH"] = containerStore
	o.Labels = maps.Clone(o.Labels)
	if o.Labels == nil {
		o.Labels = map[string]string{}
	}
	o.Labels["org.gohands.eval"] = name
	ws, err := docker.New(ctx, &o)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	return &dockerEnv{Workspace: ws}, nil
}

type dockerEnv struct {
	*docker.Workspace
}

func (e *dockerEnv) Dir() string { return e.WorkingDir }

func (e *dockerEnv) Start(ctx context.Context, agent conversation.Agent, opts *StartOptions) (conversation.Conversation, error) {
	o := &conversation.LocalOptions{}
	if opts != nil {
		o.MaxIterations = opts.MaxSteps
	}
	// The container's agent server runs it (open.Conversation
	// opens it there: the workspace has an AgentServer).
	return open.Conversation(ctx, agent, e.Workspace, o)
}

// Close gives the store's files, written by the container's user, to this
// process's user, then removes the container.
func (e *dockerEnv) Close() error {
	var err error
	if uid := os.Getuid(); uid > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		owner := strconv.Itoa(uid) + ":" + strconv.Itoa(os.Getgid())
		var res *workspace.CommandResult
		res, err = e.Execute(ctx, "chown -R "+owner+" "+containerStore, &workspace.ExecOptions{Timeout: time.Minute})
		if err == nil && res.ExitCode != 0 {
			err = fmt.Errorf("eval: chown of the store: %s", res.Stderr)
		}
	}
	return errors.Join(err, e.Workspace.Close())
}
