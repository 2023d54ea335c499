package conversation

import (
	"context"
	"fmt"
)

// ModelSwitcher is a Runner whose model is named to an agent process it
// talks to (an ACP server), not made from an llm.Config as SwitchLLM's.
type ModelSwitcher interface {
	// SwitchModel makes the agent use model from its next turn and
	// returns the agent configuration to store, which names model. A
	// turn in progress ends first; a runner with no live session yet
	// only records model, for the session it starts.
	SwitchModel(ctx context.Context, model string) (Agent, error)
}

// SwitchAgentModel switches the model of an agent whose runner is a
// ModelSwitcher (ErrCannotSwitch for any other) and stores the agent it
// returns, so a resumed conversation or a fork runs the new model. During
// a Run it waits for the runner's turn in progress to end.
func (c *LocalConversation) SwitchAgentModel(ctx context.Context, model string) error {
	if c.isClosed() {
		return ErrConversationClosed
	}
	r, err := c.start(ctx)
	if err != nil {
		return err
	}
	ms, ok := r.(ModelSwitcher)
	if !ok {
		return ErrCannotSwitch
	}
	a, err := ms.SwitchModel(ctx, model)
	if err != nil {
		return err
	}
	c.startMu.Lock()
	c.agent = a
	c.startMu.Unlock()
	if err := c.state.Update(func(f *Fields) error {
		f.Agent = a
		return nil
	}); err != nil {
		return fmt.Errorf("conversation: switch agent model: %w", err)
	}
	return nil
}
