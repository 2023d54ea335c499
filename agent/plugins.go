package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/plugin"
	"github.com/gohands/gohands/skill"
)

// withPlugins returns a copy of a with the ambient plugins merged in (the
// user's, the enabled installed ones and the workspace's; see
// plugin.Ambient), as the reference loads them into every conversation:
// their skills replace the agent's skills of the same name, their MCP
// servers those of the same name. Their hooks are returned, to run after
// the conversation's own. Start hands the merged agent to the conversation
// to store (conversation.Started.Agent); a resumed conversation merges the
// plugins on disk in again, replacing its stored copies by name.
func (a *Agent) withPlugins(sess *conversation.Session) (*Agent, *plugin.Set) {
	home, _ := os.UserHomeDir()
	set := a.registeredMarketplaces(sess, home)
	found, warns := plugin.Ambient(sess.WorkingDir(), home)
	for _, w := range warns {
		sess.Logger().Warn("agent: plugin not loaded", "path", w.Path, "err", w.Err)
	}
	if len(found) == 0 && len(set.Skills) == 0 && len(set.MCPConfig) == 0 && set.Hooks.IsEmpty() && len(set.AgentFiles) == 0 {
		return a, nil
	}
	for _, p := range found {
		set.Add(p)
	}
	b, err := a.WithPlugins(set)
	if err != nil {
		return a, nil // initSkills reports a bad agent_context
	}
	sess.Logger().Debug("agent: plugins loaded", "plugins", set.Names)
	return b, set
}

// WithPlugins returns a copy of a with the skills and MCP servers of set
// merged in: a plugin's skill replaces the agent's of the same name where
// it stands, a plugin's server the agent's of the same name. The hooks of
// set are the caller's to run; its sub-agents are offered by the task
// tool after those of the plugins added before.
func (a *Agent) WithPlugins(set *plugin.Set) (*Agent, error) {
	b := *a
	if len(set.AgentFiles) > 0 {
		b.subAgentFiles = slices.Concat(a.subAgentFiles, set.AgentFiles)
	}
	if len(set.MCPConfig) > 0 {
		servers, err := flatMCP(a.MCPConfig)
		if err != nil {
			return nil, err
		}
		maps.Copy(servers, set.MCPConfig)
		b.MCPConfig = event.Map[string, json.RawMessage](servers)
	}
	if len(set.Skills) > 0 {
		var ac skill.AgentContext
		if raw := a.AgentContext; len(raw) > 0 && string(raw) != "null" {
			if err := json.Unmarshal(raw, &ac); err != nil {
				return nil, fmt.Errorf("agent: agent_context: %w", err)
			}
		}
		ac.Skills = plugin.MergeSkills(ac.Skills, set.Skills)
		raw, err := json.Marshal(ac)
		if err != nil {
			return nil, fmt.Errorf("agent: agent_context: %w", err)
		}
		b.AgentContext = raw
	}
	return &b, nil
}

// withProjectSkills returns a copy of a with the workspace's skills merged
// into its context when the context asks for them (load_project_skills):
// they win over its skills of the same name, and the disabled ones are
// left out, as initSkills merges them. Start hands the copy to the
// conversation to store, as the reference stores them on the first run; a
// resumed conversation merges them in again by name. The memory text is
// not stored (the reference excludes memory_context from its JSON too).
// It returns a itself when the workspace has no skills.
func (a *Agent) withProjectSkills(sess *conversation.Session) *Agent {
	raw := bytes.TrimSpace(a.AgentContext)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) || sess.WorkingDir() == "" {
		return a
	}
	var ac skill.AgentContext
	if err := json.Unmarshal(raw, &ac); err != nil || !ac.LoadProjectSkills {
		return a // initSkills reports a bad agent_context
	}
	project, _ := skill.LoadProject(sess.WorkingDir()) // initSkills logs what it leaves out
	if len(project) == 0 {
		return a
	}
	ac.Skills = skill.Merge(ac.DisabledSkills, project, ac.Skills)
	out, err := json.Marshal(ac)
	if err != nil {
		return a
	}
	b := *a
	b.AgentContext = out
	return &b
}

// registeredMarketplaces loads what the agent context's registered
// marketplaces auto-load (plugin.LoadRegistered); what cannot be loaded is
// logged and left out, as in the reference.
func (a *Agent) registeredMarketplaces(sess *conversation.Session, home string) *plugin.Set {
	regs, err := a.Marketplaces()
	if err != nil || len(regs) == 0 {
		return &plugin.Set{}
	}
	regs = plugin.ExpandRegistrations(regs, sess.Secrets().Lookup(context.Background()))
	opts := &plugin.FetchOptions{CacheDir: plugin.CacheDir(skill.PersistenceDir(home))}
	set, warns := plugin.LoadRegistered(context.Background(), regs, opts)
	for _, w := range warns {
		sess.Logger().Warn("agent: marketplace not loaded", "source", w.Path, "err", w.Err)
	}
	return set
}

// flatMCP returns a copy of an mcp_config's servers by name, out of the
// {"mcpServers": {...}} wrapper if it has one.
func flatMCP(cfg event.Map[string, json.RawMessage]) (map[string]json.RawMessage, error) {
	servers := map[string]json.RawMessage(maps.Clone(cfg))
	if inner, ok := servers["mcpServers"]; ok && len(servers) == 1 {
		servers = nil
		if err := json.Unmarshal(inner, &servers); err != nil {
			return nil, fmt.Errorf("agent: mcp_config: %w", err)
		}
	}
	if servers == nil {
		servers = map[string]json.RawMessage{}
	}
	return servers, nil
}

// mcpServerNames are the names of an mcp_config's servers (none when it
// cannot be read: Start reports that).
func mcpServerNames(cfg event.Map[string, json.RawMessage]) []string {
	servers, err := flatMCP(cfg)
	if err != nil {
		return nil
	}
	return slices.Collect(maps.Keys(servers))
}
