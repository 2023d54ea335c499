package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/gohands/gohands/server"
	"github.com/gohands/gohands/server/sandbox"
	"github.com/gohands/gohands/workspace/docker"
)

// sandboxFlags configure `serve --runtime docker` and `run --sandbox docker`.
type sandboxFlags struct {
	image    string
	dir      string
	network  string
	cpus     float64
	memory   string
	pids     int64
	gpus     bool
	idleStop time.Duration
}

func (s *sandboxFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&s.image, "image", "", "agent-server `image` of the containers (default $GOHANDS_IMAGE or "+docker.DefaultImage+", built by scripts/image.sh)")
	fl.StringVar(&s.dir, "sandbox-dir", "", "with --runtime docker: `directory` holding each conversation's workspace and state (default: sandboxes beside the conversations path)")
	fl.StringVar(&s.network, "network", "", "with --runtime docker: the containers' Docker network (default: the engine's bridge)")
	fl.Float64Var(&s.cpus, "cpus", 0, "with --runtime docker: CPUs per container (0: no limit)")
	fl.StringVar(&s.memory, "memory", "", "with --runtime docker: memory per container, e.g. 2g or 512m (default: no limit)")
	fl.Int64Var(&s.pids, "pids", 0, "with --runtime docker: processes per container (0: no limit)")
	fl.BoolVar(&s.gpus, "gpus", false, "with --runtime docker: give every container all GPUs")
	fl.DurationVar(&s.idleStop, "idle-stop", sandbox.DefaultIdleStop, "with --runtime docker: stop a container unused this long (it restarts on the next request; negative: never)")
}

// containerOptions turns the flags into container options.
func (s *sandboxFlags) containerOptions() (*docker.Options, error) {
	mem, err := parseBytes(s.memory)
	if err != nil {
		return nil, usageErr("--memory %q: %v", s.memory, err)
	}
	return &docker.Options{Image: s.image, Network: s.network, CPUs: s.cpus, Memory: mem, Pids: s.pids, GPUs: s.gpus}, nil
}

func newSandboxServer(f *sandboxFlags, opts *server.Options) (*sandbox.Server, error) {
	co, err := f.containerOptions()
	if err != nil {
		return nil, err
	}
	dir := f.dir
	if dir == "" {
		dir = filepath.Join(filepath.Dir(filepath.Clean(opts.ConversationsPath)), "sandboxes")
	}
	return sandbox.New(&sandbox.Options{Dir: dir, Container: co, SessionAPIKeys: opts.SessionAPIKeys, IdleStop: f.idleStop, Logger: opts.Logger})
}

// parseBytes reads a size such as 512m or 2g (binary units); "" is 0.
func parseBytes(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	mult := int64(1)
	switch strings.ToLower(s[len(s)-1:]) {
	case "k":
		mult = 1 << 10
	case "m":
		mult = 1 << 20
	case "g":
		mult = 1 << 30
	}
	if mult > 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("want a size such as 512m or 2g")
	}
	return n * mult, nil
}
