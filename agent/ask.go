package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/tool"
)

// AskUsageID is the usage id of the LLM answering AskAgent questions, as in
// the reference.
const AskUsageID = "ask-agent-llm"

// askTemplate wraps a side question (the reference's ask_agent, in our own
// words).
const askTemplate = `Answer this question about the work so far, in plain text. Do not call any tool: this is a side question, not a new task.

<QUESTION>
%s
</QUESTION>`

// Ask implements conversation.Runner: it asks the model a side question
// about view, with a separate usage id, and emits nothing.
func (r *runner) Ask(ctx context.Context, view []event.Event, question string) (string, error) {
	r.askOnce.Do(func() {
		m := r.a.opts.Model
		if m == nil {
			cfg := r.a.LLM
			cfg.UsageID, cfg.Stream = AskUsageID, false
			m, r.askErr = llm.New(cfg, &llm.Options{Logger: r.sess.Logger()})
		}
		r.askMu.Lock()
		r.askModel = m
		r.askMu.Unlock()
	})
	if r.askErr != nil {
		return "", fmt.Errorf("agent: ask: %w", r.askErr)
	}
	// Actions may be running or waiting for confirmation: leave out the
	// calls that have no result yet.
	msgs := append(event.LLMMessages(conversation.Paired(view)), event.UserMessage(fmt.Sprintf(askTemplate, question)))
	resp, err := r.askModel.Completion(ctx, msgs, r.specs, &llm.CallOptions{ConversationID: r.sess.ID(), NoStream: true})
	if err != nil {
		return "", fmt.Errorf("agent: ask: %w", err)
	}
	for _, c := range resp.Message.Content {
		if c.Type == event.ContentText && strings.TrimSpace(c.Text) != "" {
			return c.Text, nil
		}
	}
	return "", errors.New("agent: ask: the model gave no text answer")
}

// consult is toolHost's Consult: one call to the LLM profile
// named profile, with its own usage id and metrics (kept for the
// conversation's stats and reused by later calls), without tools or
// history. The agent's model is not switched.
func (r *runner) consult(ctx context.Context, profile, usageID string, msgs []event.Message) (event.Message, error) {
	m, err := r.sideModel(profile, usageID)
	if err != nil {
		return event.Message{}, err
	}
	resp, err := m.Completion(ctx, msgs, nil, &llm.CallOptions{ConversationID: r.sess.ID(), NoStream: true})
	if err != nil {
		return event.Message{}, err
	}
	if resp == nil {
		return event.Message{}, errors.New("the model gave no response")
	}
	return resp.Message, nil
}

// sideModel returns the model of profile under usageID, made at its first
// use (sharing the agent's provider and client when it can).
func (r *runner) sideModel(profile, usageID string) (*llm.LLM, error) {
	r.askMu.Lock()
	defer r.askMu.Unlock()
	if l := r.side[usageID]; l != nil {
		return l, nil
	}
	cfg, err := r.sess.Profile(profile)
	if err != nil {
		return nil, err
	}
	cfg.UsageID, cfg.Stream = usageID, false
	var l *llm.LLM
	if a, ok := r.model.(*llm.LLM); ok {
		l, err = a.Derive(cfg)
	} else {
		l, err = llm.New(cfg, &llm.Options{Logger: r.sess.Logger()})
	}
	if err != nil {
		return nil, err
	}
	if m, ok := r.sess.Fields().Stats.UsageToMetrics[usageID]; ok && m != nil {
		l.RestoreMetrics(*m)
	}
	if r.side == nil {
		r.side = make(map[string]*llm.LLM)
	}
	r.side[usageID] = l
	return l, nil
}

// toolHost is the conversation as tools see it (tool.Context.Conversation).
type toolHost struct{ r *runner }

func (h toolHost) Consult(ctx context.Context, profile, usageID string, msgs []event.Message) (event.Message, error) {
	return h.r.consult(ctx, profile, usageID, msgs)
}

func (h toolHost) SwitchProfile(ctx context.Context, name string) (string, error) {
	return h.r.sess.SwitchProfile(ctx, name)
}

func (h toolHost) ProfileNames() []string { return h.r.sess.ProfileNames() }

func (h toolHost) Profile(name string) (tool.ProfileInfo, error) {
	cfg, err := h.r.sess.Profile(name)
	if err != nil {
		return tool.ProfileInfo{}, err
	}
	return tool.ProfileInfo{Model: cfg.Model, BaseURL: cfg.BaseURL, Vision: llm.FeaturesOf(&cfg).Vision}, nil
}

func (h toolHost) Events() ([]event.Event, error) { return h.r.sess.View() }
