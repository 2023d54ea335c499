package hook

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/gohands/gohands/event"
)

// MaxLogChars caps the stdout and stderr kept in a HookExecutionEvent.
const MaxLogChars = 50000

// Manager runs the configured hooks of each event type.
type Manager struct {
	Config *Config
	Runner *Runner
}

// NewManager returns a manager of cfg's hooks run by r.
func NewManager(cfg *Config, r *Runner) *Manager {
	if r == nil {
		r = &Runner{}
	}
	return &Manager{Config: cfg, Runner: r}
}

// Outcome is what the hooks of one event decided.
type Outcome struct {
	// Blocked is true when a hook blocked an event that can be blocked
	// (PreToolUse, UserPromptSubmit, Stop).
	Blocked bool
	// Reason explains the block: the blocking hook's reason, else its
	// stderr.
	Reason string
	// AdditionalContext joins (with "\n") the context the hooks added.
	AdditionalContext string
	// Results are the runs, in order.
	Results []Result
	// Events record the runs, one HookExecutionEvent each, to append to the
	// conversation.
	Events []*event.HookExecutionEvent
}

// Ref ties a hook run to the event that caused it.
type Ref struct {
	ActionID  string
	MessageID string
}

// blocking reports whether hooks of eventType run in turn until one
// blocks; the others run every hook and cannot block.
func blocking(eventType string) bool {
	switch eventType {
	case PostToolUse, SessionStart, SessionEnd:
		return false
	}
	return true
}

// Fire runs the hooks of in.EventType selected by in.ToolName. For
// PreToolUse, UserPromptSubmit and Stop they run in order until one
// blocks; for the others all run and none blocks. It never fails: hook
// failures are in the Outcome's results and events. After SessionEnd,
// close the Runner to stop background hooks.
func (m *Manager) Fire(ctx context.Context, in Input, ref Ref) Outcome {
	var out Outcome
	hooks := m.Config.Hooks(in.EventType, in.ToolName)
	if len(hooks) == 0 {
		return out
	}
	if in.SessionID == "" {
		in.SessionID = m.Runner.SessionID
	}
	if in.WorkingDir == "" {
		in.WorkingDir = m.Runner.workDir()
	}
	input := in.recorded()
	stop := blocking(in.EventType)
	var contexts []string
	for i := range hooks {
		d := &hooks[i]
		res := m.Runner.Run(ctx, d, in)
		out.Results = append(out.Results, res)
		out.Events = append(out.Events, &event.HookExecutionEvent{
			Base:              event.NewBase(event.SourceHook),
			HookEventType:     in.EventType,
			HookCommand:       d.Label(),
			ToolName:          in.ToolName,
			Success:           res.Success,
			Blocked:           res.Blocked,
			ExitCode:          res.ExitCode,
			Stdout:            capLog(res.Stdout),
			Stderr:            capLog(res.Stderr),
			Reason:            res.Reason,
			AdditionalContext: res.AdditionalContext,
			Error:             res.Error,
			ActionID:          ref.ActionID,
			MessageID:         ref.MessageID,
			HookInput:         input,
		})
		if res.AdditionalContext != "" {
			contexts = append(contexts, res.AdditionalContext)
		}
		if stop && !res.Continue() {
			out.Blocked = true
			out.Reason = res.Reason
			if out.Reason == "" {
				out.Reason = strings.TrimSpace(res.Stderr)
			}
			if out.Reason == "" {
				out.Reason = "blocked by hook " + d.Label()
			}
			break
		}
	}
	out.AdditionalContext = strings.Join(contexts, "\n")
	return out
}

