package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/uuid"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/security"
)

// PermissionAction is a permission request of the ACP server that the
// confirmation policy held for the user (kind "ACPPermissionAction", a
// gohands kind: the reference approves every request and has none).
type PermissionAction struct {
	ToolCallID string          `json:"tool_call_id"`
	Title      string          `json:"title"`
	ToolKind   string          `json:"tool_kind,omitempty"`
	RawInput   json.RawMessage `json:"raw_input,omitempty"`
	Options    []string        `json:"options"`
}

// PermissionObservation answers an approved PermissionAction with the
// option chosen (kind "ACPPermissionObservation").
type PermissionObservation struct {
	event.ObservationBase
	OptionID string `json:"option_id"`
}

// permRequest is a session/request_permission waiting for an answer.
type permRequest struct {
	action  *event.ActionEvent
	options []sdk.PermissionOption
	reply   chan sdk.PermissionOptionId // "" means cancelled
}

func (p *permRequest) answer(id sdk.PermissionOptionId) {
	select {
	case p.reply <- id:
	default:
	}
}

// option picks the server's option for an approval or a denial: a
// one-time choice first, as a user answering once would.
func (p *permRequest) option(allow bool) sdk.PermissionOptionId {
	kinds := []sdk.PermissionOptionKind{"reject_once", "reject_always"}
	if allow {
		kinds = []sdk.PermissionOptionKind{"allow_once", "allow_always"}
	}
	for _, k := range kinds {
		for _, o := range p.options {
			if o.Kind == k {
				return o.OptionId
			}
		}
	}
	if allow && len(p.options) > 0 {
		return p.options[0].OptionId
	}
	return ""
}

// client serves the server's requests (sdk.Client).
type client struct{ r *runner }

var _ sdk.Client = (*client)(nil)

// currentTurn returns the turn in flight, or nil: updates outside a turn
// (the history a session/load replays, command lists) are not events.
func (c *client) currentTurn() *turn {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	return c.r.turn
}

// SessionUpdate turns the stream of a turn into events and text.
func (c *client) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	t := c.currentTurn()
	if t == nil {
		return nil
	}
	t.touch()
	u := n.Update
	switch {
	case u.AgentMessageChunk != nil:
		if tx := u.AgentMessageChunk.Content.Text; tx != nil {
			t.mu.Lock()
			t.text.WriteString(tx.Text)
			t.mu.Unlock()
		}
	case u.AgentThoughtChunk != nil:
		if tx := u.AgentThoughtChunk.Content.Text; tx != nil {
			t.mu.Lock()
			t.thought.WriteString(tx.Text)
			t.mu.Unlock()
		}
	case u.UsageUpdate != nil:
		t.mu.Lock()
		t.usage = u.UsageUpdate
		t.mu.Unlock()
	case u.ToolCall != nil:
		tc := u.ToolCall
		ev := event.ACPToolCallEvent{
			ToolCallID: string(tc.ToolCallId),
			Title:      tc.Title,
			Status:     string(tc.Status),
			ToolKind:   string(tc.Kind),
			RawInput:   rawJSON(tc.RawInput),
			RawOutput:  rawJSON(tc.RawOutput),
			Content:    rawJSON(tc.Content),
		}
		call := &toolCall{ev: ev, terminal: isTerminal(ev.Status)}
		t.mu.Lock()
		t.calls = append(t.calls, call)
		t.mu.Unlock()
		return c.emitCall(ev)
	case u.ToolCallUpdate != nil:
		tu := u.ToolCallUpdate
		t.mu.Lock()
		var call *toolCall
		for _, x := range t.calls {
			if x.ev.ToolCallID == string(tu.ToolCallId) {
				call = x
			}
		}
		if call == nil {
			t.mu.Unlock()
			return nil
		}
		if tu.Title != nil {
			call.ev.Title = *tu.Title
		}
		if tu.Kind != nil {
			call.ev.ToolKind = string(*tu.Kind)
		}
		if tu.Status != nil {
			call.ev.Status = string(*tu.Status)
		}
		if tu.RawInput != nil {
			call.ev.RawInput = rawJSON(tu.RawInput)
		}
		if tu.RawOutput != nil {
			call.ev.RawOutput = rawJSON(tu.RawOutput)
		}
		if tu.Content != nil {
			call.ev.Content = rawJSON(tu.Content)
		}
		// Progress frames carry the whole output so far; only the
		// transition to a terminal status is persisted, as in the
		// reference, so a long command costs two events, not n.
		became := !call.terminal && isTerminal(call.ev.Status)
		call.terminal = call.terminal || became
		ev := call.ev
		t.mu.Unlock()
		if became {
			return c.emitCall(ev)
		}
	case u.Plan != nil:
		t.mu.Lock()
		t.planN++
		id := fmt.Sprintf("plan-%p", t)
		t.mu.Unlock()
		var lines []string
		for _, e := range u.Plan.Entries {
			lines = append(lines, fmt.Sprintf("[%s] %s", e.Status, e.Content))
		}
		return c.emitCall(event.ACPToolCallEvent{
			ToolCallID: id, Title: "Plan", Status: "completed", ToolKind: "think",
			RawOutput: rawJSON(strings.Join(lines, "\n")),
			Content:   rawJSON(u.Plan.Entries),
		})
	}
	return nil
}

