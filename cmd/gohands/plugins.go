package main

import (
	"strings"

	"github.com/gohands/gohands/plugin"
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

// applyPlugins reads the --plugin sources into p.plugins, the opened
// conversation's Plugins (conversation.LocalOptions.Plugins): a local
// conversation fetches and loads them when it opens, merging their
// skills, MCP servers (which its agent connects) and sub-agents into the
// agent and their hooks after the workspace's; with --server or
// --sandbox they go in the start request, for the agent server to fetch
// from where it is.
func (a *app) applyPlugins(f *runFlags, p *prepared) error {
	srcs, err := parsePluginSources(f.plugins)
	if err != nil {
		return err
	}
	p.plugins = srcs
	return nil
}
