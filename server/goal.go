package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/goal"
)

// goalRoutes are the routes of goal mode: a background loop that pursues
// an objective inside the conversation (the reference's /goal routes).
func (s *Server) goalRoutes() []*route {
	const conv = "/api/conversations/{conversation_id}"
	busy := []int{400, 404, 409, 422}
	return []*route{
		{method: "POST", path: conv + "/goal", summary: "Start a goal loop: run, judge, re-prompt until the objective is met or the bound is reached", tag: "Conversations", body: startGoalRequest{}, resp: successResponse{}, errors: busy, h: handle(s, nil, s.handleGoal)},
		{method: "POST", path: conv + "/goal/stop", summary: "Stop the goal loop (the run in progress goes on); it can be resumed", tag: "Conversations", resp: successResponse{}, errors: []int{404, 422}, h: handle(s, nil, s.handleGoalStop)},
		{method: "POST", path: conv + "/goal/resume", summary: "Resume the goal loop last stopped or interrupted", tag: "Conversations", resp: successResponse{}, errors: busy, h: handle(s, nil, s.handleGoalResume)},
	}
}

// errGoalBusy answers a goal started while a run or a goal loop is in
// progress (the reference's detail).
var errGoalBusy = &httpError{status: http.StatusConflict, detail: "Conversation run or goal loop already running."}

// goalLoop is a conversation's background goal loop.
type goalLoop struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// goalConv is the conversation as a goal loop drives it: its runs go
// through the server (counted, published) like those /run starts.
type goalConv struct {
	*conversation.LocalConversation
	c *conv
}

// Run starts a run, or joins the one in progress, and waits for its end.
// Cancelling ctx stops the wait, not the run.
func (g goalConv) Run(ctx context.Context) error {
	if err := g.c.run(ctx); err != nil && !errors.Is(err, errAlreadyRunning) {
		return err
	}
	g.c.mu.Lock()
	done := g.c.runDone
	g.c.mu.Unlock()
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// startGoal starts the goal loop in the background: a new one for
// objective, or, with resume set, the one the log last left interrupted.
func (c *conv) startGoal(ctx context.Context, objective string, maxIter int, resume bool) error {
	lc, err := c.load(ctx)
	if err != nil {
		return err
	}
	opts := &goal.Options{MaxIterations: maxIter}
	if resume {
		last, ok := goal.Resumable(ctx, lc)
		if !ok {
			return statusErr(http.StatusBadRequest, "no_resumable_goal")
		}
		opts.Resume = &last
	}
	if m, err := lc.AgentModel(ctx); err == nil {
		opts.Judge = m // without one, the check below answers 400
	}
	// Checked before the loop starts, so a bad request gets its 400.
	check := objective
	if resume {
		check = opts.Resume.Objective
	}
	if _, err := goal.NewController(check, opts.Judge, max(maxIter, 1)); err != nil {
		return statusErr(http.StatusBadRequest, "%v", err)
	}
	s := c.s
	c.mu.Lock()
	switch {
	case s.closing.Load():
		c.mu.Unlock()
		return errShuttingDown
	case c.goal != nil, c.running:
		c.mu.Unlock()
		return errGoalBusy
	}
	gctx, cancel := context.WithCancel(context.Background())
	g := &goalLoop{cancel: cancel, done: make(chan struct{})}
	c.goal = g
	s.runWG.Add(1)
	c.mu.Unlock()
	go func() {
		defer s.runWG.Done()
		defer close(g.done)
		defer cancel()
		out, err := goal.Run(gctx, goalConv{lc, c}, objective, opts)
		c.mu.Lock()
		c.goal = nil
		c.mu.Unlock()
		switch {
		case err != nil && gctx.Err() == nil:
			s.log.Info("goal loop stopped", "conversation", c.id, "err", err)
		case err == nil:
			s.log.Info("goal loop ended", "conversation", c.id, "status", out.Status, "iterations", out.Iterations)
		}
	}()
	return nil
}

// stopGoal stops the goal loop, if any, and waits for it to record its
// interrupted status. The run in progress, if any, goes on.
func (c *conv) stopGoal() {
	c.mu.Lock()
	g := c.goal
	c.mu.Unlock()
	if g == nil {
		return
	}
	g.cancel()
	<-g.done
}

func (s *Server) handleGoal(in *request[none, startGoalRequest]) (any, error) {
	req := &in.body
	if req.Objective == nil {
		return nil, &invalidError{loc: []any{"body", "objective"}, typ: "missing", msg: "Field required"}
	}
	maxIter := goal.DefaultIterations
	if req.MaxIterations != nil {
		if *req.MaxIterations < 1 {
			return nil, &invalidError{loc: []any{"body", "max_iterations"}, typ: "greater_than_equal", msg: "Input should be greater than or equal to 1"}
		}
		maxIter = *req.MaxIterations
	}
	c, err := in.find()
	if err != nil {
		return nil, err
	}
	if err := c.startGoal(in.r.Context(), *req.Objective, maxIter, false); err != nil {
		return nil, err
	}
	return ok, nil
}

func (s *Server) handleGoalStop(in *request[none, none]) (any, error) {
	c, err := in.find()
	if err != nil {
		return nil, err
	}
	c.stopGoal()
	return ok, nil
}

func (s *Server) handleGoalResume(in *request[none, none]) (any, error) {
	c, err := in.find()
	if err != nil {
		return nil, err
	}
	if err := c.startGoal(in.r.Context(), "", 0, true); err != nil {
		return nil, err
	}
	return ok, nil
}