// maxOutput caps a tool call's raw output text, as the reference does
// (the terminal tool's limit): a server may report a whole build log.
const maxOutput = 30000

func (c *client) emitCall(ev event.ACPToolCallEvent) error {
	ev.Base = event.NewBase(event.SourceAgent)
	var out string
	if json.Unmarshal(ev.RawOutput, &out) == nil && len(out) > maxOutput {
		half := maxOutput / 2
		out = out[:half] + "\n[... output truncated ...]\n" + out[len(out)-half:]
		ev.RawOutput = rawJSON(strings.ToValidUTF8(out, ""))
	}
	ev.IsError = ev.Status == "failed"
	if err := c.r.sess.Emit(&ev); err != nil {
		c.r.log.Warn("acp agent: tool call event", "err", err)
	}
	return nil
}

func isTerminal(status string) bool { return status == "completed" || status == "failed" }

func rawJSON(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return nil
	}
	return b
}

// shellKinds maps ACP tool kinds to the tool names the security analyzer
// knows, so that a command gets the shell rules.
var shellKinds = map[string]string{"execute": "terminal", "edit": "file_editor", "delete": "file_editor", "move": "file_editor", "read": "file_editor", "fetch": "fetch"}

// RequestPermission rates the tool call with the conversation's security
// analyzer and asks its confirmation policy: allowed at once, or held for
// the user as a pending action.
func (c *client) RequestPermission(ctx context.Context, req sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	r := c.r
	t := c.currentTurn()
	cancelled := sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{}}}
	if t == nil {
		return cancelled, nil
	}
	tc := req.ToolCall
	title, kind := "", ""
	if tc.Title != nil {
		title = *tc.Title
	}
	if tc.Kind != nil {
		kind = string(*tc.Kind)
	}
	toolName := shellKinds[kind]
	if toolName == "" {
		toolName = "acp_" + kind
	}
	raw := rawJSON(tc.RawInput)
	args := string(raw)
	if args == "" {
		args = "{}"
	}
	opts := make([]string, len(req.Options))
	for i, o := range req.Options {
		opts[i] = string(o.OptionId)
	}
	callID := string(tc.ToolCallId)
	if callID == "" {
		callID = uuid.NewString()
	}
	act := &event.ActionEvent{
		Base:          event.NewBase(event.SourceAgent),
		Thought:       event.List[event.Content]{},
		Action:        &PermissionAction{ToolCallID: string(tc.ToolCallId), Title: title, ToolKind: kind, RawInput: raw, Options: opts},
		ToolName:      toolName,
		ToolCallID:    callID,
		ToolCall:      event.ToolCall{ID: callID, Name: toolName, Arguments: args, Origin: "completion"},
		LLMResponseID: uuid.NewString(),
		Summary:       title,
	}
	p := &permRequest{action: act, options: req.Options, reply: make(chan sdk.PermissionOptionId, 1)}
	act.SecurityRisk = r.risk(ctx, act)
	if !r.sess.Fields().Policy().ShouldConfirm(act.SecurityRisk) {
		id := p.option(true)
		r.log.Info("acp agent: permission granted by policy", "tool", title, "risk", act.SecurityRisk, "option", id)
		return selected(id), nil
	}
	select {
	case t.perms <- p:
	case <-ctx.Done():
		return cancelled, nil
	}
	select {
	case id := <-p.reply:
		t.touch()
		if id == "" {
			return cancelled, nil
		}
		return selected(id), nil
	case <-ctx.Done():
		return cancelled, nil
	}
}

func selected(id sdk.PermissionOptionId) sdk.RequestPermissionResponse {
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: id}}}
}

