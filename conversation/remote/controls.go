package remote

import (
	"context"
	"errors"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/llm"
)

// The conversation controls, each through the server's route of the same
// name, as LocalConversation offers them in-process.

// Fork asks the server to fork the conversation (see
// conversation.LocalConversation.Fork) and attaches to the fork. The
// fork's agent is the source's: opts.Agent and opts.Options are not
// supported remotely (nor by the reference's client).
func (c *Conversation) Fork(ctx context.Context, opts *conversation.ForkOptions) (*Conversation, error) {
	var fo conversation.ForkOptions
	if opts != nil {
		fo = *opts
	}
	if fo.Agent != nil || fo.Options != nil {
		return nil, errors.New("remote: fork: another agent or options need a local conversation")
	}
	body := map[string]any{"reset_metrics": !fo.KeepMetrics}
	if fo.ID != "" {
		body["id"] = fo.ID
	}
	if fo.Title != "" {
		body["title"] = fo.Title
	}
	if fo.Tags != nil {
		body["tags"] = fo.Tags
	}
	if fo.FromEventID != "" {
		body["from_event_id"] = fo.FromEventID
	}
	var info struct {
		ID string `json:"id"`
	}
	if err := c.post(ctx, "/fork", body, &info); err != nil {
		return nil, err
	}
	return Attach(ctx, c.ws, info.ID, nil)
}

// NavigateTo moves the conversation's HEAD to eventID ("": empty) on the
// server, so the next message branches from there.
func (c *Conversation) NavigateTo(ctx context.Context, eventID string) error {
	var id any
	if eventID != "" {
		id = eventID
	}
	return c.post(ctx, "/navigate", map[string]any{"event_id": id}, nil)
}

// SwitchLLM makes the agent use the model cfg configures from its next
// step on.
func (c *Conversation) SwitchLLM(ctx context.Context, cfg llm.Config) error {
	v, err := exposed(cfg)
	if err != nil {
		return err
	}
	return c.post(ctx, "/switch_llm", map[string]any{"llm": v}, nil)
}

// SwitchProfile switches to the server's LLM profile name.
func (c *Conversation) SwitchProfile(ctx context.Context, name string) error {
	return c.post(ctx, "/switch_profile", map[string]string{"profile_name": name}, nil)
}

// GenerateTitle asks the server for a title made from the first user
// message (maxLength 0: the server's default).
func (c *Conversation) GenerateTitle(ctx context.Context, maxLength int) (string, error) {
	body := map[string]any{}
	if maxLength > 0 {
		body["max_length"] = maxLength
	}
	var out struct {
		Title string `json:"title"`
	}
	if err := c.post(ctx, "/generate_title", body, &out); err != nil {
		return "", err
	}
	return out.Title, nil
}

// StartGoal starts a goal loop on the server (see conversation.RunGoal):
// it returns at once; the loop's statuses arrive as
// ConversationStateUpdateEvents with key conversation.GoalKey.
// maxIterations 0 means the server's default.
func (c *Conversation) StartGoal(ctx context.Context, objective string, maxIterations int) error {
	body := map[string]any{"objective": objective}
	if maxIterations > 0 {
		body["max_iterations"] = maxIterations
	}
	return c.post(ctx, "/goal", body, nil)
}

// StopGoal stops the server's goal loop; the run in progress goes on.
func (c *Conversation) StopGoal(ctx context.Context) error {
	return c.post(ctx, "/goal/stop", nil, nil)
}

// ResumeGoal resumes the goal loop last stopped or interrupted.
func (c *Conversation) ResumeGoal(ctx context.Context) error {
	return c.post(ctx, "/goal/resume", nil, nil)
}
