package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/server/userstore"
)

// The user's settings, kept by the server for the app (the reference's
// /api/settings): the agent new conversations get, the conversations'
// own settings and misc_settings, which belongs to the app. Secrets in
// them are sealed at rest with the server's secret key and leave the
// server only as X-Expose-Secrets asks: redacted by default, as Fernet
// tokens of the key ("encrypted"), or in clear ("plaintext", for a
// backend that holds the session key).

// settingsRoutes are the routes of the settings, secrets and saved
// workspaces.
func (s *Server) settingsRoutes() []*route {
	const (
		tSet = "Settings"
		tWs  = "Workspaces"
		mcp  = "/api/settings/mcp/{settings_key}"
	)
	return []*route{
		{method: "GET", path: "/api/settings/agent-schema", summary: "The schema of the agent settings forms", tag: tSet, resp: settingsSchema{}, h: s.handleAgentSchema},
		{method: "GET", path: "/api/settings/conversation-schema", summary: "The schema of the conversation settings forms", tag: tSet, resp: settingsSchema{}, h: s.handleConversationSchema},
		{method: "GET", path: "/api/settings", summary: "The user's settings (secrets redacted unless X-Expose-Secrets is encrypted or plaintext)", tag: tSet, resp: settingsResponse{}, errors: []int{400, 503}, h: s.handleGetSettings},
		{method: "PATCH", path: "/api/settings", summary: "Change the settings: the diffs are merged, a null inside a map removes its entry", tag: tSet, body: settingsUpdate{}, resp: settingsResponse{}, errors: []int{400, 404, 409, 422}, h: s.handleUpdateSettings},
		{method: "POST", path: mcp, summary: "Add one MCP server (409 if the name is taken)", tag: tSet, query: &mcpKeyPath{}, body: map[string]any{}, resp: settingsResponse{}, status: 201, errors: []int{409, 422}, h: s.handleMCPCreate},
		{method: "PATCH", path: mcp, summary: "Change one MCP server", tag: tSet, query: &mcpKeyPath{}, body: map[string]any{}, resp: settingsResponse{}, errors: []int{404, 422}, h: s.handleMCPPatch},
		{method: "DELETE", path: mcp, summary: "Remove one MCP server", tag: tSet, query: &mcpKeyPath{}, resp: settingsResponse{}, errors: []int{404}, h: s.handleMCPDelete},
		{method: "GET", path: "/api/settings/secrets", summary: "The stored secrets' names and descriptions (never their values)", tag: tSet, query: &secretsQuery{}, resp: secretsList{}, errors: []int{404}, h: s.handleListSecrets},
		{method: "PUT", path: "/api/settings/secrets", summary: "Add or replace a secret", tag: tSet, body: secretCreate{}, resp: userstore.SecretItem{}, errors: []int{422, 500}, h: s.handlePutSecret},
		{method: "GET", path: "/api/settings/secrets/{name}", summary: "A secret's value, as text/plain (for lookups by a trusted client)", tag: tSet, query: &secretNamePath{}, resp: plainText(""), errors: []int{404, 422}, h: s.handleGetSecret},
		{method: "DELETE", path: "/api/settings/secrets/{name}", summary: "Delete a secret", tag: tSet, query: &secretNamePath{}, resp: deletedResponse{}, errors: []int{404, 422, 500}, h: s.handleDeleteSecret},
		{method: "GET", path: "/api/workspaces", summary: "The saved workspaces and workspace parents", tag: tWs, resp: workspacesResponse{}, errors: []int{409}, h: s.handleListWorkspaces},
		{method: "POST", path: "/api/workspaces", summary: "Save workspaces (a path already saved is skipped)", tag: tWs, body: addWorkspacesRequest{}, resp: workspacesResponse{}, errors: []int{409, 422}, h: s.handleAddWorkspaces},
		{method: "DELETE", path: "/api/workspaces", summary: "Forget the workspace at path", tag: tWs, query: &workspacePathQuery{}, resp: deletedResponse{}, errors: []int{404, 409, 422}, h: s.handleDeleteWorkspace},
		{method: "POST", path: "/api/workspaces/parents", summary: "Save workspace parents (a path already saved is skipped)", tag: tWs, body: addParentsRequest{}, resp: workspacesResponse{}, errors: []int{409, 422}, h: s.handleAddParents},
		{method: "DELETE", path: "/api/workspaces/parents", summary: "Forget the workspace parent at path", tag: tWs, query: &workspacePathQuery{}, resp: deletedResponse{}, errors: []int{404, 409, 422}, h: s.handleDeleteParent},
	}
}

