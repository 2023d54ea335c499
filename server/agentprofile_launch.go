package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/gohands/gohands/agent/acp"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/server/userstore"
	"github.com/gohands/gohands/skill"
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
//
// An ACP profile (agent_kind acp) launches an ACPAgent, as the
// reference's ACPAgentSettings.create_agent builds it: acp_server,
// acp_model, acp_session_mode, the timeouts and acp_args as the profile
// has them, acp_command split as a shell splits it, the MCP servers it
// names, the placeholder LLM named after acp_model, and an agent_context
// without a timestamp or project skills (the ACP server reads the
// workspace itself). A profile stores no credential: the provider's
// variables are request secrets (those secret_refs allow), which reach
// the server's environment as for any ACPAgent. The server is started by
// the first run, not by the start. Unlike the reference, which runs its
// pinned npx package for each acp_server, gohands has no default launch
// command, so a profile without acp_command is 422 invalid_agent_launch
// (the reference answers so only for acp_server custom), and its
// materialize is not valid.

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

// profileLaunch resolves agent_profile_id, on add's LLM profile (nil:
// its own), into the agent it launches and the provenance to store;
// startAgent adds the rest of add to the agent.
func (s *Server) profileLaunch(rawID string, add *launchAdditions) (conversation.Agent, *launchedProfile, error) {
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
	if add == nil {
		add = &launchAdditions{}
	}
	if add.LLMProfileRef != "" {
		if p["agent_kind"] == "acp" {
			return nil, nil, &launchError{map[string]any{"code": "invalid_agent_launch", "message": "agent_launch_additions.llm_profile_ref applies only to an OpenHands Agent Profile"}}
		}
		p = maps.Clone(p)
		p["llm_profile_ref"] = add.LLMProfileRef
	}
	diag, err := s.resolveAgentProfile(p, true)
	if err != nil {
		return nil, nil, err
	}
	if !diag.Valid {
		return nil, nil, diagLaunchError(diag)
	}
	launched := &launchedProfile{AgentProfileID: id, Revision: p["revision"], SecretRefs: strs(p["secret_refs"])}
	if add.LLMProfileRef != "" {
		launched.LLMProfileRef = &add.LLMProfileRef
	}
	settings := diag.ResolvedSettings
	if p["agent_kind"] == "acp" {
		a, err := acpProfileAgent(settings)
		if err != nil {
			return nil, nil, err
		}
		return a, launched, nil
	}
	if l, ok := settings["llm"].(map[string]any); ok {
		// As the reference: a profile cannot say, so the launch streams.
		l["stream"] = true
	}
	raw, err := json.Marshal(settings)
	if err != nil {
		return nil, nil, err
	}
	a, err := agentFromSettings(raw)
	if err != nil {
		return nil, nil, err
	}
	if err := checkAgent(a, "agent_settings"); err != nil {
		return nil, nil, err
	}
	return a, launched, nil
}

// acpCommandProblem is why the resolved settings of an ACP profile
// cannot launch for want of a command, or "": the reference falls back
// to a pinned npx package for every acp_server but custom, gohands to
// none.
func acpCommandProblem(st map[string]any) string {
	if cmd, _ := st["acp_command"].([]any); len(cmd) > 0 {
		return ""
	}
	if srv := st["acp_server"]; srv != "custom" {
		return fmt.Sprintf("acp_command is required: gohands has no default launch command for acp_server='%v' (set the command that starts its ACP server)", srv)
	}
	return "acp_command is required when acp_server='custom' — there is no default launch command to fall back to"
}

// acpProfileAgent is the ACPAgent the resolved settings of an ACP
// profile launch: its JSON, decoded as a client's ACPAgent is.
func acpProfileAgent(st map[string]any) (conversation.Agent, error) {
	model := acp.SentinelUsageID
	if m, _ := st["acp_model"].(string); m != "" {
		model = m
	}
	a := map[string]any{"kind": acp.Kind, "llm": map[string]any{"model": model, "usage_id": acp.SentinelUsageID}}
	for _, k := range []string{"acp_command", "acp_server", "acp_args", "acp_model", "acp_session_mode", "acp_prompt_timeout",
		"acp_startup_timeout", "acp_isolate_data_dir", "acp_file_secrets", "mcp_config", "agent_context"} {
		a[k] = st[k]
	}
	raw, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	return decodeAgent(&startRequest{Agent: raw})
}

// acpCustomNoCommand is 1.58.2's answer to ACP settings of acp_server
// custom without acp_command.
const acpCustomNoCommand = "ACPAgentSettings.acp_command must be set when acp_server='custom' — there is no default to fall back to"

