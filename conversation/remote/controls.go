package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gohands/gohands/api/protocol"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/goal"
	"github.com/gohands/gohands/conversation/title"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/plugin"
	"github.com/gohands/gohands/workspace"
)

// A remote conversation's goal loops and titles are its server's.
var (
	_ goal.Looper     = (*Conversation)(nil)
	_ title.Generator = (*Conversation)(nil)
)

// The conversation controls, each through the server's route of the same
// name, as LocalConversation offers them in-process.

// Fork implements conversation.Conversation: it asks the server to fork
// the conversation and attaches to the fork, a *Conversation. The fork's
// agent is the source's: opts.Agent and opts.Options are not supported
// remotely (nor by the reference's client).
func (c *Conversation) Fork(ctx context.Context, opts *conversation.ForkOptions) (conversation.Conversation, error) {
	var fo conversation.ForkOptions
	if opts != nil {
		fo = *opts
	}
	if fo.Agent != nil || fo.Options != nil {
		return nil, fmt.Errorf("remote: fork: another agent or options need a local conversation: %w", conversation.ErrUnsupported)
	}
	reset := !fo.KeepMetrics
	body := protocol.ForkRequest{ResetMetrics: &reset, Tags: fo.Tags, ID: optional(fo.ID), Title: optional(fo.Title), FromEventID: optional(fo.FromEventID)}
	var info conversationInfo
	if err := c.post(ctx, "/fork", body, &info); err != nil {
		return nil, sentinel(err, map[int]error{http.StatusNotFound: conversation.ErrNotFound, http.StatusConflict: conversation.ErrExists})
	}
	fork, err := Attach(ctx, c.ws, info.ID, nil)
	if err != nil {
		return nil, err // not a nil *Conversation in an interface
	}
	return fork, nil
}

// NavigateTo moves the conversation's HEAD to eventID ("": empty) on the
// server, so the next message branches from there.
func (c *Conversation) NavigateTo(ctx context.Context, eventID string) error {
	err := c.post(ctx, "/navigate", protocol.NavigateRequest{EventID: optional(eventID)}, nil)
	if err != nil {
		return sentinel(err, map[int]error{http.StatusNotFound: conversation.ErrNotFound, http.StatusConflict: conversation.ErrRunning})
	}
	// The mirror's HEAD follows, as a local conversation's does (the
	// server's snapshots are not ordered with the REST reads of events).
	return c.state.Update(func(f *conversation.Fields) error {
		f.LeafEventID, f.HeadIsEmpty = eventID, eventID == ""
		return nil
	})
}

// SwitchLLM makes the agent use the model cfg configures from its next
// step on.
func (c *Conversation) SwitchLLM(ctx context.Context, cfg llm.Config) error {
	v, err := exposed(cfg)
	if err != nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("remote: switch_llm: %w", err)
	}
	err = c.post(ctx, "/switch_llm", protocol.SwitchLLMRequest{LLM: b}, nil)
	return sentinel(err, map[int]error{http.StatusConflict: conversation.ErrRunning, http.StatusBadRequest: conversation.ErrCannotSwitch})
}

// SwitchProfile switches to the server's LLM profile name.
func (c *Conversation) SwitchProfile(ctx context.Context, name string) error {
	err := c.post(ctx, "/switch_profile", protocol.SwitchProfileRequest{ProfileName: name}, nil)
	return sentinel(err, map[int]error{http.StatusConflict: conversation.ErrRunning, http.StatusBadRequest: conversation.ErrCannotSwitch, http.StatusNotFound: llm.ErrNoProfile})
}

// LoadPlugin implements conversation.Conversation with the server's
// load_plugin: a 404 is plugin.ErrNotFound (or an unknown conversation),
// a 400 conversation.ErrCannotLoadPlugin. The mirror's agent is then read
// back, skills included (during a run the server adds the plugin before
// its next step: the agent read may not have it yet).
func (c *Conversation) LoadPlugin(ctx context.Context, ref string) error {
	err := c.post(ctx, "/load_plugin", protocol.LoadPluginRequest{PluginRef: ref}, nil)
	if err != nil {
		return sentinel(err, map[int]error{http.StatusNotFound: plugin.ErrNotFound, http.StatusBadRequest: conversation.ErrCannotLoadPlugin, http.StatusConflict: conversation.ErrRunning})
	}
	var info conversationInfo
	if err := c.ws.Request(ctx, http.MethodGet, c.path(""), url.Values{"include_skills": {"true"}}, nil, &info); err != nil {
		return fmt.Errorf("remote: load_plugin: reading the agent back: %w", err)
	}
	a, err := event.DecodeKinded[any](info.Agent)
	if err != nil {
		return fmt.Errorf("remote: load_plugin: the conversation's agent: %w", err)
	}
	return c.state.Update(func(f *conversation.Fields) error {
		f.Agent = a
		return nil
	})
}

// GenerateTitle implements title.Generator: it asks the server for a
// title made from the first user message (maxLength 0: the server's
// default).
func (c *Conversation) GenerateTitle(ctx context.Context, maxLength int) (string, error) {
	var body protocol.GenerateTitleRequest
	if maxLength > 0 {
		body.MaxLength = &maxLength
	}
	var out protocol.GenerateTitleResponse
	if err := c.post(ctx, "/generate_title", body, &out); err != nil {
		return "", sentinel(err, map[int]error{http.StatusBadRequest: title.ErrNoUserMessage})
	}
	return out.Title, nil
}

