package acpserver

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/gohands/gohands/conversation/filestore"
)

// The session listing, resuming, the model option and the slash commands.

// modelOption is the id of the model config option.
const modelOption = "model"

// ListSessions lists the stored sessions, most recently updated first;
// with a cwd, only those working there.
func (s *server) ListSessions(_ context.Context, req sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	sums, err := filestore.List(s.opts.PersistenceDir, func(dir string, err error) {
		s.opts.Logger.Warn("acp: a stored session cannot be listed", "dir", dir, "err", err)
	})
	if err != nil {
		return sdk.ListSessionsResponse{}, err
	}
	out := sdk.ListSessionsResponse{Sessions: []sdk.SessionInfo{}}
	for _, sum := range sums {
		if req.Cwd != nil && filepath.Clean(*req.Cwd) != filepath.Clean(sum.WorkingDir) {
			continue
		}
		info := sdk.SessionInfo{SessionId: sdk.SessionId(sum.ID), Cwd: sum.WorkingDir}
		if t := titleOf(sum.FirstMessage); t != "" {
			info.Title = &t
		}
		if sum.UpdatedAt != "" {
			info.UpdatedAt = new(sum.UpdatedAt)
		}
		out.Sessions = append(out.Sessions, info)
	}
	return out, nil
}

// titleOf is a session's title: the first line of its first message, cut.
func titleOf(first string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(first), "\n")
	if r := []rune(line); len(r) > 80 {
		return string(r[:79]) + "…"
	}
	return line
}

// ResumeSession opens a stored session without replaying its history (the
// client has it).
func (s *server) ResumeSession(ctx context.Context, req sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	id := string(req.SessionId)
	if id == "" {
		return sdk.ResumeSessionResponse{}, sdk.NewInvalidParams(map[string]any{"error": "sessionId is required"})
	}
	if !exists(s.opts.PersistenceDir, id) {
		return sdk.ResumeSessionResponse{}, &sdk.RequestError{Code: -32002, Message: "Resource not found", Data: map[string]any{"sessionId": id}}
	}
	ss, err := s.open(ctx, id, req.Cwd, req.McpServers)
	if err != nil {
		return sdk.ResumeSessionResponse{}, err
	}
	ss.announce()
	if err := ss.flush(ctx); err != nil {
		return sdk.ResumeSessionResponse{}, err
	}
	return sdk.ResumeSessionResponse{Modes: ss.modes(), ConfigOptions: ss.configOptions()}, nil
}

// SetSessionConfigOption sets the model, the one option there is.
func (s *server) SetSessionConfigOption(ctx context.Context, req sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	v := req.ValueId
	if v == nil {
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams(map[string]any{"error": "the model option takes a value id"})
	}
	ss, err := s.session(v.SessionId)
	if err != nil {
		return sdk.SetSessionConfigOptionResponse{}, err
	}
	if v.ConfigId != modelOption {
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("unknown config option %q", v.ConfigId)})
	}
	if err := ss.setModel(ctx, string(v.Value)); err != nil {
		return sdk.SetSessionConfigOptionResponse{}, err
	}
	return sdk.SetSessionConfigOptionResponse{ConfigOptions: ss.configOptions()}, nil
}

// models are the models a session may use: the configured ones and its
// own.
func (ss *session) models() []string {
	ss.mu.Lock()
	cur := ss.model
	ss.mu.Unlock()
	ms := slices.Clone(ss.s.opts.Models)
	if cur != "" && !slices.Contains(ms, cur) {
		ms = append([]string{cur}, ms...)
	}
	return ms
}

// configOptions is the model selector; none when the model cannot be
// switched or is unknown.
func (ss *session) configOptions() []sdk.SessionConfigOption {
	ss.mu.Lock()
	cur := ss.model
	ss.mu.Unlock()
	if ss.s.opts.SwitchModel == nil || cur == "" {
		return nil
	}
	var opts sdk.SessionConfigSelectOptionsUngrouped
	for _, m := range ss.models() {
		opts = append(opts, sdk.SessionConfigSelectOption{Name: m, Value: sdk.SessionConfigValueId(m)})
	}
	o := sdk.NewSessionConfigOptionSelect(sdk.SessionConfigValueId(cur), sdk.SessionConfigSelectOptions{Ungrouped: &opts})
	o.Select.Id = modelOption
	o.Select.Name = "Model"
	o.Select.Category = new(sdk.SessionConfigOptionCategoryModel)
	return []sdk.SessionConfigOption{o}
}

// setModel makes the session's agent use model from its next step on.
func (ss *session) setModel(ctx context.Context, model string) error {
	if ss.s.opts.SwitchModel == nil {
		return sdk.NewInvalidParams(map[string]any{"error": "this agent's model cannot be switched"})
	}
	if !slices.Contains(ss.models(), model) {
		return sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("unknown model %q (available: %s)", model, strings.Join(ss.models(), ", "))})
	}
	cfg, err := ss.s.opts.SwitchModel(model)
	if err != nil {
		return err
	}
	if err := ss.conv.SwitchLLM(ctx, cfg); err != nil {
		return err
	}
	ss.mu.Lock()
	ss.model = model
	ss.mu.Unlock()
	return nil
}

// commands are the slash commands a prompt may start with.
var commands = []sdk.AvailableCommand{
	{Name: "model", Description: "Switch the model: /model NAME", Input: &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: "model name"}}},
	{Name: "mode", Description: "Switch the mode: /mode always-ask, ask-risky or always-approve", Input: &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: "mode"}}},
}

// announce queues the session's available commands.
func (ss *session) announce() {
	ss.update(sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{
		SessionUpdate:     "available_commands_update",
		AvailableCommands: commands,
	}})
}

// command runs a slash command prompt; ok is false for a prompt that is
// not one (it goes to the agent).
func (ss *session) command(ctx context.Context, text string) (resp sdk.PromptResponse, ok bool, err error) {
	name, arg, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(text), "/"), " ")
	if !strings.HasPrefix(strings.TrimSpace(text), "/") || !slices.ContainsFunc(commands, func(c sdk.AvailableCommand) bool { return c.Name == name }) {
		return resp, false, nil
	}
	arg = strings.TrimSpace(arg)
	var reply string
	switch name {
	case "model":
		if err := ss.setModel(ctx, arg); err != nil {
			reply = "Model not switched: " + errorText(err)
		} else {
			reply = "Model: " + arg
			ss.update(sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{SessionUpdate: "config_option_update", ConfigOptions: ss.configOptions()}})
		}
	case "mode":
		if _, err := ss.s.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: ss.id, ModeId: sdk.SessionModeId(arg)}); err != nil {
			reply = "Mode not switched: " + errorText(err)
		} else {
			reply = "Mode: " + arg
			ss.update(sdk.SessionUpdate{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{SessionUpdate: "current_mode_update", CurrentModeId: sdk.SessionModeId(arg)}})
		}
	}
	ss.update(sdk.UpdateAgentMessageText(reply))
	if err := ss.flush(ctx); err != nil {
		return resp, true, err
	}
	return sdk.PromptResponse{StopReason: "end_turn"}, true, nil
}

// errorText is what a command's error says to the user.
func errorText(err error) string {
	if re, ok := err.(*sdk.RequestError); ok {
		if d, ok := re.Data.(map[string]any); ok {
			if e, ok := d["error"].(string); ok {
				return e
			}
		}
		return re.Message
	}
	return err.Error()
}
