package conversation

import (
	"context"
	"errors"

	"github.com/gohands/gohands/event"
)

// ErrCannotCondense is returned by Condense when the agent has no
// condenser acting on requests.
var ErrCannotCondense = errors.New("conversation: cannot condense: no condenser that acts on condensation requests (configure an LLMSummarizingCondenser)")

// Condense forces a condensation of the history, as the reference's
// condense does: it logs a CondensationRequest and takes one step, in which
// the condenser replaces the older history with a summary. While a run is
// in progress, its next step condenses: Condense waits for that or for the
// run's end. It fails while actions wait for confirmation, since a step
// would execute them.
func (c *LocalConversation) Condense(ctx context.Context) error {
	started, err := c.startAgent(ctx)
	if err != nil {
		return err
	}
	if !started.CondensesOnRequest {
		return ErrCannotCondense
	}
	runner := started.Runner
	requested := false
	for {
		c.runMu.Lock()
		if c.closed {
			c.runMu.Unlock()
			return ErrConversationClosed
		}
		if !c.running {
			// Take the run's place so that no run starts during the step.
			c.running = true
			done := make(chan struct{})
			c.runDone = done
			c.runMu.Unlock()
			defer func() {
				c.runMu.Lock()
				c.running = false
				close(done)
				c.runMu.Unlock()
			}()
			break
		}
		wait := c.runDone
		c.runMu.Unlock()
		if !requested {
			if err := c.requestCondensation(); err != nil {
				return err
			}
			requested = true
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	if c.Status() == StatusWaitingForConfirmation {
		return ErrWaitingForConfirmation
	}
	if requested {
		// The run may have condensed already.
		if pending, err := c.state.CondensationPending(); err != nil || !pending {
			return err
		}
	} else if err := c.requestCondensation(); err != nil {
		return err
	}
	return c.step(ctx, runner)
}

// ErrWaitingForConfirmation is returned by Condense while actions wait for
// confirmation.
var ErrWaitingForConfirmation = errors.New("conversation: actions are waiting for confirmation")

func (c *LocalConversation) requestCondensation() error {
	return c.state.Do(func(tx *Tx) error {
		_, err := tx.Append(&event.CondensationRequest{Base: event.NewBase(event.SourceEnvironment)})
		return err
	})
}
