package conversation

import (
	"fmt"
)

// StatsSaver is implemented by Runners that keep their models' metrics
// apart from the state and copy them into Fields.Stats now and then.
// The run loop calls SaveStats before it checks the budget, so the check
// sees every call made so far.
type StatsSaver interface {
	SaveStats() error
}

// Interrupt implements Conversation.
func (c *LocalConversation) Interrupt() error { return c.pause(true, true) }

// overBudget returns why the run must stop for its budget, or "" if it
// has none or has not spent it.
func (c *LocalConversation) overBudget(r Runner) string {
	if c.budget <= 0 {
		return ""
	}
	if s, ok := r.(StatsSaver); ok {
		if err := s.SaveStats(); err != nil {
			c.log.Warn("budget: cannot save the model metrics", "err", err)
		}
	}
	spent := c.state.Fields().Stats.TotalCost()
	if spent < c.budget {
		return ""
	}
	return fmt.Sprintf("Agent reached maximum budget limit ($%.4f); accumulated cost $%.4f.", c.budget, spent)
}
