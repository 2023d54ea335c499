package agent

import (
	"encoding/json"
	"fmt"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/plugin"
)

// Marketplaces implements conversation.Agent: the marketplaces of the
// agent context's registered_marketplaces.
func (a *Agent) Marketplaces() ([]plugin.Registration, error) {
	raw := a.AgentContext
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var ac struct {
		Registered []plugin.Registration `json:"registered_marketplaces"`
	}
	if err := json.Unmarshal(raw, &ac); err != nil {
		return nil, fmt.Errorf("agent: agent_context: %w", err)
	}
	return ac.Registered, nil
}

// AddPlugins implements conversation.Agent with WithPlugins.
func (a *Agent) AddPlugins(set *plugin.Set) (conversation.Agent, error) {
	b, err := a.WithPlugins(set)
	if err != nil {
		return nil, err
	}
	return b, nil
}
