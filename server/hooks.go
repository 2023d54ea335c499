package server

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gohands/gohands/api/protocol"
	"github.com/gohands/gohands/hook"
)

func (s *Server) hooksRoutes() []*route {
	return []*route{
		{method: "POST", path: "/api/hooks", summary: "The hooks of a project (its .openhands/hooks.json), null without any", tag: "Hooks", body: protocol.HooksRequest{}, resp: protocol.HooksResponse{}, errors: []int{422}, h: handle(s, nil, s.handleHooks)},
	}
}

// handleHooks reads project_dir's .openhands/hooks.json only (the user's
// own is not merged, as the reference does not). A missing, empty or
// invalid file answers null: the client then shows no hooks, and the
// reason is logged.
func (s *Server) handleHooks(in *request[none, protocol.HooksRequest]) (any, error) {
	dir := in.body.ProjectDir
	if dir == nil || *dir == "" {
		return protocol.HooksResponse{}, nil
	}
	p := filepath.Join(*dir, hook.ConfigFile)
	data, err := os.ReadFile(p)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("hooks: cannot read", "path", p, "err", err)
		}
		return protocol.HooksResponse{}, nil
	}
	cfg, err := hook.Parse(data)
	if err != nil {
		s.log.Warn("hooks: invalid", "path", p, "err", err)
		return protocol.HooksResponse{}, nil
	}
	if cfg.IsEmpty() {
		return protocol.HooksResponse{}, nil
	}
	return protocol.HooksResponse{HookConfig: cfg}, nil
}
