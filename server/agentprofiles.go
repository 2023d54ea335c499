package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gohands/gohands/api/protocol"
	"github.com/gohands/gohands/server/userstore"
)

// Agent profiles (/api/agent-profiles) are the reference's named launch
// specifications: an agent kind with the LLM profile it uses (by name),
// its tools, condenser, verification policy, and the MCP servers and
// secrets it may see (by name). They hold no secret. They are stored in
// the reference's layout (agent-profiles/NAME.json, see
// userstore.AgentProfiles), and one of them is always active
// (active_agent_profile_id of the settings): with none, "default" is
// made from the current agent settings. Activation moves the pointer
// only. Materialize reports what launching a profile would build —
// dangling references, unusable tools, the resolved settings — without
// raising; starting a conversation from a profile (agent_profile_id, see
// agentprofile_launch.go) builds the same settings and raises instead.

const (
	maxAgentProfiles        = 50
	agentProfileSchema      = 4
	seedAgentProfile        = "default"
	agentProfilesTag        = "Agent Profiles"
	agentProfileInvalidText = "Invalid agent profile"
)

type agentProfileIDPath struct {
	ProfileID string `path:"profile_id" minLength:"1" maxLength:"128"`
}

type agentProfileInfo struct {
	ID            any    `json:"id"`
	Name          string `json:"name"`
	AgentKind     string `json:"agent_kind"`
	Revision      any    `json:"revision"`
	LLMProfileRef any    `json:"llm_profile_ref"`
	MCPServerRefs any    `json:"mcp_server_refs"`
}

type agentProfileList struct {
	Profiles             []agentProfileInfo `json:"profiles"`
	ActiveAgentProfileID *string            `json:"active_agent_profile_id"`
}

type agentProfileDetail struct {
	Name    string         `json:"name"`
	Profile map[string]any `json:"profile"`
}

type activateAgentProfileResponse struct {
	ID                   string `json:"id"`
	Message              string `json:"message"`
	AgentSettingsApplied bool   `json:"agent_settings_applied"`
}

// agentProfileBody is a profile sent to be saved: any of the members of
// the reference's AgentProfile union (agent_kind "openhands", the
// default, or "acp"); validateAgentProfile checks it.
type agentProfileBody struct {
	AgentKind     *string  `json:"agent_kind,omitempty" enum:"openhands,acp"`
	Name          *string  `json:"name,omitempty"`
	Revision      *int     `json:"revision,omitempty" minimum:"0"`
	MCPServerRefs []string `json:"mcp_server_refs,omitempty"`
	SecretRefs    []string `json:"secret_refs,omitempty"`
	LLMProfileRef *string  `json:"llm_profile_ref,omitempty" minLength:"1" description:"The LLM profile an openhands profile uses (required for agent_kind openhands)."`
	Agent         *string  `json:"agent,omitempty"`
	ACPServer     *string  `json:"acp_server,omitempty" enum:"claude-code,codex,gemini-cli,kimi-code,pi,opencode,custom"`
	ACPModel      *string  `json:"acp_model,omitempty"`

	raw map[string]any
}

func (b *agentProfileBody) decode(data []byte) error {
	m, err := decodeObject(data)
	if err != nil {
		return err
	}
	b.raw = m
	return nil
}

// decodeObject decodes a JSON object body, its numbers as written.
func decodeObject(data []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, jsonInvalid(err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &invalidError{loc: []any{"body"}, typ: "dict_type", msg: "Input should be a valid dictionary"}
	}
	return m, nil
}

type renameAgentProfileRequest struct {
	NewName string `json:"new_name" required:"true" minLength:"1" maxLength:"64" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"`
}

func (b *renameAgentProfileRequest) decode(data []byte) error {
	m, err := decodeObject(data)
	if err != nil {
		return err
	}
	v, present := m["new_name"]
	s, isStr := v.(string)
	switch {
	case !present:
		return &invalidError{loc: []any{"body", "new_name"}, typ: "missing", msg: "Field required"}
	case !isStr:
		return &invalidError{loc: []any{"body", "new_name"}, typ: "string_type", msg: "Input should be a valid string"}
	case !userstore.ProfileNamePattern.MatchString(s):
		return &invalidError{loc: []any{"body", "new_name"}, typ: "string_pattern_mismatch", msg: "String should match pattern '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$'"}
	}
	b.NewName = s
	return nil
}

