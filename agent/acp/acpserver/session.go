package acpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/gohands/gohands/agent/finish"
	"github.com/gohands/gohands/agent/think"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

// maxToolText caps the text of a tool result sent to the client.
const maxToolText = 30000

// session is an ACP session: a conversation and the queue of its
// updates to the client.
type session struct {
	s    *server
	id   sdk.SessionId
	conv *conversation.LocalConversation
	// out carries, in commit order, the notifications to send; the
	// conversation's subscriber must not block on the client.
	out chan func()

	mu    sync.Mutex
	mode  string
	model string // the model the agent uses ("" if unknown)
}

func (ss *session) modes() *sdk.SessionModeState {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return &sdk.SessionModeState{AvailableModes: modes, CurrentModeId: sdk.SessionModeId(ss.mode)}
}

// close ends the session: no more updates, the conversation closed.
func (ss *session) close() error {
	err := ss.conv.Close()
	close(ss.out)
	return err
}

// send delivers the queued notifications.
func (ss *session) send() {
	for f := range ss.out {
		f()
	}
}

// flush returns when every update queued so far has been sent.
func (ss *session) flush(ctx context.Context) error {
	done := make(chan struct{})
	ss.out <- func() { close(done) }
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (ss *session) update(u sdk.SessionUpdate) {
	ss.out <- func() {
		ss.s.connection().SessionUpdate(context.Background(), sdk.SessionNotification{SessionId: ss.id, Update: u})
	}
}

// history is the conversation's log, for session/load.
func (ss *session) history(ctx context.Context) []event.Event {
	log := ss.conv.State().Events()
	var out []event.Event
	for i := range log.Len() {
		if e, err := log.Event(ctx, i); err == nil {
			out = append(out, e)
		}
	}
	return out
}

// replay sends a stored event to a client that loads the session.
func (ss *session) replay(e event.Event) {
	if m, ok := e.(*event.MessageEvent); ok && m.Source == event.SourceUser {
		if t := event.TextOf(m.LLMMessage.Content); t != "" {
			ss.update(sdk.UpdateUserMessageText(t))
		}
		return
	}
	ss.forward(e)
}

// forward turns a committed event into session updates.
func (ss *session) forward(e event.Event) {
	switch e := e.(type) {
	case *event.MessageEvent:
		t := event.TextOf(e.LLMMessage.Content)
		if t == "" {
			return
		}
		if e.Source == event.SourceUser {
			// The client has the user's messages of a live turn;
			// replay sends them (see replay).
			return
		}
		ss.update(sdk.UpdateAgentMessageText(t))
	case *event.ActionEvent:
		if e.ReasoningContent != "" {
			ss.update(sdk.UpdateAgentThoughtText(e.ReasoningContent))
		}
		if t := event.TextOf(e.Thought); t != "" {
			ss.update(sdk.UpdateAgentMessageText(t))
		}
		switch a := e.Action.(type) {
		case *finish.Action:
			ss.update(sdk.UpdateAgentMessageText(a.Message))
			return
		case *think.Action:
			b, _ := json.Marshal(a)
			var m map[string]any
			json.Unmarshal(b, &m)
			if t, _ := m["thought"].(string); t != "" {
				ss.update(sdk.UpdateAgentThoughtText(t))
			}
			return
		}
		var input any
		json.Unmarshal([]byte(e.ToolCall.Arguments), &input)
		ss.update(sdk.StartToolCall(sdk.ToolCallId(e.ToolCallID), title(e),
			sdk.WithStartKind(kindOf(e.ToolName)), sdk.WithStartStatus("pending"), sdk.WithStartRawInput(input)))
	case *event.ObservationEvent:
		switch e.Observation.(type) {
		case *finish.Observation, *think.Observation:
			return
		}
		view := tool.PresentObservation(e.Observation)
		if view.Tasks != nil { // a task list, maybe emptied
			var entries []sdk.PlanEntry
			for _, t := range view.Tasks {
				st := sdk.PlanEntryStatus("pending")
				switch t.Status {
				case tool.TaskInProgress:
					st = "in_progress"
				case tool.TaskDone:
					st = "completed"
				}
				entries = append(entries, sdk.PlanEntry{Content: t.Title, Priority: "medium", Status: st})
			}
			ss.update(sdk.UpdatePlan(entries...))
		}
		base := e.Observation.Obs()
		status := sdk.ToolCallStatus("completed")
		if base.IsError {
			status = "failed"
		}
		// An edit is sent as a diff, which editors show as one.
		if ed := view.Edit; ed != nil && !base.IsError && ed.Path != "" {
			var old []string
			if !ed.Created {
				old = []string{ed.Old}
			}
			ss.update(sdk.UpdateToolCall(sdk.ToolCallId(e.ToolCallID), sdk.WithUpdateStatus(status),
				sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolDiffContent(ed.Path, ed.New, old...)})))
			return
		}
		out := event.TextOf(base.Content)
		if len(out) > maxToolText {
			out = out[:maxToolText] + "\n[output truncated]"
		}
		ss.update(sdk.UpdateToolCall(sdk.ToolCallId(e.ToolCallID), sdk.WithUpdateStatus(status),
			sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(out))})))
	case *event.AgentErrorEvent:
		ss.update(sdk.UpdateToolCall(sdk.ToolCallId(e.ToolCallID), sdk.WithUpdateStatus("failed"),
			sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(e.Error))})))
	case *event.UserRejectObservation:
		ss.update(sdk.UpdateToolCall(sdk.ToolCallId(e.ToolCallID), sdk.WithUpdateStatus("failed"),
			sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock("Rejected: " + e.RejectionReason))})))
	case *event.ConversationErrorEvent:
		ss.update(sdk.UpdateAgentMessageText(fmt.Sprintf("Error (%s): %s", e.Code, e.Detail)))
	}
}