type mcpKeyPath struct {
	SettingsKey string `path:"settings_key"`
}

type secretNamePath struct {
	Name string `path:"name"`
}

type secretsQuery struct {
	AgentProfileID *string `query:"agent_profile_id"`
}

type workspacePathQuery struct {
	Path string `query:"path" required:"true" description:"Absolute path to remove"`
}

// settingsResponse is the reference's SettingsResponse.
type settingsResponse struct {
	AgentSettings        map[string]any `json:"agent_settings"`
	ConversationSettings map[string]any `json:"conversation_settings"`
	LLMAPIKeyIsSet       bool           `json:"llm_api_key_is_set"`
	ActiveProfile        *string        `json:"active_profile"`
	ActiveAgentProfileID *string        `json:"active_agent_profile_id"`
	ActiveMetaProfile    *string        `json:"active_meta_profile"`
	MiscSettings         map[string]any `json:"misc_settings"`
}

// settingsUpdate documents PATCH /api/settings' body; it is read as raw
// members so that an explicit null is told from an absent key.
type settingsUpdate struct {
	AgentSettingsDiff        map[string]any `json:"agent_settings_diff,omitempty"`
	ConversationSettingsDiff map[string]any `json:"conversation_settings_diff,omitempty"`
	MiscSettingsDiff         map[string]any `json:"misc_settings_diff,omitempty"`
	ActiveProfile            *string        `json:"active_profile,omitempty" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"`
	ActiveAgentProfileID     *string        `json:"active_agent_profile_id,omitempty" format:"uuid"`
	ActiveMetaProfile        *string        `json:"active_meta_profile,omitempty" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"`
}

type secretCreate struct {
	Name        string  `json:"name" required:"true"`
	Value       *string `json:"value" required:"true" format:"password"`
	Description *string `json:"description"`
}

type secretsList struct {
	Secrets []userstore.SecretItem `json:"secrets"`
}

type deletedResponse struct {
	Deleted bool `json:"deleted"`
}

type workspacesResponse struct {
	Workspaces []userstore.Workspace       `json:"workspaces"`
	Parents    []userstore.WorkspaceParent `json:"workspaceParents"`
}

type addWorkspacesRequest struct {
	Workspaces []userstore.Workspace `json:"workspaces" required:"true"`
}

type addParentsRequest struct {
	Parents []userstore.WorkspaceParent `json:"parents" required:"true"`
}

// The answers the reference gives for a store it cannot read.
const (
	detailSettingsUnreadable = "Settings file is corrupted or encrypted with a different key: restore that key as OH_SECRET_KEY or add it to OH_PREVIOUS_SECRET_KEYS"
	detailSecretsUnreadable  = "Secrets file is corrupted or encrypted with a different key: restore that key as OH_SECRET_KEY or add it to OH_PREVIOUS_SECRET_KEYS"
	detailInvalidSecretName  = "Invalid secret name format. Must start with a letter, contain only letters, numbers, and underscores, and be 1-64 characters long."
	detailSettingsInvalid    = "Settings validation failed"
)

// exposeMode reads X-Expose-Secrets: "" (redacted), "encrypted" or
// "plaintext"; "true" is the old spelling of encrypted.
func exposeMode(r *http.Request) (string, error) {
	switch v := strings.ToLower(strings.TrimSpace(r.Header.Get("X-Expose-Secrets"))); v {
	case "":
		return "", nil
	case "true", "encrypted":
		return "encrypted", nil
	case "plaintext":
		return v, nil
	default:
		return "", statusErr(http.StatusBadRequest, "Invalid X-Expose-Secrets header value: '%s'. Valid values are: 'encrypted', 'plaintext'.", v)
	}
}