// materializeRequest asks for the diagnostics of a draft profile instead
// of the stored one.
type materializeRequest struct {
	Profile *agentProfileBody `json:"profile,omitempty" description:"A draft profile to preview instead of the stored one; the path's name overrides its name."`

	draft map[string]any
}

func (b *materializeRequest) decode(data []byte) error {
	m, err := decodeObject(data)
	if err != nil {
		return err
	}
	for k := range m {
		if k != "profile" {
			return &invalidError{loc: []any{"body", k}, typ: "extra_forbidden", msg: "Extra inputs are not permitted"}
		}
	}
	switch p := m["profile"].(type) {
	case nil:
	case map[string]any:
		b.draft = p
	default:
		return &invalidError{loc: []any{"body", "profile"}, typ: "value_error", msg: "Value error, profile must be an object"}
	}
	return nil
}

func (s *Server) agentProfileRoutes() []*route {
	const p = "/api/agent-profiles/{name}"
	t := agentProfilesTag
	return []*route{
		{method: "GET", path: "/api/agent-profiles", summary: "The stored agent profiles and the active one (default is made from the settings when none is active)", tag: t, resp: agentProfileList{}, h: handle(s, nil, s.handleListAgentProfiles)},
		{method: "GET", path: p, summary: "An agent profile", tag: t, query: &profilePath{}, resp: agentProfileDetail{}, errors: []int{404, 422}, h: handle(s, nil, s.handleGetAgentProfile)},
		{method: "POST", path: p, summary: "Save an agent profile under the path's name (keeps the id of one it replaces; 409 beyond 50)", tag: t, query: &profilePath{}, body: agentProfileBody{}, resp: protocol.ProfileMutationResponse{}, status: http.StatusCreated, errors: []int{409, 422}, h: handle(s, nil, s.handleSaveAgentProfile)},
		{method: "DELETE", path: p, summary: "Delete an agent profile (idempotent; the active one's deletion activates default)", tag: t, query: &profilePath{}, resp: protocol.ProfileMutationResponse{}, errors: []int{422}, h: handle(s, nil, s.handleDeleteAgentProfile)},
		{method: "POST", path: p + "/rename", summary: "Rename an agent profile, keeping its id (404 when missing, 409 when the new name is taken)", tag: t, query: &profilePath{}, body: renameAgentProfileRequest{}, resp: protocol.ProfileMutationResponse{}, errors: []int{404, 409, 422}, h: handle(s, nil, s.handleRenameAgentProfile)},
		{method: "POST", path: "/api/agent-profiles/{profile_id}/activate", summary: "Make the profile of this id the active one (the pointer only)", tag: t, query: &agentProfileIDPath{}, resp: activateAgentProfileResponse{}, errors: []int{404, 422}, h: handle(s, nil, s.handleActivateAgentProfile)},
		{method: "POST", path: p + "/materialize", summary: "What launching the stored profile, or a draft, would build: its dangling references and resolved settings", tag: t, query: &profilePath{}, body: materializeRequest{}, resp: agentProfileDiagnostics{}, errors: []int{404, 422}, h: handle(s, bodyOptional, s.handleMaterializeAgentProfile)},
	}
}

func (s *Server) handleListAgentProfiles(*request[none, none]) (any, error) {
	if err := s.ensureActiveAgentProfile(); err != nil {
		return nil, err
	}
	list, err := s.agentProfiles.List()
	if err != nil {
		return nil, err
	}
	d, err := s.settings.Load()
	if err != nil {
		return nil, err
	}
	out := agentProfileList{Profiles: []agentProfileInfo{}, ActiveAgentProfileID: d.ActiveAgentProfileID}
	for _, p := range list {
		out.Profiles = append(out.Profiles, agentProfileInfo{ID: p.ID, Name: p.Name, AgentKind: p.AgentKind, Revision: p.Revision, LLMProfileRef: p.LLMProfileRef, MCPServerRefs: p.MCPServerRefs})
	}
	return out, nil
}

