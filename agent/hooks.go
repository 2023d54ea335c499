package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/hook"
	"github.com/gohands/gohands/plugin"
)

// PrepareMessage implements conversation.Runner. The
// UserPromptSubmit hooks run first: the message one of them blocks is
// stored all the same, after the hooks' runs, and its id goes into the
// state's blocked_messages with the hook's reason, as in the reference;
// the next step takes it out again and ends the run (finished) without
// asking the model (see skipBlockedMessage). The context the hooks add
// goes into the message's extended content. Then the keyword skills the
// message triggers (each once per conversation) and the context's user
// message suffix are added, and the skills recorded in activated_skills.
func (r *runner) PrepareMessage(ctx context.Context, m *event.MessageEvent) error {
	text := event.TextOf(m.LLMMessage.Content)
	if r.hooks != nil {
		out := r.hooks.UserPromptSubmit(ctx, text, m.ID)
		if err := r.emitHookEvents(out); err != nil {
			return err
		}
		if out.Blocked {
			reason := out.Reason
			if reason == "" {
				reason = "Blocked by hook"
			}
			err := r.sess.State().Update(func(f *conversation.Fields) error {
				f.BlockedMessages = maps.Clone(f.BlockedMessages)
				if f.BlockedMessages == nil {
					f.BlockedMessages = map[string]string{}
				}
				f.BlockedMessages[m.ID] = reason
				return nil
			})
			if err != nil {
				return err
			}
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

// skipBlockedMessage ends the run when the last user message is one a
// UserPromptSubmit hook blocked: its entry leaves blocked_messages and the
// status becomes finished, as in the reference. The message stays in the
// log, so the model reads it with the next message it gets (the
// reference's too).
func (r *runner) skipBlockedMessage() (bool, error) {
	f := r.sess.Fields()
	if _, ok := f.BlockedMessages[f.LastUserMessageID]; !ok || f.LastUserMessageID == "" {
		return false, nil
	}
	id := f.LastUserMessageID
	err := r.sess.State().Update(func(f *conversation.Fields) error {
		f.BlockedMessages = maps.Clone(f.BlockedMessages)
		delete(f.BlockedMessages, id)
		return nil
	})
	r.sess.Logger().Info("agent: the user message was blocked by a hook", "message", id)
	return true, errors.Join(err, r.sess.SetStatus(conversation.StatusFinished))
}

// emitHookEvents records the hook runs of out.
func (r *runner) emitHookEvents(out hook.Outcome) error {
	if len(out.Events) == 0 {
		return nil
	}
	return r.sess.EmitAll(hookEvents(out)...)
}

// hookEvents returns the events recording the hook runs of out.
func hookEvents(out hook.Outcome) []event.Event {
	evs := make([]event.Event, len(out.Events))
	for i, e := range out.Events {
		evs[i] = e
	}
	return evs
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

// preToolUse runs the PreToolUse hooks of a and returns their runs, to
// record before a, and the rejection to answer a with when a hook blocks
// it (nil: run it). The hooks get a's action as stored, kind and
// defaults included, as the reference gives them.
func (r *runner) preToolUse(ctx context.Context, a *event.ActionEvent) ([]event.Event, *event.UserRejectObservation, error) {
	if r.hooks == nil || a.Action == nil {
		return nil, nil, nil
	}
	in, err := modelDump(a.Action)
	if err != nil {
		return nil, nil, err
	}
	out := r.hooks.PreToolUse(ctx, a.ToolName, in, a.ID)
	evs := hookEvents(out)
	if !out.Blocked {
		return evs, nil, nil
	}
	return evs, &event.UserRejectObservation{
		Base:            event.NewBase(event.SourceEnvironment),
		ToolName:        a.ToolName,
		ToolCallID:      a.ToolCallID,
		RejectionReason: out.Reason,
		RejectionSource: event.RejectedByHook,
		ActionID:        a.ID,
	}, nil
}

// hookActions runs the PreToolUse hooks of the actions of a reply that
// are not decided yet and returns the events to store, each action
// preceded by its hooks' runs as in the reference. The rejections of the
// actions the hooks block are added to decided.
func (r *runner) hookActions(ctx context.Context, actions []event.Event, decided map[string]event.Event) ([]event.Event, error) {
	if r.hooks == nil {
		return actions, nil
	}
	out := make([]event.Event, 0, len(actions))
	for _, e := range actions {
		if a, ok := e.(*event.ActionEvent); ok && decided[a.ID] == nil {
			evs, rej, err := r.preToolUse(ctx, a)
			if err != nil {
				return nil, err
			}
			out = append(out, evs...)
			if rej != nil {
				decided[a.ID] = rej
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// postToolUse runs the PostToolUse hooks of an action that ran, giving
// them its action and observation, and returns their runs, to record
// before the observation as the reference does. They cannot block.
func (r *runner) postToolUse(ctx context.Context, a *event.ActionEvent, ev event.Event) ([]event.Event, error) {
	o, ok := ev.(*event.ObservationEvent)
	if r.hooks == nil || !ok || o.Observation == nil || a.Action == nil {
		return nil, nil
	}
	in, err := modelDump(a.Action)
	if err != nil {
		return nil, err
	}
	resp, err := modelDump(o.Observation)
	if err != nil {
		return nil, err
	}
	return hookEvents(r.hooks.PostToolUse(ctx, a.ToolName, in, resp, a.ID)), nil
}

// modelDump returns an action or observation as hooks get it: as
// stored, kind included, plus a null for each unset optional (nil
// pointer) field the stored form leaves out, as the reference's
// model_dump() keeps its None fields.
func modelDump(v any) (json.RawMessage, error) {
	b, err := event.MarshalKinded(v)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct || len(b) < 2 || b[0] != '{' {
		return b, nil
	}
	var nulls []byte
	for _, f := range reflect.VisibleFields(rv.Type()) {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || f.Anonymous || name == "" || name == "-" || f.Type.Kind() != reflect.Pointer ||
			!slices.Contains(strings.Split(opts, ","), "omitempty") {
			continue
		}
		if fv, err := rv.FieldByIndexErr(f.Index); err == nil && !fv.IsNil() {
			continue
		}
		k, _ := json.Marshal(name)
		nulls = append(append(nulls, k...), ":null,"...)
	}
	if len(nulls) == 0 {
		return b, nil
	}
	if b[1] == '}' {
		nulls = nulls[:len(nulls)-1]
	}
	return append(append([]byte{'{'}, nulls...), b[1:]...), nil
}
