package acp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/gohands/gohands/conversation"
)

// Keys of the conversation's agent_state about the session's model, as
// the reference names them.
const (
	stateCurrentModel  = "acp_current_model_id"
	stateRuntimeSwitch = "acp_supports_runtime_model_switch"
	stateViaConfig     = "acp_model_via_config_option"
	stateModels        = "acp_available_models"
)

// switchProviders are fragments of the agent names (initialize's
// agentInfo.name) of the servers known to take a live model switch: the
// reference's built-in providers, all of which declare it.
var switchProviders = []string{"claude-agent", "codex-acp", "gemini-cli", "kimi", "pi-acp", "opencode"}

// SupportsRuntimeModelSwitch reports whether a server that names itself
// agentName (initialize's agentInfo.name) is known to switch models in a
// live session. A conversation tries a switch with any server; this only
// tells a client whether to offer one.
func SupportsRuntimeModelSwitch(agentName string) bool {
	lower := strings.ToLower(agentName)
	for _, p := range switchProviders {
		if strings.Contains(lower, p) {
			return true
		}
	}
	return false
}

// ModelError is a model switch refused because of its model: an empty
// one, or one the server rejected. The agent server answers it 400.
type ModelError struct {
	Msg string
	Err error
}

func (e *ModelError) Error() string { return e.Msg }

func (e *ModelError) Unwrap() error { return e.Err }

var _ conversation.ModelSwitcher = (*runner)(nil)

// SwitchModel implements conversation.ModelSwitcher. With a live session
// it asks the server for model the way the session selects models (the
// "model" config option, else session/set_model), after the turn in
// progress, within acp_prompt_timeout; a server that rejects it leaves
// everything as it was. Without one (before the first turn, or after the
// server exited) it only records model: the session started next selects
// it. The agent returned is this one with acp_model set to model.
func (r *runner) SwitchModel(ctx context.Context, model string) (conversation.Agent, error) {
	if strings.TrimSpace(model) == "" {
		return nil, &ModelError{Msg: "model must be a non-empty string"}
	}
	r.stepMu.Lock()
	defer r.stepMu.Unlock()
	// An exited server is left to the next turn, which starts a session
	// with the new model.
	srv, _, err := r.current()
	if err != nil {
		return nil, err
	}
	if srv != nil {
		cctx, cancel := context.WithTimeout(ctx, seconds(r.a.PromptTimeout))
		err := r.applyModel(cctx, srv, model)
		cancel()
		if err != nil {
			return nil, r.switchError(cctx, srv, model, err)
		}
		r.log.Info("acp agent: switched the session's model", "model", model, "server", srv.name)
	}
	a := *r.a
	a.Model = &model
	if err := r.sess.State().Update(func(f *conversation.Fields) error {
		st := make(map[string]any, len(f.AgentState)+1)
		maps.Copy(st, f.AgentState)
		st[stateCurrentModel] = model
		f.AgentState = st
		return nil
	}); err != nil {
		return nil, err
	}
	r.a = &a
	return &a, nil
}

// switchError names a failed live switch: a server too slow is a
// timeout, its internal error (-32603) is its own failure, and any
// other rejection is the model's.
func (r *runner) switchError(ctx context.Context, srv *server, model string, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("acp agent: the ACP server did not answer the model switch within %gs (acp_prompt_timeout): %w", r.a.PromptTimeout, context.DeadlineExceeded)
	}
	var re *sdk.RequestError
	if !errors.As(err, &re) || re.Code == -32603 {
		return fmt.Errorf("acp agent: switching the model to %s: %w", model, err)
	}
	method := "set_session_model"
	if srv.viaConfig {
		method = "set_config_option(model)"
	}
	return &ModelError{Msg: fmt.Sprintf("ACP server rejected %s(model=%q): %s", method, model, detail(err)), Err: err}
}

// applyModel asks the server for model through the mechanism the session
// advertised.
func (r *runner) applyModel(ctx context.Context, srv *server, model string) error {
	if srv.viaConfig {
		_, err := call(ctx, srv, func(ctx context.Context) (sdk.SetSessionConfigOptionResponse, error) {
			return srv.conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
				SessionId: srv.session, ConfigId: "model", Value: sdk.SessionConfigValueId(model),
			}})
		})
		return err
	}
	_, err := call(ctx, srv, func(ctx context.Context) (sdk.UnstableSetSessionModelResponse, error) {
		return srv.conn.UnstableSetSessionModel(ctx, sdk.UnstableSetSessionModelRequest{SessionId: srv.session, ModelId: sdk.UnstableModelId(model)})
	})
	return err
}

// sessionModels reads a session's answer (session/new or session/load)
// for its models: whether it selects them by the "model" config option
// (which wins over the unstable model state), the model it runs ("" if
// it does not say) and the models it offers. ok is false when it says
// nothing of models.
func sessionModels(opts []sdk.SessionConfigOption, models *sdk.SessionModelState) (viaConfig bool, current string, available []ModelInfo, ok bool) {
	for _, o := range opts {
		s := o.Select
		if s == nil || string(s.Id) != "model" {
			continue
		}
		var choices []sdk.SessionConfigSelectOption
		if u := s.Options.Ungrouped; u != nil {
			choices = *u
		}
		if g := s.Options.Grouped; g != nil {
			for _, grp := range *g {
				choices = append(choices, grp.Options...)
			}
		}
		available = []ModelInfo{}
		for _, c := range choices {
			name := c.Name
			available = append(available, ModelInfo{ModelID: string(c.Value), Name: &name, Description: c.Description})
		}
		return true, string(s.CurrentValue), available, true
	}
	if models == nil {
		return false, "", nil, false
	}
	available = []ModelInfo{}
	for _, m := range models.AvailableModels {
		name := m.Name
		available = append(available, ModelInfo{ModelID: string(m.ModelId), Name: &name, Description: m.Description})
	}
	return false, string(models.CurrentModelId), available, true
}
