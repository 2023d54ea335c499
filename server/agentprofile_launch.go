package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/gohands/gohands/server/userstore"
)

// A start request's agent_profile_id launches a stored agent profile, as
// the reference 1.58's launch does: the profile with that id (404 when
// none) is resolved as materialize resolves it — its LLM profile, the MCP
// servers it names, its tools, condenser, verification — and the agent
// is built from those settings as from agent_settings. A reference that
// names nothing fails the start with 422 and every dangling reference
// listed (code unresolved_profile_references); another reason it cannot
// launch is 422 invalid_agent_launch. The conversation records which
// profile launched it (launched_agent_profile: id, revision, secret
// allow-list), and only the request secrets the profile's secret_refs
// allow are kept.

// launchError is the reference's AgentLaunchError answer: 422 with an
// object detail.
type launchError struct {
	detail map[string]any
}

func (e *launchError) Error() string { return e.detail["message"].(string) }

// launchedProfile is what a start from an agent profile stores.
type launchedProfile struct {
	AgentProfileID string   `json:"agent_profile_id"`
	Revision       any      `json:"revision"`
	SecretRefs     []string `json:"secret_refs"`
	LLMProfileRef  *string  `json:"llm_profile_ref"`
}

// profileLaunch resolves agent_profile_id into the agent settings it
// launches with and the provenance to store.
func (s *Server) profileLaunch(rawID string) (json.RawMessage, *launchedProfile, error) {
	u, err := uuid.Parse(rawID)
	if err != nil {
		return nil, nil, &invalidError{loc: []any{"body", "agent_profile_id"}, typ: "uuid_parsing", msg: "Input should be a valid UUID"}
	}
	id := u.String()
	notFound := statusErr(http.StatusNotFound, "Agent profile with id '%s' not found", id)
	name, err := s.agentProfiles.NameForID(id)
	if err != nil {
		return nil, nil, statusErr(http.StatusInternalServerError, "Could not load agent profile: %v", err)
	}
	if name == "" {
		return nil, nil, notFound
	}
	stored, err := s.agentProfiles.Load(name)
	if errors.Is(err, userstore.ErrNoProfile) {
		return nil, nil, notFound
	}
	if err != nil {
		return nil, nil, statusErr(http.StatusInternalServerError, "Could not load agent profile: %v", err)
	}
	p, _ := validateAgentProfile(stored)
	if p == nil {
		return nil, nil, statusErr(http.StatusInternalServerError, "Could not load agent profile: %s", agentProfileInvalidText)
	}
	if p["agent_kind"] == "acp" {
		return nil, nil, &launchError{map[string]any{"code": "invalid_agent_launch", "message": "ACP agent profiles cannot be launched by this server; send the ACPAgent as agent"}}
	}
	diag, err := s.resolveAgentProfile(p, true)
	if err != nil {
		return nil, nil, err
	}
	if !diag.Valid {
		return nil, nil, diagLaunchError(diag)
	}
	settings := diag.ResolvedSettings
	if l, ok := settings["llm"].(map[string]any); ok {
		// As the reference: a profile cannot say, so the launch streams.
		l["stream"] = true
	}
	raw, err := json.Marshal(settings)
	if err != nil {
		return nil, nil, err
	}
	return raw, &launchedProfile{AgentProfileID: id, Revision: p["revision"], SecretRefs: strs(p["secret_refs"])}, nil
}

// diagLaunchError is the launch failure materialize's diagnostics describe:
// the dangling references together when there are any.
func diagLaunchError(d agentProfileDiagnostics) error {
	var dangLLM *string
	if d.LLMProfileRef != nil && !d.LLMProfileResolved && hasPrefixIn(d.Errors, "LLM profile '") {
		dangLLM = d.LLMProfileRef
	}
	if dangLLM == nil && len(d.DanglingMCPServerRefs) == 0 && d.DanglingMetaProfileRef == nil && len(d.DanglingMetaProfileLLMRefs) == 0 {
		return &launchError{map[string]any{"code": "invalid_agent_launch", "message": strings.Join(d.Errors, "; ")}}
	}
	var problems []string
	if dangLLM != nil {
		problems = append(problems, "LLM profile '"+*dangLLM+"' not found")
	}
	if len(d.DanglingMCPServerRefs) > 0 {
		problems = append(problems, "MCP server(s) not configured: "+strings.Join(d.DanglingMCPServerRefs, ", "))
	}
	if d.DanglingMetaProfileRef != nil {
		problems = append(problems, "Meta-profile '"+*d.DanglingMetaProfileRef+"' not found")
	}
	if len(d.DanglingMetaProfileLLMRefs) > 0 {
		problems = append(problems, "LLM profile(s) routed to by the meta-profile not found: "+strings.Join(d.DanglingMetaProfileLLMRefs, ", "))
	}
	return &launchError{map[string]any{
		"code":                           "unresolved_profile_references",
		"message":                        strings.Join(problems, "; "),
		"dangling_llm_profile_ref":       dangLLM,
		"dangling_mcp_server_refs":       orEmptySlice(d.DanglingMCPServerRefs),
		"dangling_meta_profile_ref":      d.DanglingMetaProfileRef,
		"dangling_meta_profile_llm_refs": orEmptySlice(d.DanglingMetaProfileLLMRefs),
	}}
}

func hasPrefixIn(l []string, prefix string) bool {
	for _, s := range l {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}
