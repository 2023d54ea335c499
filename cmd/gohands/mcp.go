package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/mcp"
)

// connectMCP starts the servers of the --mcp-config file and records them
// in ag's configuration; the caller gives the set's tools to the agent. A
// server that fails is reported on stderr in one line and
// the others still load. The returned Set must be closed when the run ends,
// whatever the error; it is nil only when no file was given. save, if not
// nil, is given each new OAuth state of a server (after a refresh).
func (a *app) connectMCP(ctx context.Context, path string, ag *agent.Agent, logger *slog.Logger, save func(server string, st *mcp.OAuthState) error) (*mcp.Set, error) {
	if path == "" {
		return nil, nil
	}
	cfg, err := mcp.LoadConfigFile(path)
	if err != nil {
		return nil, usageErr("--mcp-config: %v", err)
	}
	// Recorded as the reference records it ({"mcpServers": {...}}), so the
	// stored agent says which servers it had. Secrets encode redacted.
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, &exitErr{code: exitError, msg: fmt.Sprintf("--mcp-config: %v", err)}
	}
	ag.MCPConfig = map[string]json.RawMessage{"mcpServers": raw}

	set, err := mcp.Connect(ctx, cfg, &mcp.Options{Reserved: ag.ToolNames(), Logger: logger, OAuth: &mcp.OAuthOptions{Save: save}})
	if err != nil {
		var se *mcp.ServerError
		for _, s := range set.Errors() {
			fmt.Fprintf(a.stderr, "gohands: MCP server %q did not start: %s\n", s.Server, oneLine(s.Err.Error()))
		}
		if len(set.Errors()) == 0 && !errors.As(err, &se) {
			fmt.Fprintf(a.stderr, "gohands: MCP: %s\n", oneLine(err.Error()))
		}
	}
	return set, nil
}