func (s *Server) settingsAnswer(d *userstore.Doc, mode string) (*settingsResponse, error) {
	agent := userstore.Redact(d.AgentSettings)
	switch mode {
	case "plaintext":
		agent = d.AgentSettings
		s.log.Warn("settings read with secrets in plaintext")
	case "encrypted":
		if s.cipher == nil && userstore.HasSecret(d.AgentSettings) {
			return nil, statusErr(http.StatusServiceUnavailable, "Encryption not available: OH_SECRET_KEY is not configured. Cannot return encrypted secrets.")
		}
		var err error
		agent, err = userstore.MapSecrets(d.AgentSettings, func(_ []string, v string) (any, error) { return s.cipher.EncryptString(v) })
		if err != nil {
			return nil, err
		}
	}
	return &settingsResponse{
		AgentSettings:        agent,
		ConversationSettings: d.ConversationSettings,
		LLMAPIKeyIsSet:       d.LLMAPIKeyIsSet(),
		ActiveProfile:        d.ActiveProfile,
		ActiveAgentProfileID: d.ActiveAgentProfileID,
		ActiveMetaProfile:    d.ActiveMetaProfile,
		MiscSettings:         d.MiscSettings,
	}, nil
}

func (s *Server) handleGetSettings(w http.ResponseWriter, r *http.Request) {
	mode, err := exposeMode(r)
	if err != nil {
		writeErr(w, err)
		return
	}
	d, err := s.settings.Load()
	if err != nil {
		writeErr(w, err)
		return
	}
	resp, err := s.settingsAnswer(d, mode)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

var profileNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// settingsPatch is a parsed PATCH /api/settings body.
type settingsPatch struct {
	agent, conv, misc map[string]any
	pointers          map[string]*string // present keys of the active_* pointers
}

func parseSettingsPatch(body []byte) (*settingsPatch, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		if _, isObj := err.(*json.UnmarshalTypeError); isObj {
			return nil, &invalidError{loc: []any{"body"}, typ: "model_attributes_type", msg: "Input should be a valid dictionary or object to extract fields from"}
		}
		return nil, jsonInvalid(err)
	}
	p := &settingsPatch{pointers: map[string]*string{}}
	for key, dst := range map[string]*map[string]any{"agent_settings_diff": &p.agent, "conversation_settings_diff": &p.conv, "misc_settings_diff": &p.misc} {
		v, ok := raw[key]
		if !ok || isNull(v) {
			continue
		}
		d := json.NewDecoder(bytes.NewReader(v))
		d.UseNumber()
		if err := d.Decode(dst); err != nil || *dst == nil {
			return nil, &invalidError{loc: []any{"body", key}, typ: "dict_type", msg: "Input should be a valid dictionary"}
		}
	}
	for _, key := range []string{"active_profile", "active_agent_profile_id", "active_meta_profile"} {
		v, ok := raw[key]
		if !ok {
			continue
		}
		var sp *string
		if err := json.Unmarshal(v, &sp); err != nil {
			return nil, &invalidError{loc: []any{"body", key}, typ: "string_type", msg: "Input should be a valid string"}
		}
		if sp != nil {
			valid := profileNamePattern.MatchString(*sp)
			if key == "active_agent_profile_id" {
				_, err := parseUUID(*sp)
				valid = err == nil && len(*sp) == 36
			}
			if !valid {
				return nil, &invalidError{loc: []any{"body", key}, typ: "string_pattern_mismatch", msg: "String should match pattern"}
			}
		}
		p.pointers[key] = sp
	}
	return p, nil
}

func (s *Server) handleUpdateSettings(w http.ResponseWriter, r *http.Request) {
	var body json.RawMessage
	if err := s.readBody(w, r, &body, false); err != nil {
		writeErr(w, err)
		return
	}
	p, err := parseSettingsPatch(body)
	if err != nil {
		writeErr(w, err)
		return
	}
	if p.agent == nil && p.conv == nil && p.misc == nil && len(p.pointers) == 0 {
		writeDetail(w, http.StatusBadRequest, "At least one of agent_settings_diff, conversation_settings_diff, misc_settings_diff, active_profile, active_agent_profile_id, or active_meta_profile must be provided")
		return
	}
	if id := p.pointers["active_agent_profile_id"]; id != nil {
		writeDetail(w, http.StatusNotFound, fmt.Sprintf("Agent profile with id '%s' not found", *id))
		return
	}
	if name := p.pointers["active_meta_profile"]; name != nil {
		writeDetail(w, http.StatusNotFound, fmt.Sprintf("Meta-profile '%s' not found", *name))
		return
	}
	// Activating an LLM profile loads its model into the agent settings,
	// unless the diff names the model itself.
	if name := p.pointers["active_profile"]; name != nil {
		if _, hasLLM := p.agent["llm"]; !hasLLM {
			cfg, err := s.llmProfiles().Profile(*name)
			if err != nil {
				writeDetail(w, http.StatusNotFound, fmt.Sprintf("Profile '%s' not found", *name))
				return
			}
			lc, err := exposedConfig(cfg)
			if err != nil {
				writeInternal(w, err)
				return
			}
			if p.agent == nil {
				p.agent = map[string]any{}
			}
			p.agent["llm"] = lc
		}
	}
	s.updateSettings(w, func(d *userstore.Doc) error { return s.applySettingsPatch(d, p) }, http.StatusOK)
}

