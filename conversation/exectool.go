package conversation

import (
	"context"
	"errors"
	"fmt"

	"github.com/gohands/gohands/event"
)

// ToolExecutor is a Runner that runs one of its tools outside the agent
// loop, for ExecuteTool and RerunActions.
type ToolExecutor interface {
	// ExecuteTool runs the tool named name on action and returns its
	// observation; an unknown name is ErrUnknownTool (wrapped, naming the
	// tools there are).
	ExecuteTool(ctx context.Context, name string, action event.Action) (event.Observation, error)
}

// ErrUnknownTool is returned (wrapped) by ExecuteTool and RerunActions for
// a tool the agent does not have.
var ErrUnknownTool = errors.New("conversation: unknown tool")

// ExecuteTool runs the agent's tool named name on action, outside the
// agent loop, as the reference's execute_tool does: the agent is started
// if it was not, nothing is logged, and neither the confirmation policy
// nor the security analyzer is consulted (the caller is the one deciding).
func (c *LocalConversation) ExecuteTool(ctx context.Context, name string, action event.Action) (event.Observation, error) {
	runner, err := c.start(ctx)
	if err != nil {
		return nil, err
	}
	te, ok := runner.(ToolExecutor)
	if !ok {
		return nil, fmt.Errorf("%w: the agent %T cannot run a tool by itself", ErrUnsupported, c.agent)
	}
	return te.ExecuteTool(ctx, name, action)
}

// RerunActions runs again, in order, every action of the active branch
// that was parsed (an action the model got wrong has none), as the
// reference's rerun_actions does, to rebuild a workspace from a saved
// conversation; nothing is logged. It reports false at the first action
// whose tool fails (an observation with is_error is a result, not a
// failure), and an error wrapping ErrUnknownTool at an action whose tool
// the agent lacks (a configuration error, as the reference's KeyError).
func (c *LocalConversation) RerunActions(ctx context.Context) (bool, error) {
	entries, err := c.State().ActiveBranch()
	if err != nil {
		return false, err
	}
	log := c.State().Events()
	var actions []*event.ActionEvent
	for _, en := range entries {
		e, err := log.Event(ctx, en.Index)
		if err != nil {
			return false, err
		}
		if a, ok := e.(*event.ActionEvent); ok && a.Action != nil {
			actions = append(actions, a)
		}
	}
	runner, err := c.start(ctx)
	if err != nil {
		return false, err
	}
	te, ok := runner.(ToolExecutor)
	if !ok {
		return false, fmt.Errorf("%w: the agent %T cannot run a tool by itself", ErrUnsupported, c.agent)
	}
	for i, a := range actions {
		if _, err := te.ExecuteTool(ctx, a.ToolName, a.Action); err != nil {
			if errors.Is(err, ErrUnknownTool) || ctx.Err() != nil {
				return false, err
			}
			c.log.Warn("rerun: an action failed", "action", i+1, "tool", a.ToolName, "err", err)
			return false, nil
		}
	}
	return true, nil
}
