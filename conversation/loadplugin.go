package conversation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gohands/gohands/hook"
	"github.com/gohands/gohands/plugin"
)

// ErrCannotLoadPlugin is returned (wrapped, with the reason) by
// LoadPlugin for a plugin that cannot be resolved, fetched or loaded, or
// an agent that registers no marketplace or takes no plugins.
var ErrCannotLoadPlugin = errors.New("conversation: plugin cannot be loaded")

// LoadPlugin implements Conversation. The plugin is resolved, fetched
// (into the user's plugin cache, as the agent's marketplaces are at
// start) and loaded at once, so its errors are LoadPlugin's; between runs
// the agent is then replaced (ReplaceAgent: the next step starts the new
// agent's runner), during a Run the run loop replaces it before its next
// step. The new runner connects the plugin's MCP servers; its tools (a
// terminal's working directory, say) start afresh. The reference holds
// its caller until the step in progress ends; LoadPlugin returns once the
// change is queued.
func (c *LocalConversation) LoadPlugin(ctx context.Context, ref string) error {
	if c.isClosed() {
		return ErrConversationClosed
	}
	c.startMu.Lock()
	a := c.agent
	c.startMu.Unlock()
	regs, err := a.Marketplaces()
	switch {
	case err != nil:
		return fmt.Errorf("%w: %w", ErrCannotLoadPlugin, err)
	case len(regs) == 0:
		return fmt.Errorf("%w: the agent's context registers no marketplace (agent_context.registered_marketplaces)", ErrCannotLoadPlugin)
	}
	regs = plugin.ExpandRegistrations(regs, c.secrets.Lookup(ctx))
	src, err := plugin.ResolveRef(ctx, regs, ref, nil)
	if errors.Is(err, plugin.ErrNotFound) {
		return fmt.Errorf("conversation: load plugin: %w", err)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCannotLoadPlugin, err)
	}
	set, _, err := plugin.LoadSources(ctx, []plugin.Source{src}, nil)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCannotLoadPlugin, err)
	}
	c.lockBetweenRuns()
	defer c.runMu.Unlock()
	switch {
	case c.closed:
		return ErrConversationClosed
	case c.running:
		c.loads = append(c.loads, set) // applied by the run loop before its next step
		return nil
	}
	return c.addPlugins(set)
}

// addPlugins replaces the agent with one that has set's skills and MCP
// servers, and adds set's hooks to the conversation's. No step may run.
func (c *LocalConversation) addPlugins(set *plugin.Set) error {
	c.startMu.Lock()
	a := c.agent
	c.startMu.Unlock()
	b, err := a.AddPlugins(set)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCannotLoadPlugin, err)
	}
	var hooks json.RawMessage
	if !set.Hooks.IsEmpty() {
		if hooks, err = c.hooksWith(set.Hooks); err != nil {
			return fmt.Errorf("%w: %w", ErrCannotLoadPlugin, err)
		}
	}
	return c.replaceAgent(b, hooks)
}

// hooksWith returns the conversation's hook configuration (the stored
// one, or else the workspace's hooks file, which the agent would have
// run) with add after it.
func (c *LocalConversation) hooksWith(add *hook.Config) (json.RawMessage, error) {
	var (
		own *hook.Config
		err error
	)
	if raw := bytes.TrimSpace(c.state.Fields().HookConfig); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		own, err = hook.Parse(raw)
	} else {
		own, _, err = hook.Load(c.workDir)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(plugin.MergeHooks(own, add))
}

// applyLoads adds the plugins LoadPlugin queued during the run, if any,
// and returns the runner to step with: the new agent's.
func (c *LocalConversation) applyLoads(ctx context.Context, r Runner) (Runner, error) {
	c.runMu.Lock()
	sets := c.loads
	c.loads = nil
	c.runMu.Unlock()
	if len(sets) == 0 {
		return r, nil
	}
	for _, set := range sets {
		if err := c.addPlugins(set); err != nil {
			return nil, err
		}
	}
	return c.start(ctx)
}

// addLeftLoads adds the plugins queued during a run that ended before
// its next step; runMu is held. LoadPlugin has answered already: a
// failure is logged.
func (c *LocalConversation) addLeftLoads() {
	for _, set := range c.loads {
		if err := c.addPlugins(set); err != nil {
			c.log.Error("conversation: a plugin loaded during the run could not be added", "plugins", set.Names, "err", err)
		}
	}
	c.loads = nil
}

// withPlugins returns agent with the plugins of o merged in, and sets
// o.HookConfig to the hooks with theirs after (see LocalOptions.Plugins).
func withPlugins(ctx context.Context, agent Agent, workDir string, o *LocalOptions) (Agent, error) {
	if len(o.Plugins) == 0 {
		return agent, nil
	}
	set, err := loadSources(ctx, o.Plugins, o.PluginFetch)
	if err != nil {
		return nil, err
	}
	b, err := agent.AddPlugins(set)
	if err != nil {
		return nil, fmt.Errorf("conversation: plugins: %w", err)
	}
	if set.Hooks.IsEmpty() {
		return b, nil
	}
	var own *hook.Config
	if raw := bytes.TrimSpace(o.HookConfig); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		own, err = hook.Parse(raw)
	} else {
		own, _, err = hook.Load(workDir)
	}
	if err != nil {
		return nil, fmt.Errorf("conversation: plugins: hooks: %w", err)
	}
	if o.HookConfig, err = json.Marshal(plugin.MergeHooks(own, set.Hooks)); err != nil {
		return nil, fmt.Errorf("conversation: plugins: hooks: %w", err)
	}
	return b, nil
}

// loadSources checks, fetches and loads srcs; what fails wraps
// ErrCannotLoadPlugin.
func loadSources(ctx context.Context, srcs []plugin.Source, fo *plugin.FetchOptions) (*plugin.Set, error) {
	for i := range srcs {
		if err := srcs[i].Validate(); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrCannotLoadPlugin, err)
		}
	}
	set, _, err := plugin.LoadSources(ctx, srcs, fo)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCannotLoadPlugin, err)
	}
	return set, nil
}

// pluginSubAgents returns the resumed agent with the sub-agents of srcs,
// the start plugins of a conversation whose stored agent has the rest of
// them (see LocalOptions.Plugins). What cannot be loaded is logged.
func (c *LocalConversation) pluginSubAgents(ctx context.Context, agent Agent, srcs []plugin.Source) Agent {
	set, err := loadSources(ctx, srcs, c.opts.PluginFetch)
	if err == nil && len(set.AgentFiles) == 0 {
		return agent
	}
	var b Agent
	if err == nil {
		b, err = agent.AddPlugins(&plugin.Set{AgentFiles: set.AgentFiles})
	}
	if err != nil {
		c.log.Warn("conversation: resumed without its plugins' sub-agents", "err", err)
		return agent
	}
	return b
}