// loadAgentProfile reads a stored profile; a missing one is the
// reference's 404.
func (s *Server) loadAgentProfile(name string) (map[string]any, error) {
	m, err := s.agentProfiles.Load(name)
	if errors.Is(err, userstore.ErrNoProfile) {
		return nil, statusErr(http.StatusNotFound, "Agent profile '%s' not found", name)
	}
	return m, err
}

func (s *Server) handleGetAgentProfile(in *request[profilePath, none]) (any, error) {
	m, err := s.loadAgentProfile(in.query.Name)
	if err != nil {
		return nil, err
	}
	return agentProfileDetail{Name: in.query.Name, Profile: m}, nil
}

func (s *Server) handleSaveAgentProfile(in *request[profilePath, agentProfileBody]) (any, error) {
	name := in.query.Name
	raw := in.body.raw
	raw["name"] = name
	p, errs := validateAgentProfile(raw)
	if errs != nil {
		return errs, nil
	}
	s.agentProfilesMu.Lock()
	defer s.agentProfilesMu.Unlock()
	_, err := s.agentProfiles.Save(name, p, maxAgentProfiles)
	if errors.Is(err, userstore.ErrProfileLimit) {
		return nil, statusErr(http.StatusConflict, "Agent profile limit reached (%d). Delete a profile before saving a new one.", maxAgentProfiles)
	}
	if err != nil {
		return nil, err
	}
	return reply{http.StatusCreated, protocol.ProfileMutationResponse{Name: name, Message: fmt.Sprintf("Agent profile '%s' saved", name)}}, nil
}

func (s *Server) handleDeleteAgentProfile(in *request[profilePath, none]) (any, error) {
	name := in.query.Name
	s.agentProfilesMu.Lock()
	defer s.agentProfilesMu.Unlock()
	list, err := s.agentProfiles.List()
	if err != nil {
		return nil, err
	}
	var id *string
	for _, p := range list {
		if v, ok := p.ID.(string); ok && p.Name == userstore.CanonicalProfileName(name) {
			id = &v
		}
	}
	if err := s.agentProfiles.Delete(name); err != nil {
		return nil, err
	}
	if id != nil {
		d, err := s.settings.Load()
		if err != nil {
			return nil, err
		}
		if d.ActiveAgentProfileID != nil && *d.ActiveAgentProfileID == *id {
			// Settings of another kind do not outlive the profile they
			// came from; the MCP servers, which every profile draws on,
			// stay.
			if _, err := s.settings.Update(func(d *userstore.Doc) error {
				d.ActiveAgentProfileID = nil
				if kind, _ := d.AgentSettings["agent_kind"].(string); kind != "openhands" {
					fresh := userstore.DefaultAgentSettings("openhands")
					if mc, ok := d.AgentSettings["mcp_config"]; ok {
						fresh["mcp_config"] = mc
					}
					d.AgentSettings = fresh
				}
				return nil
			}); err != nil {
				return nil, err
			}
			if err := s.ensureActiveAgentProfileLocked(); err != nil {
				return nil, err
			}
		}
	}
	return protocol.ProfileMutationResponse{Name: name, Message: fmt.Sprintf("Agent profile '%s' deleted", name)}, nil
}

func (s *Server) handleRenameAgentProfile(in *request[profilePath, renameAgentProfileRequest]) (any, error) {
	from, to := in.query.Name, in.body.NewName
	err := s.agentProfiles.Rename(from, to)
	switch {
	case errors.Is(err, userstore.ErrNoProfile):
		return nil, statusErr(http.StatusNotFound, "Agent profile '%s' not found", from)
	case errors.Is(err, userstore.ErrProfileExists):
		return nil, statusErr(http.StatusConflict, "Agent profile '%s' already exists", to)
	case err != nil:
		return nil, err
	}
	msg := fmt.Sprintf("Agent profile '%s' renamed to '%s'", from, to)
	if from == to {
		msg = fmt.Sprintf("Agent profile '%s' unchanged (same name)", from)
	}
	return protocol.ProfileMutationResponse{Name: to, Message: msg}, nil
}

