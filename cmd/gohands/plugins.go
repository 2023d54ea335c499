package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"strings"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/hook"
	"github.com/gohands/gohands/plugin"
	"github.com/gohands/gohands/skill"
)

// parsePluginSources reads --plugin values: SOURCE or SOURCE#REF, SOURCE
// being github:owner/repo[/path], a git URL or a directory.
func parsePluginSources(specs []string) ([]plugin.Source, error) {
	var srcs []plugin.Source
	for _, s := range specs {
		src := plugin.Source{Source: s}
		if loc, ref, ok := strings.Cut(s, "#"); ok {
			if ref == "" {
				return nil, usageErr("--plugin %q: empty ref after #", s)
			}
			src = plugin.Source{Source: loc, Ref: &ref}
		}
		if err := src.Validate(); err != nil {
			return nil, usageErr("--plugin %q: %v", s, err)
		}
		srcs = append(srcs, src)
	}
	return srcs, nil
}

// applyPlugins fetches the --plugin sources and merges them into ag (with
// --server, it leaves them to the agent server), as a start request's
// plugins: their skills into the agent context, their
// MCP servers into the ones the run connects (returned, nil when none),
// their hooks after the workspace's into p.hookConfig.
func (a *app) applyPlugins(ctx context.Context, f *runFlags, p *prepared, ag *agent.Agent) (*agent.Agent, map[string]json.RawMessage, error) {
	srcs, err := parsePluginSources(f.plugins)
	if err != nil || len(srcs) == 0 {
		return ag, nil, err
	}
	if f.server != "" {
		// Sent in the start request: the server fetches them, from
		// where it is.
		p.plugins = srcs
		return ag, nil, nil
	}
	home, _ := os.UserHomeDir()
	opts := &plugin.FetchOptions{CacheDir: plugin.CacheDir(skill.PersistenceDir(home))}
	set, _, err := plugin.LoadSources(ctx, srcs, opts)
	if err != nil {
		return nil, nil, &exitErr{code: exitError, msg: fmt.Sprintf("--plugin: %v", err)}
	}
	b, err := ag.WithPlugins(&plugin.Set{Skills: set.Skills})
	if err != nil {
		return nil, nil, &exitErr{code: exitError, msg: fmt.Sprintf("--plugin: %v", err)}
	}
	if !set.Hooks.IsEmpty() {
		own, _, err := hook.Load(p.workDir)
		if err != nil {
			return nil, nil, usageErr("hooks: %v", err)
		}
		if p.hookConfig, err = json.Marshal(plugin.MergeHooks(own, set.Hooks)); err != nil {
			return nil, nil, &exitErr{code: exitError, msg: fmt.Sprintf("--plugin: hooks: %v", err)}
		}
	}
	return b, set.MCPConfig, nil
}

// withServers returns an mcp.json file of the servers of the mcp.json
// file path (none when "") and extra, which win by name.
func withServers(path string, extra map[string]json.RawMessage) (string, error) {
	servers := map[string]json.RawMessage{}
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		var file struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		}
		if err := json.Unmarshal(data, &file); err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		maps.Copy(servers, file.MCPServers)
	}
	maps.Copy(servers, extra)
	return writeMCPServers(servers)
}
