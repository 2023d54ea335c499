package agent

import (
	"encoding/json"
	"maps"
	"os"

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
// the conversation's own. The stored agent is not changed: a resumed
// conversation finds the plugins on disk again.
func (a *Agent) withPlugins(sess *conversation.Session) (*Agent, *plugin.Set) {
	home, _ := os.UserHomeDir()
	found, warns := plugin.Ambient(sess.WorkingDir(), home)
	for _, w := range warns {
		sess.Logger().Warn("agent: plugin not loaded", "path", w.Path, "err", w.Err)
	}
	if len(found) == 0 {
		return a, nil
	}
	set := &plugin.Set{}
	for _, p := range found {
		set.Add(p)
	}
	b := *a
	if len(set.MCPConfig) > 0 {
		servers := map[string]json.RawMessage(maps.Clone(a.MCPConfig))
		if inner, ok := servers["mcpServers"]; ok && len(servers) == 1 {
			servers = nil
			_ = json.Unmarshal(inner, &servers)
		}
		if servers == nil {
			servers = map[string]json.RawMessage{}
		}
		maps.Copy(servers, set.MCPConfig)
		b.MCPConfig = event.Map[string, json.RawMessage](servers)
	}
	if len(set.Skills) > 0 {
		var ac skill.AgentContext
		if raw := a.AgentContext; len(raw) > 0 && string(raw) != "null" {
			if err := json.Unmarshal(raw, &ac); err != nil {
				return a, nil // initSkills reports it
			}
		}
		ac.Skills = plugin.MergeSkills(ac.Skills, set.Skills)
		if raw, err := json.Marshal(ac); err == nil {
			b.AgentContext = raw
		}
	}
	sess.Logger().Debug("agent: plugins loaded", "plugins", set.Names)
	return &b, set
}