// exposedConfig is cfg as a JSON tree with its secrets in clear.
func exposedConfig(cfg llm.Config) (map[string]any, error) {
	exposed, err := cfg.MapSecrets(func(v secret.String) (secret.String, error) { return v.Expose(), nil })
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(exposed)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return m, d.Decode(&m)
}

// updateSettings runs fn on the stored settings and answers with them,
// secrets redacted.
func (s *Server) updateSettings(w http.ResponseWriter, fn func(*userstore.Doc) error, status int) {
	d, err := s.settings.Update(fn)
	switch {
	case errors.Is(err, userstore.ErrUnreadable):
		s.log.Error("settings update refused: the settings file cannot be read")
		writeDetail(w, http.StatusConflict, detailSettingsUnreadable)
		return
	case errors.Is(err, errSettingsInvalid):
		writeDetail(w, http.StatusUnprocessableEntity, detailSettingsInvalid)
		return
	case err != nil:
		writeErr(w, err)
		return
	}
	resp, _ := s.settingsAnswer(d, "")
	writeJSON(w, status, resp)
}

// errSettingsInvalid is a diff whose result the settings' types refuse.
// Its answer says no more, as the reference's: the values may be secrets.
var errSettingsInvalid = errors.New("settings validation failed")

func (s *Server) applySettingsPatch(d *userstore.Doc, p *settingsPatch) error {
	agent, conv, misc := d.AgentSettings, d.ConversationSettings, d.MiscSettings
	if p.agent != nil {
		diff, err := s.openIncomingSecrets(p.agent, d.AgentSettings)
		if err != nil {
			return err
		}
		kind, _ := agent["agent_kind"].(string)
		base := agent
		if k, ok := diff["agent_kind"].(string); ok && k != kind {
			if k != "openhands" && k != "acp" {
				return errSettingsInvalid
			}
			kind, base = k, userstore.DefaultAgentSettings(k)
		}
		agent = userstore.Fill(mergePatch(userstore.Clone(base), diff), userstore.DefaultAgentSettings(kind))
		if err := validateAgentSettings(agent); err != nil {
			return err
		}
	}
	if p.conv != nil {
		conv = userstore.Fill(deepMerge(userstore.Clone(conv), p.conv, false), userstore.DefaultConversationSettings())
		if err := validateTree(conv, userstore.DefaultConversationSettings()); err != nil {
			return err
		}
		if n, err := conv["max_iterations"].(json.Number).Int64(); err != nil || n < 1 {
			return errSettingsInvalid
		}
	}
	if p.misc != nil {
		misc = deepMerge(userstore.Clone(misc), p.misc, false)
	}
	d.AgentSettings, d.ConversationSettings, d.MiscSettings = agent, conv, misc
	for key, v := range p.pointers {
		switch key {
		case "active_profile":
			d.ActiveProfile = v
		case "active_agent_profile_id":
			d.ActiveAgentProfileID = v
		case "active_meta_profile":
			d.ActiveMetaProfile = v
		}
	}
	return nil
}

// openIncomingSecrets returns the diff with the secrets a client sent back
// as it received them made usable: a redacted value keeps the stored one,
// a token of the server's key is decrypted.
func (s *Server) openIncomingSecrets(diff, current map[string]any) (map[string]any, error) {
	return userstore.MapSecrets(diff, func(path []string, v string) (any, error) {
		switch {
		case v == userstore.Redacted:
			var cur any = current
			for _, k := range path {
				m, _ := cur.(map[string]any)
				cur = m[k]
			}
			return cur, nil
		case s.cipher != nil && strings.HasPrefix(v, "gAAAAA"):
			if pt, err := s.cipher.DecryptString(v); err == nil {
				return pt, nil
			}
		}
		return v, nil
	})
}

