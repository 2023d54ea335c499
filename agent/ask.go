package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
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