// Condense implements conversation.Conversation with the server's
// condense, and has the condensation delivered before it returns.
func (c *Conversation) Condense(ctx context.Context) error {
	if err := c.post(ctx, "/condense", nil, nil); err != nil {
		// A 409 is the reference 1.58's answer for an agent without a
		// condenser acting on requests; gohands' server also answers 409
		// while actions wait for confirmation, and says so. Servers before
		// 1.58 answered 400 for the former.
		byStatus := map[int]error{http.StatusBadRequest: conversation.ErrCannotCondense, http.StatusConflict: conversation.ErrCannotCondense}
		var ae *workspace.APIError
		if errors.As(err, &ae) && strings.Contains(ae.Detail, "wait for confirmation") {
			byStatus[http.StatusConflict] = conversation.ErrWaitingForConfirmation
		}
		return sentinel(err, byStatus)
	}
	return c.reconcile(ctx)
}

// RunGoal implements goal.Looper with the server's goal
// loop: it starts it and returns its outcome once it has ended, calling
// opts.OnStatus with each status the server records. The server's agent
// judges: opts.Judge and opts.Resume are not supported (ResumeGoal
// resumes). Cancelling ctx stops the loop on the server; the run in
// progress goes on.
func (c *Conversation) RunGoal(ctx context.Context, objective string, opts *goal.Options) (*goal.Outcome, error) {
	var o goal.Options
	if opts != nil {
		o = *opts
	}
	if o.Judge != nil || o.Resume != nil {
		return nil, fmt.Errorf("remote: goal: a judge model or a resumed status need a local conversation: %w", conversation.ErrUnsupported)
	}
	body := protocol.StartGoalRequest{Objective: &objective}
	if o.MaxIterations > 0 {
		body.MaxIterations = &o.MaxIterations
	}
	return c.runGoal(ctx, "/goal", body, o.OnStatus)
}

// ResumeGoal implements goal.Looper with the server's
// resume of the goal loop last stopped or interrupted, which keeps its
// recorded bound: opts.MaxIterations and opts.Judge are not supported.
func (c *Conversation) ResumeGoal(ctx context.Context, opts *goal.Options) (*goal.Outcome, error) {
	var o goal.Options
	if opts != nil {
		o = *opts
	}
	if o.Judge != nil || o.MaxIterations != 0 || o.Resume != nil {
		return nil, fmt.Errorf("remote: goal: resuming with other options needs a local conversation: %w", conversation.ErrUnsupported)
	}
	return c.runGoal(ctx, "/goal/resume", nil, o.OnStatus)
}

// StopGoal stops the server's goal loop; the run in progress goes on.
func (c *Conversation) StopGoal(ctx context.Context) error {
	return c.post(ctx, "/goal/stop", nil, nil)
}

// runGoal starts the server's goal loop through route and waits for the
// status that ends it.
func (c *Conversation) runGoal(ctx context.Context, route string, body any, onStatus func(goal.Status)) (*goal.Outcome, error) {
	var (
		mu       sync.Mutex
		statuses []goal.Status
		arrived  = make(chan struct{}, 1)
	)
	// Subscribed first, so that no status of this loop is missed; the
	// function only keeps them, so it never falls behind.
	unsubscribe := c.Subscribe(func(e event.Event) {
		st, ok := goal.StatusOf(e)
		if !ok {
			return
		}
		mu.Lock()
		statuses = append(statuses, st)
		mu.Unlock()
		select {
		case arrived <- struct{}{}:
		default:
		}
	})
	defer unsubscribe()
	if err := c.post(ctx, route, body, nil); err != nil {
		if route == "/goal/resume" {
			err = sentinel(err, map[int]error{http.StatusBadRequest: goal.ErrNoResumable})
		}
		return nil, sentinel(err, map[int]error{http.StatusConflict: conversation.ErrRunning})
	}
	// The loop's first status is "running"; the one that ends it is not.
	// A status arriving before this loop's start belongs to an earlier
	// loop, hence the wait for this one's "running" first.
	started := false
	for {
		mu.Lock()
		got := statuses
		statuses = nil
		mu.Unlock()
		for _, st := range got {
			if !started {
				started = st.Status == goal.Running && st.Active
				if !started {
					continue
				}
			}
			if onStatus != nil {
				onStatus(st)
			}
			switch st.Status {
			case goal.Running:
			case goal.Complete, goal.Capped:
				out := &goal.Outcome{Status: st.Status, Iterations: st.Iteration}
				if st.Verdict != nil {
					out.Verdict = *st.Verdict
				}
				return out, nil
			default:
				return nil, fmt.Errorf("remote: goal: the loop ended %s", st.Status)
			}
		}
		select {
		case <-arrived:
		case <-ctx.Done():
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if err := c.StopGoal(stopCtx); err != nil {
				c.log.Warn("goal: stopping the server's loop", "err", err)
			}
			return nil, fmt.Errorf("goal: %w", context.Cause(ctx))
		case <-c.done:
			if err := c.check(); err != nil {
				return nil, err
			}
			return nil, errors.New("remote: goal: the connection to the server ended")
		}
	}
}

// optional returns a pointer to s, nil for "" (a member left out).
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// sentinel makes an error status of the server's answer match the
// conversation package's error for it (as a local conversation's error
// would), keeping the server's detail.
func sentinel(err error, byStatus map[int]error) error {
	var ae *workspace.APIError
	if errors.As(err, &ae) {
		if s := byStatus[ae.Status]; s != nil {
			return fmt.Errorf("%w: %w", s, err)
		}
	}
	return err
}