// mergePatch applies an RFC 7386 merge patch: objects merge, null removes
// a member (its default comes back), anything else replaces.
func mergePatch(base, patch map[string]any) map[string]any {
	for k, v := range patch {
		switch pv := v.(type) {
		case nil:
			delete(base, k)
		case map[string]any:
			if bm, ok := base[k].(map[string]any); ok {
				base[k] = mergePatch(bm, pv)
			} else {
				base[k] = mergePatch(map[string]any{}, pv)
			}
		default:
			base[k] = v
		}
	}
	return base
}

// deepMerge merges overlay into base: objects merge; inside a nested
// object a null removes the member, at the top (nested false) it is kept
// for validation to judge.
func deepMerge(base, overlay map[string]any, nested bool) map[string]any {
	for k, v := range overlay {
		bm, bIsMap := base[k].(map[string]any)
		om, oIsMap := v.(map[string]any)
		switch {
		case v == nil && nested:
			delete(base, k)
		case bIsMap && oIsMap:
			base[k] = deepMerge(bm, om, true)
		default:
			base[k] = v
		}
	}
	return base
}

// validateTree checks v's values against the JSON types of def's: a
// default that is not null fixes the type; objects with known members
// are checked member by member.
func validateTree(v, def map[string]any) error {
	for k, d := range def {
		cur := v[k]
		if d == nil {
			continue
		}
		ok := false
		switch dv := d.(type) {
		case bool:
			_, ok = cur.(bool)
		case json.Number:
			n, isNum := cur.(json.Number)
			ok = isNum
			if isNum && !strings.ContainsAny(dv.String(), ".eE") {
				_, err := n.Int64()
				ok = err == nil
			}
		case string:
			_, ok = cur.(string)
		case []any:
			_, ok = cur.([]any)
		case map[string]any:
			cm, isMap := cur.(map[string]any)
			ok = isMap
			if ok && len(dv) > 0 {
				if err := validateTree(cm, dv); err != nil {
					return err
				}
			}
		}
		if !ok {
			return errSettingsInvalid
		}
	}
	return nil
}

func validateAgentSettings(a map[string]any) error {
	kind, _ := a["agent_kind"].(string)
	if err := validateTree(a, userstore.DefaultAgentSettings(kind)); err != nil {
		return err
	}
	if mc, ok := a["mcp_config"].(map[string]any); ok {
		for _, srv := range mc {
			if validateMCPServer(srv) != nil {
				return errSettingsInvalid
			}
		}
	}
	if kind != "openhands" {
		return nil
	}
	b, err := json.Marshal(a["llm"])
	if err != nil {
		return errSettingsInvalid
	}
	var cfg llm.Config
	if json.Unmarshal(b, &cfg) != nil {
		return errSettingsInvalid
	}
	return nil
}

// validateMCPServer checks one MCP server entry: a command to start (stdio)
// or a URL to reach.
func validateMCPServer(v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return invalid("an MCP server must be an object", "body")
	}
	// As the reference's MCPServer: a declared transport needs its command
	// or url; a server that declares none is accepted as it is.
	cmd, hasCmd := m["command"].(string)
	u, hasURL := m["url"].(string)
	if (hasCmd && cmd == "") || (hasURL && u == "") {
		return invalid("command and url must not be empty", "body")
	}
	tr, _ := m["transport"].(string)
	if tr == "" {
		tr, _ = m["type"].(string)
	}
	switch tr {
	case "":
	case "stdio":
		if strings.TrimSpace(cmd) == "" {
			return invalid("stdio MCP servers require 'command'", "body")
		}
	case "http", "shttp", "streamable-http", "sse":
		if strings.TrimSpace(u) == "" {
			return invalid("remote MCP servers require 'url'", "body")
		}
	default:
		return invalid("transport must be one of stdio, http, streamable-http, sse", "body", "transport")
	}
	for _, k := range []string{"env", "headers"} {
		if e, present := m[k]; present && e != nil {
			em, ok := e.(map[string]any)
			if !ok {
				return invalid(k+" must be an object of strings", "body", k)
			}
			for _, ev := range em {
				if _, ok := ev.(string); !ok && ev != nil {
					return invalid(k+" must be an object of strings", "body", k)
				}
			}
		}
	}
	return nil
}

