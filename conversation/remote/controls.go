package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gohands/gohands/api/protocol"
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
	reset := !fo.KeepMetrics
	body := protocol.ForkRequest{ResetMetrics: &reset, Tags: fo.Tags, ID: optional(fo.ID), Title: optional(fo.Title), FromEventID: optional(fo.FromEventID)}
	var info conversationInfo
	if err := c.post(ctx, "/fork", body, &info); err != nil {
		return nil, err
	}
	return Attach(ctx, c.ws, info.ID, nil)
}

// NavigateTo moves the conversation's HEAD to eventID ("": empty) on the
// server, so the next message branches from there.
func (c *Conversation) NavigateTo(ctx context.Context, eventID string) error {
	return c.post(ctx, "/navigate", protocol.NavigateRequest{EventID: optional(eventID)}, nil)
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
	return c.post(ctx, "/switch_llm", protocol.SwitchLLMRequest{LLM: b}, nil)
}

// SwitchProfile switches to the server's LLM profile name.
func (c *Conversation) SwitchProfile(ctx context.Context, name string) error {
	return c.post(ctx, "/switch_profile", protocol.SwitchProfileRequest{ProfileName: name}, nil)
}

// GenerateTitle asks the server for a title made from the first user
// message (maxLength 0: the server's default).
func (c *Conversation) GenerateTitle(ctx context.Context, maxLength int) (string, error) {
	var body protocol.GenerateTitleRequest
	if maxLength > 0 {
		body.MaxLength = &maxLength
	}
	var out protocol.GenerateTitleResponse
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
	body := protocol.StartGoalRequest{Objective: &objective}
	if maxIterations > 0 {
		body.MaxIterations = &maxIterations
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

// optional returns a pointer to s, nil for "" (a member left out).
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
