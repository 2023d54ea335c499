package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/gohands/gohands/agent/acp"
	"github.com/gohands/gohands/conversation"
)

// POST /api/conversations/{id}/switch_acp_model switches the model an
// ACP conversation's server runs, as the reference's does: in the live
// session when there is one (after the turn in progress), else recorded
// for the session the next run starts; either way the stored agent's
// acp_model names it, so a resume runs it. 400 for a conversation whose
// agent is not an ACP agent, an empty model or one the server rejects;
// 504 when the server does not answer within acp_prompt_timeout.

type switchACPModelRequest struct {
	Model *string `json:"model" required:"true"`
}

func (s *Server) acpSwitchRoute() *route {
	return &route{method: "POST", path: "/api/conversations/{conversation_id}/switch_acp_model", summary: "Switch the model of an ACP conversation's server", tag: "Conversations", body: switchACPModelRequest{}, resp: successResponse{}, errors: []int{400, 404, 422, 504}, h: handle(s, nil, s.handleSwitchACPModel)}
}

func (s *Server) handleSwitchACPModel(in *request[none, switchACPModelRequest]) (any, error) {
	if in.body.Model == nil {
		return nil, &invalidError{loc: []any{"body", "model"}, typ: "missing", msg: "Field required"}
	}
	_, lc, err := in.load()
	if err != nil {
		return nil, err
	}
	if _, ok := lc.State().Fields().Agent.(*acp.Agent); !ok {
		return nil, statusErr(http.StatusBadRequest, "switch_acp_model is only supported for ACP conversations.")
	}
	err = lc.SwitchAgentModel(in.r.Context(), *in.body.Model)
	var me *acp.ModelError
	switch {
	case err == nil:
		return ok, nil
	case errors.As(err, &me):
		return nil, statusErr(http.StatusBadRequest, "%s", me.Msg)
	case errors.Is(err, conversation.ErrCannotSwitch):
		return nil, statusErr(http.StatusBadRequest, "switch_acp_model is only supported for ACP conversations.")
	case errors.Is(err, context.DeadlineExceeded):
		return nil, statusErr(http.StatusGatewayTimeout, "%s", err.Error())
	}
	return nil, err
}

// acpModelState is what a conversation's info says of an ACP agent's
// model: the one its session runs (agent_state, kept by the runner and
// by a switch), else the one it asks for; the models its session offers;
// and whether its server takes a live switch.
func acpModelState(a *acp.Agent, state map[string]any) (model *string, available any, switchable bool) {
	if m, ok := state["acp_current_model_id"].(string); ok && m != "" {
		model = &m
	} else if a.Model != nil && *a.Model != "" {
		model = a.Model
	}
	available = state["acp_available_models"]
	if available == nil {
		available = []any{}
	}
	switchable, _ = state["acp_supports_runtime_model_switch"].(bool)
	return model, available, switchable
}
