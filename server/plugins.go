package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/hook"
	"github.com/gohands/gohands/plugin"
)

// fetchOptions are where this server keeps fetched plugins.
func (s *Server) fetchOptions() *plugin.FetchOptions {
	return &plugin.FetchOptions{CacheDir: plugin.CacheDir(s.opts.PersistenceDir)}
}

// decodePlugins reads the start request's "plugins": a list of plugin
// sources, each checked.
func decodePlugins(raw json.RawMessage) ([]plugin.Source, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, nil
	}
	var srcs []plugin.Source
	if err := json.Unmarshal(t, &srcs); err != nil {
		return nil, invalid("plugins: a list of {source, ref, repo_path}: "+err.Error(), "body", "plugins")
	}
	for i := range srcs {
		if err := srcs[i].Validate(); err != nil {
			return nil, invalid(err.Error(), "body", "plugins", i)
		}
	}
	return srcs, nil
}

// applyPlugins fetches and loads the start request's plugins and merges
// them into the agent (skills and MCP servers) and the conversation's
// hooks (after the request's own), as the reference does when the
// conversation first runs. The merged agent is what is stored, so a
// resumed conversation needs no fetch. A plugin that cannot be fetched or
// loaded is a 400 naming its source.
func (s *Server) applyPlugins(ctx context.Context, raw json.RawMessage, ag conversation.Agent, opts *conversation.LocalOptions) (conversation.Agent, error) {
	srcs, err := decodePlugins(raw)
	if err != nil || len(srcs) == 0 {
		return ag, err
	}
	a, ok := ag.(*agent.Agent)
	if !ok {
		return nil, invalid("plugins: only an Agent takes plugins", "body", "plugins")
	}
	set, _, err := plugin.LoadSources(ctx, srcs, s.fetchOptions())
	if err != nil {
		return nil, statusErr(http.StatusBadRequest, "%s", err.Error())
	}
	b, err := a.WithPlugins(set)
	if err != nil {
		return nil, invalid(err.Error(), "body", "agent")
	}
	if !set.Hooks.IsEmpty() {
		var own *hook.Config
		if len(opts.HookConfig) > 0 {
			if own, err = hook.Parse(opts.HookConfig); err != nil {
				return nil, invalid(err.Error(), "body", "hook_config")
			}
		}
		merged, err := json.Marshal(plugin.MergeHooks(own, set.Hooks))
		if err != nil {
			return nil, fmt.Errorf("plugins: hooks: %w", err)
		}
		opts.HookConfig = merged
	}
	return b, nil
}
