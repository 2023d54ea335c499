package acp

import (
	"fmt"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/plugin"
)

// Marketplaces implements conversation.Agent: an ACP agent registers no
// plugin marketplace (its server has its own extensions).
func (a *Agent) Marketplaces() ([]plugin.Registration, error) { return nil, nil }

// AddPlugins implements conversation.Agent: an ACP agent takes no
// plugins.
func (a *Agent) AddPlugins(*plugin.Set) (conversation.Agent, error) {
	return nil, fmt.Errorf("acp: plugins: %w", conversation.ErrUnsupported)
}