func (s *Server) handleActivateAgentProfile(in *request[agentProfileIDPath, none]) (any, error) {
	id := in.query.ProfileID
	name, err := s.agentProfiles.NameForID(id)
	if err != nil {
		return nil, err
	}
	if name == "" {
		return nil, statusErr(http.StatusNotFound, "Agent profile with id '%s' not found", id)
	}
	if _, err := s.settings.Update(func(d *userstore.Doc) error {
		d.ActiveAgentProfileID = &id
		return nil
	}); err != nil {
		s.log.Error("activating an agent profile", "err", err)
		return nil, statusErr(http.StatusInternalServerError, "Failed to activate agent profile")
	}
	return activateAgentProfileResponse{ID: id, Message: fmt.Sprintf("Agent profile '%s' activated", id)}, nil
}

func (s *Server) handleMaterializeAgentProfile(in *request[profilePath, materializeRequest]) (any, error) {
	name := in.query.Name
	var p map[string]any
	if in.body.draft != nil {
		draft := in.body.draft
		draft["name"] = name
		var errs any
		if p, errs = validateAgentProfile(draft); errs != nil {
			return errs, nil
		}
	} else {
		stored, err := s.loadAgentProfile(name)
		if err != nil {
			return nil, err
		}
		if p, _ = validateAgentProfile(stored); p == nil {
			// A stored file that no longer validates reports as the
			// reference's failed build.
			return agentProfileDiagnostics{AgentKind: fmt.Sprint(stored["agent_kind"]), Errors: []string{"Failed to build agent settings: " + agentProfileInvalidText}}.filled(), nil
		}
	}
	return s.materialize(p)
}

// ensureActiveAgentProfile keeps active_agent_profile_id on a stored
// profile: a missing or dangling pointer moves to "default", made from
// the current agent settings when absent; when that cannot be (the store
// is full, or default is unreadable) to the first other profile.
func (s *Server) ensureActiveAgentProfile() error {
	s.agentProfilesMu.Lock()
	defer s.agentProfilesMu.Unlock()
	return s.ensureActiveAgentProfileLocked()
}

func (s *Server) ensureActiveAgentProfileLocked() error {
	d, err := s.settings.Load()
	if err != nil {
		return err
	}
	if d.ActiveAgentProfileID != nil {
		name, err := s.agentProfiles.NameForID(*d.ActiveAgentProfileID)
		if err != nil || name != "" {
			return err
		}
	}
	id, err := s.agentProfileToActivate(d)
	if err != nil || id == "" {
		return err
	}
	_, err = s.settings.Update(func(d *userstore.Doc) error {
		d.ActiveAgentProfileID = &id
		return nil
	})
	return err
}

func (s *Server) agentProfileToActivate(d *userstore.Doc) (string, error) {
	m, err := s.agentProfiles.Load(seedAgentProfile)
	switch {
	case err == nil:
		if id, ok := m["id"].(string); ok {
			return id, nil
		}
	case errors.Is(err, userstore.ErrNoProfile):
		seed := s.seedAgentProfile(d)
		saved, err := s.agentProfiles.Save(seedAgentProfile, seed, maxAgentProfiles)
		if err == nil {
			s.log.Info("seeded the default agent profile", "id", saved["id"])
			return saved["id"].(string), nil
		}
		if !errors.Is(err, userstore.ErrProfileLimit) {
			return "", err
		}
	default:
		s.log.Warn("the default agent profile is unreadable; left as it is", "err", err)
	}
	list, err := s.agentProfiles.List()
	if err != nil {
		return "", err
	}
	for _, p := range list {
		if id, ok := p.ID.(string); ok && id != "" && p.Name != seedAgentProfile {
			return id, nil
		}
	}
	return "", nil
}