func (s *Server) readMCPServer(w http.ResponseWriter, r *http.Request) (map[string]any, bool) {
	var body json.RawMessage
	if err := s.readBody(w, r, &body, false); err != nil {
		writeErr(w, err)
		return nil, false
	}
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&m); err != nil || m == nil {
		writeErr(w, &invalidError{loc: []any{"body"}, typ: "model_attributes_type", msg: "Input should be an MCP server object"})
		return nil, false
	}
	return m, true
}

func (s *Server) handleMCPCreate(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("settings_key")
	srv, ok := s.readMCPServer(w, r)
	if !ok {
		return
	}
	if err := validateMCPServer(srv); err != nil {
		writeErr(w, err)
		return
	}
	if _, set := srv["enabled"]; !set {
		srv["enabled"] = true
	}
	s.updateMCP(w, key, http.StatusCreated, func(mc map[string]any) error {
		if _, exists := mc[key]; exists {
			return statusErr(http.StatusConflict, "MCP server '%s' already exists", key)
		}
		mc[key] = srv
		return nil
	})
}

func (s *Server) handleMCPPatch(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("settings_key")
	patch, ok := s.readMCPServer(w, r)
	if !ok {
		return
	}
	s.updateMCP(w, key, http.StatusOK, func(mc map[string]any) error {
		cur, exists := mc[key].(map[string]any)
		if !exists {
			return statusErr(http.StatusNotFound, "MCP server '%s' was not found", key)
		}
		merged := deepMerge(userstore.Clone(cur), patch, false)
		if err := validateMCPServer(merged); err != nil {
			return err
		}
		mc[key] = merged
		return nil
	})
}

func (s *Server) handleMCPDelete(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("settings_key")
	s.updateMCP(w, key, http.StatusOK, func(mc map[string]any) error {
		if _, exists := mc[key]; !exists {
			return statusErr(http.StatusNotFound, "MCP server '%s' was not found", key)
		}
		delete(mc, key)
		return nil
	})
}

// updateMCP changes the mcp_config of the stored agent settings with fn.
func (s *Server) updateMCP(w http.ResponseWriter, key string, status int, fn func(map[string]any) error) {
	var fnErr error
	d, err := s.settings.Update(func(d *userstore.Doc) error {
		mc, _ := d.AgentSettings["mcp_config"].(map[string]any)
		if mc == nil {
			mc = map[string]any{}
		}
		mc = userstore.Clone(mc)
		if incoming, ok := mc[key].(map[string]any); ok {
			opened, err := s.openIncomingSecrets(map[string]any{"mcp_config": map[string]any{key: incoming}}, d.AgentSettings)
			if err == nil {
				mc[key] = opened["mcp_config"].(map[string]any)[key]
			}
		}
		if fnErr = fn(mc); fnErr != nil {
			return fnErr
		}
		d.AgentSettings["mcp_config"] = mc
		return nil
	})
	switch {
	case fnErr != nil:
		writeErr(w, fnErr)
	case errors.Is(err, userstore.ErrUnreadable):
		writeDetail(w, http.StatusConflict, detailSettingsUnreadable)
	case err != nil:
		writeErr(w, err)
	default:
		resp, _ := s.settingsAnswer(d, "")
		writeJSON(w, status, resp)
	}
}

func (s *Server) handleListSecrets(w http.ResponseWriter, r *http.Request) {
	var q secretsQuery
	if err := decodeQuery(r, &q); err != nil {
		writeErr(w, err)
		return
	}
	// With a profile, only the secrets its secret_refs name (all of
	// them when it has none), as the reference scopes the list.
	var allowed []string
	if id := q.AgentProfileID; id != nil {
		name, err := s.agentProfiles.NameForID(*id)
		if err != nil {
			writeErr(w, err)
			return
		}
		if name == "" {
			writeDetail(w, http.StatusNotFound, "Agent profile not found")
			return
		}
		p, err := s.loadAgentProfile(name)
		if err != nil {
			writeErr(w, err)
			return
		}
		if refs, ok := p["secret_refs"].([]any); ok {
			allowed = []string{}
			for _, r := range refs {
				if n, ok := r.(string); ok {
					allowed = append(allowed, n)
				}
			}
		}
	}
	items, err := s.secrets.List()
	if err != nil && !errors.Is(err, userstore.ErrUnreadable) {
		writeErr(w, err)
		return
	}
	if allowed != nil {
		items = slices.DeleteFunc(items, func(it userstore.SecretItem) bool { return !slices.Contains(allowed, it.Name) })
	}
	if items == nil {
		items = []userstore.SecretItem{}
	}
	writeJSON(w, http.StatusOK, secretsList{Secrets: items})
}

