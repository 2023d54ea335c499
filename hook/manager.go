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
	input, _ := json.Marshal(in)
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