// seedAgentProfile builds the default profile from the agent settings.
// An openhands profile names the active LLM profile, else "default",
// which is made from the settings' LLM when that is a real configuration
// (a key or an address), never from bare defaults.
func (s *Server) seedAgentProfile(d *userstore.Doc) map[string]any {
	a := d.AgentSettings
	str := func(m map[string]any, k string) any {
		if v, ok := m[k].(string); ok {
			return v
		}
		return nil
	}
	if kind, _ := a["agent_kind"].(string); kind == "acp" {
		p := map[string]any{
			"name": seedAgentProfile, "agent_kind": "acp", "acp_server": str(a, "acp_server"), "acp_model": str(a, "acp_model"),
			"acp_session_mode": str(a, "acp_session_mode"), "acp_prompt_timeout": a["acp_prompt_timeout"],
			"acp_startup_timeout": a["acp_startup_timeout"], "acp_command": nil, "acp_args": nil,
		}
		if cmd, ok := a["acp_command"].([]any); ok && len(cmd) > 0 {
			p["acp_command"] = shellJoin(cmd)
		}
		if args, ok := a["acp_args"].([]any); ok && len(args) > 0 {
			p["acp_args"] = args
		}
		v, _ := validateAgentProfile(p)
		if v == nil {
			v, _ = validateAgentProfile(map[string]any{"name": seedAgentProfile, "agent_kind": "acp"})
		}
		return v
	}
	ref := seedAgentProfile
	if d.ActiveProfile != nil && *d.ActiveProfile != "" {
		ref = *d.ActiveProfile
	} else if lc, ok := a["llm"].(map[string]any); ok {
		s.seedDefaultLLMProfile(lc)
	}
	ctx, _ := a["agent_context"].(map[string]any)
	p := map[string]any{
		"name":                                seedAgentProfile,
		"llm_profile_ref":                     ref,
		"agent":                               str(a, "agent"),
		"tools":                               a["tools"],
		"persona":                             a["persona"],
		"condenser":                           a["condenser"],
		"verification":                        a["verification"],
		"enable_classify_and_switch_llm_tool": a["enable_classify_and_switch_llm_tool"],
		"meta_profile_ref":                    a["active_meta_profile"],
		"tool_concurrency_limit":              a["tool_concurrency_limit"],
	}
	if ctx != nil {
		p["disabled_skills"] = ctx["disabled_skills"]
		p["system_message_suffix"] = ctx["system_message_suffix"]
	}
	for k, v := range p {
		if v == nil {
			delete(p, k)
		}
	}
	if v, ok := p["verification"].(map[string]any); ok {
		v = userstore.Clone(v)
		delete(v, "critic_api_key") // a profile holds no secret
		p["verification"] = v
	}
	v, _ := validateAgentProfile(p)
	if v == nil {
		v, _ = validateAgentProfile(map[string]any{"name": seedAgentProfile, "llm_profile_ref": ref})
	}
	return v
}

// seedDefaultLLMProfile saves the settings' LLM as LLM profile
// "default" unless one is stored under that name or the LLM is only the
// defaults (no key, no address): a keyless profile would be a ghost.
func (s *Server) seedDefaultLLMProfile(lc map[string]any) {
	if _, err := s.profiles.Load(seedAgentProfile); !errors.Is(err, userstore.ErrNoProfile) {
		return
	}
	key, _ := lc["api_key"].(string)
	base, _ := lc["base_url"].(string)
	if (strings.TrimSpace(key) == "" || key == userstore.Redacted) && strings.TrimSpace(base) == "" {
		return
	}
	if err := s.profiles.Save(seedAgentProfile, lc, true, maxProfiles); err != nil {
		s.log.Warn("could not save the settings' LLM as profile default", "err", err)
	}
}

// shellJoin joins a command's words as a POSIX shell reads them back.
func shellJoin(words []any) string {
	out := make([]string, len(words))
	for i, w := range words {
		s := fmt.Sprint(w)
		if s != "" && strings.IndexFunc(s, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./-_", r))
		}) < 0 {
			out[i] = s
			continue
		}
		out[i] = "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
	}
	return strings.Join(out, " ")
}
