package remote

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/telemetry"
	"github.com/gohands/gohands/workspace"
)

// Run implements conversation.Conversation: it starts a run on the server
// and waits until the server says the run ended: a full-state snapshot
// that is not running after the run was seen running, a status update to
// error or stuck, or, as a fallback when the socket is down or was late,
// the conversation's REST state. Every event logged by then has reached
// the callbacks when Run returns. Cancelling ctx pauses the conversation
// on the server.
func (c *Conversation) Run(ctx context.Context) (err error) {
	if err := c.check(); err != nil {
		return err
	}
	// The client's side of the run, as a local run records it: the steps
	// and calls are the server's, traced there.
	ctx, span := telemetry.Start(ctx, telemetry.KindRun, "conversation.run")
	if span.Recording() {
		span.SetString(telemetry.AttrConversationID, c.id)
		defer func() { span.SetString(telemetry.AttrStatus, string(c.Status())); span.End(err) }()
	}
	c.mu.Lock()
	if c.runBusy {
		c.mu.Unlock()
		return conversation.ErrRunning
	}
	c.runBusy = true
	mark := c.statusN
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.runBusy = false
		c.mu.Unlock()
	}()
	err = c.startRun(ctx)
	var ae *workspace.APIError
	switch {
	case errors.As(err, &ae) && ae.Status == http.StatusConflict:
		// Already running (another client started it): wait for it.
	case err != nil:
		return fmt.Errorf("remote: %w", err)
	}
	return c.wait(ctx, mark)
}

// startRun sends POST /run, again after a 503 (the server is busy or
// still starting the conversation: the reference 1.58.2 answered one to a
// run request 0.3 s after the conversation's creation on a loaded
// machine), a few times over about ten seconds.
func (c *Conversation) startRun(ctx context.Context) error {
	delay := 200 * time.Millisecond
	for try := 1; ; try++ {
		err := c.ws.Request(ctx, http.MethodPost, c.path("/run"), nil, nil, nil)
		var ae *workspace.APIError
		if try == 6 || !errors.As(err, &ae) || ae.Status != http.StatusServiceUnavailable {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay *= 2
	}
}

// Grace periods of the REST fallback: how long the server's REST state
// must say "not running", with no full-state snapshot saying so, before
// Run believes it. The reference's server starts a run after answering
// POST /run and updates its REST state apart from the events, so a
// "not running" may be stale for a moment.
const (
	restGraceSeen   = 30 * time.Second // the run was seen running (the reference's client waits as long)
	restGraceUnseen = 5 * time.Second  // it was not: the server had nothing to run
)

// wait waits for the end of the run started after status observation
// mark.
func (c *Conversation) wait(ctx context.Context, mark int) error {
	poll := 50 * time.Millisecond
	var quietSince time.Time // since when REST says "not running"
	for {
		c.mu.Lock()
		changed, fatal := c.changed, c.fatal
		sawRun := c.running > mark
		ended := sawRun && c.snapN > c.running
		c.mu.Unlock()
		if fatal != nil {
			return fatal
		}
		st := c.Status()
		if ended || sawRun && (st == conversation.StatusError || st == conversation.StatusStuck) {
			return c.finish(ctx)
		}
		t := time.NewTimer(poll)
		select {
		case <-changed:
			t.Stop()
			continue
		case <-ctx.Done():
			t.Stop()
			return c.pauseAndWait(mark)
		case <-t.C:
		}
		poll = min(2*poll, time.Second)
		var info conversationInfo
		if err := c.ws.Request(ctx, http.MethodGet, c.path(""), nil, nil, &info); err != nil {
			if ctx.Err() != nil {
				return c.pauseAndWait(mark)
			}
			if errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrNotFound) {
				return fmt.Errorf("remote: %w", err)
			}
			// The server may be restarting: the socket's reconnection
			// and the next poll will tell.
			c.log.Debug("polling the conversation", "err", err)
			continue
		}
		if info.ExecutionStatus == conversation.StatusRunning || !info.ExecutionStatus.Valid() {
			quietSince = time.Time{}
			continue
		}
		if quietSince.IsZero() {
			quietSince = time.Now()
		}
		grace := restGraceUnseen
		if sawRun {
			grace = restGraceSeen
		}
		if time.Since(quietSince) < grace {
			continue
		}
		// The server has said so long enough: have its events
		// delivered and take its status.
		if err := c.reconcile(ctx); err != nil {
			if ctx.Err() != nil {
				return c.pauseAndWait(mark)
			}
			c.log.Debug("reconciling", "err", err)
			continue
		}
		if c.Status() != info.ExecutionStatus {
			_ = c.state.Update(func(f *conversation.Fields) error {
				f.ExecutionStatus = info.ExecutionStatus
				return nil
			})
		}
		return c.result(ctx)
	}
}

// finish delivers the events logged up to the run's end and returns the
// run's outcome.
// A server that cannot be reached is retried (it may be restarting)
// until ctx ends.
func (c *Conversation) finish(ctx context.Context) error {
	wait := c.opt.MinBackoff
	for {
		err := c.reconcile(ctx)
		var fe *fatalError
		switch {
		case err == nil:
			return c.result(ctx)
		case errors.As(err, &fe):
			return err
		}
		c.log.Debug("reading the run's last events", "err", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, c.opt.MaxBackoff)
	}
}

// result is Run's value for the mirrored status.
func (c *Conversation) result(ctx context.Context) error {
	switch st := c.Status(); st {
	case conversation.StatusError, conversation.StatusStuck:
		re := &conversation.RunError{Status: st, Code: string(st)}
		if st == conversation.StatusStuck {
			re.Code = conversation.CodeStuck
		}
		log := c.state.Events()
		p, err := log.Search(conversation.Query{Kind: "ConversationErrorEvent", Descending: true, Limit: 1})
		if err == nil && len(p.Entries) == 1 {
			if e, err := log.Event(ctx, p.Entries[0].Index); err == nil {
				if ce, ok := e.(*event.ConversationErrorEvent); ok {
					re.Code, re.Detail = ce.Code, ce.Detail
				}
			}
		}
		return re
	}
	return nil
}

// pauseAndWait pauses the run on the server after Run's context ended and
// waits (a bounded time) for the pause to take effect.
func (c *Conversation) pauseAndWait(mark int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.post(ctx, "/pause", nil, nil); err != nil {
		return err
	}
	return c.wait(ctx, mark)
}