// recorded returns what a HookExecutionEvent keeps of in as its
// hook_input, as the reference does: the tool's name and input (and
// response) for tool hooks, the message for UserPromptSubmit, the reason
// for Stop, nothing for the session hooks. The session and working
// directory are the conversation's own and are not repeated.
func (in Input) recorded() json.RawMessage {
	var v any
	switch in.EventType {
	case PreToolUse:
		v = struct {
			ToolName  string          `json:"tool_name"`
			ToolInput json.RawMessage `json:"tool_input"`
		}{in.ToolName, orEmpty(in.ToolInput)}
	case PostToolUse:
		v = struct {
			ToolName     string          `json:"tool_name"`
			ToolInput    json.RawMessage `json:"tool_input"`
			ToolResponse json.RawMessage `json:"tool_response"`
		}{in.ToolName, orEmpty(in.ToolInput), orEmpty(in.ToolResponse)}
	case UserPromptSubmit:
		v = map[string]string{"message": in.Message}
	case Stop:
		r, _ := in.Metadata["reason"].(string)
		if r == "" {
			return nil
		}
		v = map[string]string{"reason": r}
	default:
		return nil
	}
	b, _ := json.Marshal(v)
	return b
}

// orEmpty returns r, or an empty JSON object when r is empty.
func orEmpty(r json.RawMessage) json.RawMessage {
	if len(r) == 0 {
		return json.RawMessage("{}")
	}
	return r
}

// capLog keeps at most MaxLogChars characters of s.
func capLog(s string) string {
	if len(s) <= MaxLogChars {
		return s
	}
	const mark = "\n[output truncated]"
	r := []rune(s)
	if len(r) <= MaxLogChars {
		return s
	}
	return string(r[:MaxLogChars-len(mark)]) + mark
}

// StopFeedbackPrefix starts the message that tells the model why a Stop
// hook kept it running.
const StopFeedbackPrefix = "[Stop hook feedback]"

// StopFeedback returns the text of the message to give the model when Stop
// hooks blocked: the prefix, then the hooks' additional context or else
// the block reason. It is "" when the hooks did not block.
func (o *Outcome) StopFeedback() string {
	if !o.Blocked {
		return ""
	}
	fb := o.AdditionalContext
	if fb == "" {
		fb = o.Reason
	}
	return StopFeedbackPrefix + " " + fb
}

// PreToolUse runs the PreToolUse hooks of a tool call about to run;
// toolInput is its action as stored in the ActionEvent (a JSON object
// with its kind and every field, defaults included), what the reference
// gives its hooks. A blocked outcome means
// the action must not run (answer it with a UserRejectObservation from
// the hook, giving Reason).
func (m *Manager) PreToolUse(ctx context.Context, toolName string, toolInput json.RawMessage, actionID string) Outcome {
	return m.Fire(ctx, Input{EventType: PreToolUse, ToolName: toolName, ToolInput: toolInput}, Ref{ActionID: actionID})
}

// PostToolUse runs the PostToolUse hooks of a finished tool call;
// toolInput is its action and toolResponse its observation, as stored in
// their events (JSON objects with their kinds). It never
// blocks.
func (m *Manager) PostToolUse(ctx context.Context, toolName string, toolInput, toolResponse json.RawMessage, actionID string) Outcome {
	return m.Fire(ctx, Input{EventType: PostToolUse, ToolName: toolName, ToolInput: toolInput, ToolResponse: toolResponse}, Ref{ActionID: actionID})
}

// UserPromptSubmit runs the hooks of a user message. A blocked outcome
// means the message must not reach the model; AdditionalContext is to be
// appended to the message's extended content.
func (m *Manager) UserPromptSubmit(ctx context.Context, message, messageID string) Outcome {
	return m.Fire(ctx, Input{EventType: UserPromptSubmit, Message: message}, Ref{MessageID: messageID})
}

// Stop runs the Stop hooks when the agent wants to finish (reason, e.g.
// "agent_finished", goes into the input's metadata). A blocked outcome
// means the agent keeps running, told StopFeedback.
func (m *Manager) Stop(ctx context.Context, reason string) Outcome {
	in := Input{EventType: Stop}
	if reason != "" {
		in.Metadata = map[string]any{"reason": reason}
	}
	return m.Fire(ctx, in, Ref{})
}

// SessionStart runs the SessionStart hooks.
func (m *Manager) SessionStart(ctx context.Context) Outcome {
	return m.Fire(ctx, Input{EventType: SessionStart}, Ref{})
}

// SessionEnd runs the SessionEnd hooks, then stops the background hooks
// still running.
func (m *Manager) SessionEnd(ctx context.Context) Outcome {
	out := m.Fire(ctx, Input{EventType: SessionEnd}, Ref{})
	m.Runner.Close()
	return out
}