// risk rates act with the conversation's analyzer, UNKNOWN without one.
func (r *runner) risk(ctx context.Context, act *event.ActionEvent) event.SecurityRisk {
	a := r.sess.Fields().SecurityAnalyzer
	if a == nil {
		return event.RiskUnknown
	}
	a = security.Bind(a, security.Binding{WorkDir: r.sess.WorkingDir(), SecretNames: r.sess.Secrets().Names()})
	return security.AnalyzeAll(ctx, a, []*event.ActionEvent{act})[0]
}

// inWorkspace resolves an absolute path the server names and checks that
// it is inside the workspace: the server works there, and a request
// outside it is refused rather than served from the host.
func (c *client) inWorkspace(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("path %q is not absolute", p)
	}
	root := c.r.sess.WorkingDir()
	clean := filepath.Clean(p)
	rel, err := filepath.Rel(root, clean)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q is outside the workspace %s", p, root)
	}
	return clean, nil
}

// ReadTextFile serves fs/read_text_file from the workspace.
func (c *client) ReadTextFile(_ context.Context, req sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	p, err := c.inWorkspace(req.Path)
	if err != nil {
		return sdk.ReadTextFileResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	b, err := os.ReadFile(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return sdk.ReadTextFileResponse{}, notFound(req.Path)
		}
		return sdk.ReadTextFileResponse{}, err
	}
	text := string(b)
	if req.Line != nil || req.Limit != nil {
		lines := strings.SplitAfter(text, "\n")
		start := 0
		if req.Line != nil && *req.Line > 1 {
			start = min(*req.Line-1, len(lines))
		}
		end := len(lines)
		if req.Limit != nil && *req.Limit >= 0 {
			end = min(start+*req.Limit, end)
		}
		text = strings.Join(lines[start:end], "")
	}
	return sdk.ReadTextFileResponse{Content: text}, nil
}

// WriteTextFile serves fs/write_text_file in the workspace.
func (c *client) WriteTextFile(_ context.Context, req sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	p, err := c.inWorkspace(req.Path)
	if err != nil {
		return sdk.WriteTextFileResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return sdk.WriteTextFileResponse{}, err
	}
	return sdk.WriteTextFileResponse{}, os.WriteFile(p, []byte(req.Content), 0o644)
}

// The terminal methods run commands in the workspace (terminal.go).

func (c *client) CreateTerminal(ctx context.Context, req sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	cwd := c.r.sess.WorkingDir()
	if req.Cwd != nil && *req.Cwd != "" {
		p, err := c.inWorkspace(*req.Cwd)
		if err != nil {
			return sdk.CreateTerminalResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
		}
		cwd = p
	}
	env := map[string]string{}
	for _, e := range req.Env {
		env[e.Name] = e.Value
	}
	limit := 0
	if req.OutputByteLimit != nil {
		limit = *req.OutputByteLimit
	}
	id, err := c.r.terms.create(req.Command, req.Args, cwd, env, limit)
	if err != nil {
		return sdk.CreateTerminalResponse{}, err
	}
	return sdk.CreateTerminalResponse{TerminalId: id}, nil
}

func (c *client) TerminalOutput(_ context.Context, req sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	t, err := c.r.terms.get(req.TerminalId)
	if err != nil {
		return sdk.TerminalOutputResponse{}, err
	}
	out, truncated, st := t.snapshot()
	return sdk.TerminalOutputResponse{Output: out, Truncated: truncated, ExitStatus: st}, nil
}

func (c *client) WaitForTerminalExit(ctx context.Context, req sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	t, err := c.r.terms.get(req.TerminalId)
	if err != nil {
		return sdk.WaitForTerminalExitResponse{}, err
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return sdk.WaitForTerminalExitResponse{}, ctx.Err()
	}
	_, _, st := t.snapshot()
	return sdk.WaitForTerminalExitResponse{ExitCode: st.ExitCode, Signal: st.Signal}, nil
}

func (c *client) KillTerminal(_ context.Context, req sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	t, err := c.r.terms.get(req.TerminalId)
	if err != nil {
		return sdk.KillTerminalResponse{}, err
	}
	t.kill()
	return sdk.KillTerminalResponse{}, nil
}

func (c *client) ReleaseTerminal(_ context.Context, req sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	if err := c.r.terms.release(req.TerminalId); err != nil {
		return sdk.ReleaseTerminalResponse{}, err
	}
	return sdk.ReleaseTerminalResponse{}, nil
}
