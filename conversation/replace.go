package conversation

import (
	"encoding/json"
	"fmt"
)

// ReplaceAgent makes a the conversation's agent and stores it, between
// runs (ErrRunning during one): the old agent's runner is closed and the
// next step starts a's, which finds the log's system prompt and keeps it.
// LoadPlugin uses it to add a plugin's skills and MCP servers.
func (c *LocalConversation) ReplaceAgent(a Agent) error {
	c.lockBetweenRuns()
	defer c.runMu.Unlock()
	switch {
	case c.closed:
		return ErrConversationClosed
	case c.running:
		return ErrRunning
	}
	return c.replaceAgent(a, nil)
}

// replaceAgent is ReplaceAgent once no step runs; hooks, if not nil,
// replaces the stored hook configuration in the same update.
func (c *LocalConversation) replaceAgent(a Agent, hooks json.RawMessage) error {
	c.startMu.Lock()
	old := c.started
	c.started = nil
	c.agent = a
	c.startMu.Unlock()
	var closeErr error
	if old != nil {
		closeErr = old.Runner.Close()
	}
	if err := c.state.Update(func(f *Fields) error {
		f.Agent = a
		if hooks != nil {
			f.HookConfig = hooks
		}
		return nil
	}); err != nil {
		return fmt.Errorf("conversation: replace agent: %w", err)
	}
	if closeErr != nil {
		return fmt.Errorf("conversation: replace agent: closing the old runner: %w", closeErr)
	}
	return nil
}