func (s *Server) handlePutSecret(w http.ResponseWriter, r *http.Request) {
	var req secretCreate
	if err := s.readBody(w, r, &req, false); err != nil {
		writeErr(w, err)
		return
	}
	if req.Value == nil {
		writeInvalid(w, "missing", "Field required", "body", "value")
		return
	}
	if !userstore.NamePattern.MatchString(req.Name) {
		writeDetail(w, http.StatusUnprocessableEntity, detailInvalidSecretName)
		return
	}
	if strings.TrimSpace(*req.Value) == "" || *req.Value == userstore.Redacted {
		writeDetail(w, http.StatusUnprocessableEntity, "Secret value must not be empty or redacted")
		return
	}
	err := s.secrets.Set(req.Name, *req.Value, req.Description)
	switch {
	case errors.Is(err, userstore.ErrUnreadable):
		s.log.Error("secret not saved: the secrets file cannot be read", "name", req.Name)
		writeDetail(w, http.StatusInternalServerError, detailSecretsUnreadable)
		return
	case err != nil:
		s.log.Error("secret not saved", "name", req.Name)
		writeDetail(w, http.StatusInternalServerError, "Failed to save secret")
		return
	}
	s.log.Info("secret saved", "name", req.Name)
	writeJSON(w, http.StatusOK, userstore.SecretItem{Name: req.Name, Description: req.Description})
}

func (s *Server) handleGetSecret(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if !userstore.NamePattern.MatchString(name) {
		writeDetail(w, http.StatusUnprocessableEntity, detailInvalidSecretName)
		return
	}
	v, ok, err := s.secrets.Get(name)
	if err != nil && !errors.Is(err, userstore.ErrUnreadable) {
		writeErr(w, err)
		return
	}
	if !ok {
		writeDetail(w, http.StatusNotFound, "Secret not found")
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write([]byte(v))
}

func (s *Server) handleDeleteSecret(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if !userstore.NamePattern.MatchString(name) {
		writeDetail(w, http.StatusUnprocessableEntity, detailInvalidSecretName)
		return
	}
	found, err := s.secrets.Delete(name)
	switch {
	case errors.Is(err, userstore.ErrUnreadable):
		writeDetail(w, http.StatusInternalServerError, detailSecretsUnreadable)
	case err != nil:
		writeErr(w, err)
	case !found:
		writeDetail(w, http.StatusNotFound, "Secret not found")
	default:
		writeJSON(w, http.StatusOK, deletedResponse{Deleted: true})
	}
}

func workspacesAnswer(w http.ResponseWriter, l *userstore.WorkspaceList, err error) {
	switch {
	case errors.Is(err, userstore.ErrUnreadable):
		writeDetail(w, http.StatusConflict, "Workspaces file is corrupted")
	case err != nil:
		writeErr(w, err)
	default:
		writeJSON(w, http.StatusOK, workspacesResponse{Workspaces: l.Workspaces, Parents: l.Parents})
	}
}

func (s *Server) handleListWorkspaces(w http.ResponseWriter, r *http.Request) {
	l, err := s.workspaces.List()
	workspacesAnswer(w, l, err)
}

// checkItem validates a saved workspace's or parent's fields as the
// reference's model does.
func checkItem(i int, list, id, name, path string, parent *string) error {
	for _, f := range []struct {
		key, v string
		max    int
	}{{"id", id, 4096}, {"name", name, 256}, {"path", path, 4096}} {
		switch {
		case f.v == "":
			return &invalidError{loc: []any{"body", list, i, f.key}, typ: "string_too_short", msg: "String should have at least 1 character"}
		case len([]rune(f.v)) > f.max:
			return &invalidError{loc: []any{"body", list, i, f.key}, typ: "string_too_long", msg: fmt.Sprintf("String should have at most %d characters", f.max)}
		}
	}
	if parent != nil && len([]rune(*parent)) > 4096 {
		return &invalidError{loc: []any{"body", list, i, "parentPath"}, typ: "string_too_long", msg: "String should have at most 4096 characters"}
	}
	return nil
}

func (s *Server) handleAddWorkspaces(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Workspaces *[]userstore.Workspace `json:"workspaces"`
	}
	if err := s.readBody(w, r, &req, false); err != nil {
		writeErr(w, err)
		return
	}
	if req.Workspaces == nil {
		writeInvalid(w, "missing", "Field required", "body", "workspaces")
		return
	}
	for i, ws := range *req.Workspaces {
		if err := checkItem(i, "workspaces", ws.ID, ws.Name, ws.Path, ws.ParentPath); err != nil {
			writeErr(w, err)
			return
		}
	}
	l, err := s.workspaces.Update(func(l *userstore.WorkspaceList) bool {
		n := len(l.Workspaces)
		for _, ws := range *req.Workspaces {
			if !containsPath(l.Workspaces, ws.Path, func(w userstore.Workspace) string { return w.Path }) {
				l.Workspaces = append(l.Workspaces, ws)
			}
		}
		return len(l.Workspaces) != n
	})
	workspacesAnswer(w, l, err)
}