// acpSettingsAgent is the ACPAgent a start request's agent_settings of
// agent_kind acp describe, as 1.58.2's ACPAgentSettings.create_agent
// builds it: what they leave out has the settings' defaults (acp_server
// claude-code, the timeouts, every provider's file-secret specs, no
// agent_context, so no timestamp; one given is written in full), and the
// agent is built as an ACP profile's launch builds it. The settings' llm
// is refused, as in the reference (acp_model names the model); unknown
// keys are ignored. Without acp_command the start is 422
// invalid_agent_launch, as for a profile.
func acpSettingsAgent(raw json.RawMessage) (conversation.Agent, error) {
	loc := func(path ...any) []any { return append([]any{"body", "agent_settings"}, path...) }
	var in struct {
		Server         *string                    `json:"acp_server"`
		Command        []string                   `json:"acp_command"`
		Args           []string                   `json:"acp_args"`
		Model          *string                    `json:"acp_model"`
		SessionMode    *string                    `json:"acp_session_mode"`
		PromptTimeout  *float64                   `json:"acp_prompt_timeout"`
		StartupTimeout *float64                   `json:"acp_startup_timeout"`
		IsolateDataDir bool                       `json:"acp_isolate_data_dir"`
		FileSecrets    []json.RawMessage          `json:"acp_file_secrets"`
		MCPConfig      map[string]json.RawMessage `json:"mcp_config"`
		AgentContext   json.RawMessage            `json:"agent_context"`
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return nil, &invalidError{loc: loc(), typ: "model_type", msg: "Input should be an agent settings object: " + err.Error()}
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, invalid(err.Error(), loc(strings.Split(te.Field, ".")[0])...)
		}
		return nil, invalid(err.Error(), loc()...)
	}
	var removed []string
	for _, k := range []string{"enable_sub_agents", "enable_switch_llm_tool", "llm"} {
		if _, ok := keys[k]; ok && (k == "llm" || keys["schema_version"] == nil) {
			removed = append(removed, k)
		}
	}
	if len(removed) > 0 {
		return nil, invalid("Removed agent settings: "+strings.Join(removed, ", "), loc()...)
	}
	server := "claude-code"
	if in.Server != nil {
		server = *in.Server
	}
	if !slices.Contains(acpServers, server) {
		return nil, &invalidError{loc: loc("acp_server"), typ: "literal_error", msg: "Input should be 'claude-code', 'codex', 'gemini-cli', 'kimi-code', 'pi', 'opencode' or 'custom'"}
	}
	timeout := func(v *float64, def float64, name string) (float64, error) {
		if v == nil {
			return def, nil
		}
		if *v <= 0 {
			return 0, &invalidError{loc: loc(name), typ: "greater_than", msg: "Input should be greater than 0"}
		}
		return *v, nil
	}
	prompt, err := timeout(in.PromptTimeout, acp.DefaultPromptTimeout, "acp_prompt_timeout")
	if err != nil {
		return nil, err
	}
	startup, err := timeout(in.StartupTimeout, acp.DefaultStartupTimeout, "acp_startup_timeout")
	if err != nil {
		return nil, err
	}
	st := map[string]any{
		"acp_server": server, "acp_args": orEmptySlice(in.Args), "acp_session_mode": in.SessionMode,
		"acp_prompt_timeout": prompt, "acp_startup_timeout": startup, "acp_isolate_data_dir": in.IsolateDataDir,
		"acp_file_secrets": in.FileSecrets, "mcp_config": in.MCPConfig, "agent_context": in.AgentContext,
	}
	if in.Model != nil {
		st["acp_model"] = *in.Model
	}
	var cmd []any
	for _, w := range in.Command {
		cmd = append(cmd, w)
	}
	st["acp_command"] = cmd
	if msg := acpCommandProblem(st); msg != "" {
		if server == "custom" {
			msg = acpCustomNoCommand
		}
		return nil, &launchError{map[string]any{"code": "invalid_agent_launch", "message": msg}}
	}
	if in.FileSecrets == nil {
		st["acp_file_secrets"] = acp.DefaultFileSecrets()
	}
	if in.MCPConfig == nil {
		st["mcp_config"] = map[string]any{}
	}
	if isNull(in.AgentContext) {
		st["agent_context"] = nil
	} else {
		// In the reference's form, every field written.
		var ac skill.AgentContext
		if err := json.Unmarshal(in.AgentContext, &ac); err != nil {
			return nil, invalid(err.Error(), loc("agent_context")...)
		}
		b, err := json.Marshal(ac)
		if err != nil {
			return nil, err
		}
		st["agent_context"] = json.RawMessage(b)
	}
	return acpProfileAgent(st)
}

// diagLaunchError is the launch failure materialize's diagnostics describe:
// the dangling references together when there are any.
func diagLaunchError(d agentProfileDiagnostics) error {
	var dangLLM *string
	if d.LLMProfileRef != nil && !d.LLMProfileResolved && hasPrefixIn(d.Errors, "LLM profile '") {
		dangLLM = d.LLMProfileRef
	}
	if dangLLM == nil && len(d.DanglingMCPServerRefs) == 0 && d.DanglingMetaProfileRef == nil && len(d.DanglingMetaProfileLLMRefs) == 0 {
		msg := strings.Join(d.Errors, "; ")
		if d.buildProblem != "" {
			msg = d.buildProblem // as the reference's launch says it, without materialize's preface
		}
		return &launchError{map[string]any{"code": "invalid_agent_launch", "message": msg}}
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