// title is a tool call's one-line title, for people: "`go test ./...`",
// "Edit `calc.py`"; the model's own summary otherwise, never the
// arguments' JSON (a summary the model did not write is made of it).
func title(e *event.ActionEvent) string {
	var args map[string]any
	json.Unmarshal([]byte(e.ToolCall.Arguments), &args)
	str := func(k string) string {
		v, _ := args[k].(string)
		v = strings.TrimSpace(v)
		if i := strings.IndexByte(v, '\n'); i >= 0 {
			v = v[:i] + " …"
		}
		if len(v) > 120 {
			v = v[:120] + "…"
		}
		return v
	}
	quote := func(v string) string { return "`" + strings.ReplaceAll(v, "`", "'") + "`" }
	switch e.ToolName {
	case "terminal":
		if c := str("command"); c != "" {
			return quote(c)
		}
	case "file_editor", "str_replace_editor":
		if p := str("path"); p != "" {
			verb := map[string]string{"view": "Read", "create": "Create", "str_replace": "Edit", "insert": "Edit", "undo_edit": "Undo the last edit of"}[str("command")]
			return cmpOr(verb, "Edit") + " " + quote(p)
		}
	case "grep", "glob":
		if p := str("pattern"); p != "" {
			return "Search " + quote(p)
		}
	}
	if e.Summary != "" && !strings.HasPrefix(e.Summary, e.ToolName+": {") {
		return e.Summary
	}
	for _, k := range []string{"command", "path", "pattern", "url", "query"} {
		if v := str(k); v != "" {
			return e.ToolName + " " + quote(v)
		}
	}
	return e.ToolName
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// kindOf maps gohands tools to ACP tool kinds, which editors show with
// their own icons.
func kindOf(tool string) sdk.ToolKind {
	switch tool {
	case "terminal":
		return "execute"
	case "file_editor", "apply_patch", "str_replace_editor":
		return "edit"
	case "glob", "grep":
		return "search"
	case "browser_tool_set", "fetch":
		return "fetch"
	case "task_tracker":
		return "think"
	}
	return "other"
}

// prompt runs one turn: the message is sent and the agent run until it
// finishes, asking the client's permission for the actions the mode
// holds. A session/cancel pauses the conversation and ends the turn with
// stopReason cancelled.
func (ss *session) prompt(ctx context.Context, blocks []sdk.ContentBlock) (sdk.PromptResponse, error) {
	t, images := text(blocks)
	if len(images) == 0 {
		if resp, ok, err := ss.command(ctx, t); ok {
			return resp, err
		}
	}
	msg := event.UserMessage(t)
	msg.Content = append(msg.Content, images...)
	if strings.TrimSpace(t) == "" && len(images) == 0 {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"error": "empty prompt"})
	}
	if err := ss.conv.SendMessage(ctx, msg); err != nil {
		return sdk.PromptResponse{}, err
	}
	end := func(reason sdk.StopReason) (sdk.PromptResponse, error) {
		if err := ss.flush(context.Background()); err != nil {
			return sdk.PromptResponse{}, err
		}
		return sdk.PromptResponse{StopReason: reason}, nil
	}
	for {
		err := ss.conv.Run(ctx)
		if ctx.Err() != nil {
			return end("cancelled")
		}
		var re *conversation.RunError
		if errors.As(err, &re) {
			if err := ss.flush(context.Background()); err != nil {
				return sdk.PromptResponse{}, err
			}
			if re.Code == conversation.CodeMaxIterations {
				return end("max_turn_requests")
			}
			return sdk.PromptResponse{}, &sdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"message": re.Code + ": " + re.Detail}}
		}
		if err != nil {
			return sdk.PromptResponse{}, err
		}
		switch ss.conv.Status() {
		case conversation.StatusPaused:
			return end("cancelled")
		case conversation.StatusWaitingForConfirmation:
			if err := ss.flush(ctx); err != nil {
				return end("cancelled")
			}
			ok, err := ss.ask(ctx)
			if ctx.Err() != nil {
				return end("cancelled")
			}
			if err != nil {
				return sdk.PromptResponse{}, err
			}
			if !ok {
				if err := ss.conv.RejectPendingActions(ctx, "The user denied permission."); err != nil {
					return sdk.PromptResponse{}, err
				}
			}
		default:
			return end("end_turn")
		}
	}
}

// ask asks the client's permission for each pending action; all must be
// allowed for the batch to run.
func (ss *session) ask(ctx context.Context) (bool, error) {
	pending, err := ss.conv.State().PendingActions()
	if err != nil {
		return false, err
	}
	for _, a := range pending {
		kind := kindOf(a.ToolName)
		var input any
		json.Unmarshal([]byte(a.ToolCall.Arguments), &input)
		ttl := title(a)
		resp, err := ss.s.connection().RequestPermission(ctx, sdk.RequestPermissionRequest{
			SessionId: sdk.SessionId(ss.conv.ID()),
			ToolCall:  sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(a.ToolCallID), Title: &ttl, Kind: &kind, RawInput: input},
			Options: []sdk.PermissionOption{
				{OptionId: "allow", Name: "Allow", Kind: "allow_once"},
				{OptionId: "reject", Name: "Reject", Kind: "reject_once"},
			},
		})
		if err != nil {
			return false, err
		}
		if resp.Outcome.Selected == nil || resp.Outcome.Selected.OptionId != "allow" {
			return false, nil
		}
	}
	return true, nil
}

// exists reports whether a conversation is stored under dir.
func exists(dir, id string) bool {
	_, err := os.Stat(filepath.Join(filestore.Dir(dir, id), filestore.BaseStateFile))
	return err == nil
}
