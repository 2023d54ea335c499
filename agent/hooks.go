package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gohands/gohands/plugin"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/hook"
)

// PrepareMessage implements conversation.Runner. The
// UserPromptSubmit hooks run first: one that blocks keeps the message out
// of the conversation (the error gives its reason), and the context they
// add goes into the message's extended content. Then the keyword skills
// the message triggers (each once per conversation) and the context's user
// message suffix are added, and the skills recorded in activated_skills.
func (r *runner) PrepareMessage(ctx context.Context, m *event.MessageEvent) error {
	text := event.TextOf(m.LLMMessage.Content)
	if r.hooks != nil {
		out := r.hooks.UserPromptSubmit(ctx, text, m.ID)
		if err := r.emitHookEvents(out); err != nil {
			return err
		}
		if out.Blocked {
			return fmt.Errorf("%w: %s", ErrMessageBlocked, out.Reason)
		}
		if out.AdditionalContext != "" {
			m.ExtendedContent = append(m.ExtendedContent, event.Text(out.AdditionalContext))
		}
	}
	if r.skills == nil {
		return nil
	}
	r.skillMu.Lock()
	defer r.skillMu.Unlock()
	extra, names := r.skills.UserMessageExtra(text, r.activated)
	if extra != "" {
		m.ExtendedContent = append(m.ExtendedContent, event.Text(extra))
	}
	m.ActivatedSkills = append(m.ActivatedSkills, names...)
	r.activated = append(r.activated, names...)
	return nil
}

// ErrMessageBlocked means a UserPromptSubmit hook kept a user message out
// of the conversation.
var ErrMessageBlocked = errors.New("agent: message blocked by a hook")

// emitHookEvents records the hook runs of out.
func (r *runner) emitHookEvents(out hook.Outcome) error {
	for _, e := range out.Events {
		if err := r.sess.Emit(e); err != nil {
			return err
		}
	}
	return nil
}

// initHooks loads the hooks of the workspace (or of the user's home). An
// invalid hooks file is an error: silently running without the user's
// guards would be worse.
//
// The conversation's hook_config, when set, is used instead of the files.
func (r *runner) initHooks() error {
	var (
		cfg  *hook.Config
		path = "hook_config"
		err  error
	)
	if raw := bytes.TrimSpace(r.sess.Fields().HookConfig); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		cfg, err = hook.Parse(raw)
	} else {
		cfg, path, err = hook.Load(r.sess.WorkingDir())
	}
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	cfg = plugin.MergeHooks(cfg, r.pluginHooks)
	if cfg == nil || cfg.IsEmpty() {
		return nil
	}
	r.sess.Logger().Debug("agent: hooks loaded", "path", path)
	r.hooks = hook.NewManager(cfg, &hook.Runner{
		WorkDir:   r.sess.WorkingDir(),
		SessionID: r.sess.ID(),
		Model:     r.model,
		SubAgent:  r.hookAgent,
		Logger:    r.sess.Logger(),
		// A hook is a command like the agent's: it gets no credential or
		// secret through the environment it inherits.
		Hidden: func(_, value string) bool {
			return value != "" && r.sess.Secrets().Mask(value) != value
		},
	})
	return nil
}

// preToolUse runs the PreToolUse hooks of a, recording their runs, and
// returns the rejection to answer a with when a hook blocks it (nil: run
// it).
func (r *runner) preToolUse(ctx context.Context, a *event.ActionEvent) (*event.UserRejectObservation, error) {
	if r.hooks == nil {
		return nil, nil
	}
	out := r.hooks.PreToolUse(ctx, a.ToolName, json.RawMessage(a.ToolCall.Arguments), a.ID)
	if err := r.emitHookEvents(out); err != nil {
		return nil, err
	}
	if !out.Blocked {
		return nil, nil
	}
	return &event.UserRejectObservation{
		Base:            event.NewBase(event.SourceEnvironment),
		ToolName:        a.ToolName,
		ToolCallID:      a.ToolCallID,
		RejectionReason: out.Reason,
		RejectionSource: event.RejectedByHook,
		ActionID:        a.ID,
	}, nil
}

// postToolUse runs the PostToolUse hooks of an action that ran, giving
// them its observation, and records their runs. They cannot block.
func (r *runner) postToolUse(ctx context.Context, a *event.ActionEvent, ev event.Event) error {
	o, ok := ev.(*event.ObservationEvent)
	if r.hooks == nil || !ok || o.Observation == nil {
		return nil
	}
	resp, err := event.MarshalKinded(o.Observation)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	return r.emitHookEvents(r.hooks.PostToolUse(ctx, a.ToolName, json.RawMessage(a.ToolCall.Arguments), resp, a.ID))
}