func (s *Server) handleAddParents(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Parents *[]userstore.WorkspaceParent `json:"parents"`
	}
	if err := s.readBody(w, r, &req, false); err != nil {
		writeErr(w, err)
		return
	}
	if req.Parents == nil {
		writeInvalid(w, "missing", "Field required", "body", "parents")
		return
	}
	for i, p := range *req.Parents {
		if err := checkItem(i, "parents", p.ID, p.Name, p.Path, nil); err != nil {
			writeErr(w, err)
			return
		}
	}
	l, err := s.workspaces.Update(func(l *userstore.WorkspaceList) bool {
		n := len(l.Parents)
		for _, p := range *req.Parents {
			if !containsPath(l.Parents, p.Path, func(p userstore.WorkspaceParent) string { return p.Path }) {
				l.Parents = append(l.Parents, p)
			}
		}
		return len(l.Parents) != n
	})
	workspacesAnswer(w, l, err)
}

func containsPath[T any](l []T, path string, pathOf func(T) string) bool {
	return slices.ContainsFunc(l, func(e T) bool { return pathOf(e) == path })
}

func (s *Server) handleDeleteWorkspace(w http.ResponseWriter, r *http.Request) {
	s.deleteWorkspaceEntry(w, r, "Workspace not found", func(l *userstore.WorkspaceList, path string) bool {
		n := len(l.Workspaces)
		l.Workspaces = slices.DeleteFunc(l.Workspaces, func(ws userstore.Workspace) bool { return ws.Path == path })
		return len(l.Workspaces) != n
	})
}

func (s *Server) handleDeleteParent(w http.ResponseWriter, r *http.Request) {
	s.deleteWorkspaceEntry(w, r, "Workspace parent not found", func(l *userstore.WorkspaceList, path string) bool {
		n := len(l.Parents)
		l.Parents = slices.DeleteFunc(l.Parents, func(p userstore.WorkspaceParent) bool { return p.Path == path })
		return len(l.Parents) != n
	})
}

func (s *Server) deleteWorkspaceEntry(w http.ResponseWriter, r *http.Request, notFound string, remove func(*userstore.WorkspaceList, string) bool) {
	var q workspacePathQuery
	if err := decodeQuery(r, &q); err != nil {
		writeErr(w, err)
		return
	}
	removed := false
	_, err := s.workspaces.Update(func(l *userstore.WorkspaceList) bool {
		removed = remove(l, q.Path)
		return removed
	})
	switch {
	case errors.Is(err, userstore.ErrUnreadable):
		writeDetail(w, http.StatusConflict, "Workspaces file is corrupted")
	case err != nil:
		writeErr(w, err)
	case !removed:
		writeDetail(w, http.StatusNotFound, notFound)
	default:
		writeJSON(w, http.StatusOK, deletedResponse{Deleted: true})
	}
}
