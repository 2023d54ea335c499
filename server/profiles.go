package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"time"

	"github.com/gohands/gohands/api/protocol"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/server/userstore"
)

// The LLM profiles (/api/profiles): named model configurations in the
// reference's layout (profiles/NAME.json in the persistence directory,
// see userstore.Profiles), one of which the settings mark active.

// maxProfiles bounds the stored profiles, as the reference's does.
const maxProfiles = 50

// profilePreflightTimeout bounds the call of POST .../validate.
const profilePreflightTimeout = 15 * time.Second

type profilePath struct {
	Name string `path:"name" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"`
}

type saveProfileRequest struct {
	LLM            json.RawMessage `json:"llm"`
	IncludeSecrets *bool           `json:"include_secrets"`
}

type renameProfileRequest struct {
	NewName *string `json:"new_name"`
}

type validateProfileRequest struct {
	LLM json.RawMessage `json:"llm"`
}

func (s *Server) profileRoutes() []*route {
	const (
		p  = "/api/profiles/{name}"
		tp = "Profiles"
	)
	bad := []int{422}
	return []*route{
		{method: "GET", path: "/api/profiles", summary: "The saved LLM profiles and the active one", tag: tp, resp: protocol.ProfileListResponse{}, h: handle(s, nil, s.handleListProfiles)},
		{method: "GET", path: p, summary: "A profile's LLM configuration (its key null unless X-Expose-Secrets asks)", tag: tp, query: &profilePath{}, resp: protocol.ProfileDetailResponse{}, errors: []int{400, 404, 422, 503}, h: handle(s, nil, s.handleGetProfile)},
		{method: "POST", path: p, summary: "Save an LLM configuration as a profile (409 beyond 50 profiles)", tag: tp, query: &profilePath{}, body: saveProfileRequest{}, resp: protocol.ProfileMutationResponse{}, status: http.StatusCreated, errors: []int{409, 422}, h: handle(s, nil, s.handleSaveProfile)},
		{method: "DELETE", path: p, summary: "Delete a profile (idempotent)", tag: tp, query: &profilePath{}, resp: protocol.ProfileMutationResponse{}, errors: bad, h: handle(s, nil, s.handleDeleteProfile)},
		{method: "POST", path: p + "/rename", summary: "Rename a profile (404 when missing, 409 when the new name is taken)", tag: tp, query: &profilePath{}, body: renameProfileRequest{}, resp: protocol.ProfileMutationResponse{}, errors: []int{404, 409, 422}, h: handle(s, nil, s.handleRenameProfile)},
		{method: "POST", path: p + "/activate", summary: "Make a profile the settings' LLM and the active profile", tag: tp, query: &profilePath{}, resp: protocol.ActivateProfileResponse{}, errors: []int{404, 409, 422}, h: handle(s, nil, s.handleActivateProfile)},
		{method: "POST", path: p + "/validate", summary: "Try an LLM configuration with a one-token call before saving it", tag: tp, query: &profilePath{}, body: validateProfileRequest{}, resp: protocol.ValidateProfileResponse{}, errors: bad, h: handle(s, nil, s.handleValidateProfile)},
	}
}

// profileLLM decodes the llm member of a request: the reference's LLM
// object, validated. A secret sealed with the server's key (as
// X-Expose-Secrets: encrypted shows them) is opened first.
func (s *Server) profileLLM(raw json.RawMessage) (llm.Config, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return llm.Config{}, &invalidError{loc: []any{"body", "llm"}, typ: "missing", msg: "Field required"}
	}
	var cfg llm.Config
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return llm.Config{}, &invalidError{loc: []any{"body", "llm"}, typ: "value_error", msg: err.Error()}
	}
	if s.cipher != nil {
		v, err := cfg.MapSecrets(func(v secret.String) (secret.String, error) {
			if pt, err := s.cipher.DecryptString(v.Value()); err == nil {
				return secret.New(pt), nil
			}
			return v, nil
		})
		if err != nil {
			return llm.Config{}, err
		}
		cfg = v.(llm.Config)
	}
	return cfg, nil
}

func (s *Server) handleListProfiles(in *request[none, none]) (any, error) {
	list, err := s.profiles.List()
	if err != nil {
		return nil, err
	}
	d, err := s.settings.Load()
	if err != nil {
		return nil, err
	}
	out := protocol.ProfileListResponse{Profiles: []protocol.ProfileInfo{}, ActiveProfile: d.ActiveProfile}
	for _, p := range list {
		out.Profiles = append(out.Profiles, protocol.ProfileInfo{
			Name: p.Name, Model: p.Model, BaseURL: p.BaseURL,
			ProviderConnectionID: p.ProviderConnectionID, APIKeySet: p.APIKeySet,
		})
	}
	return out, nil
}

// loadProfile reads a profile; a missing one is the reference's 404.
func (s *Server) loadProfile(name string) (map[string]any, error) {
	m, err := s.profiles.Load(name)
	if errors.Is(err, userstore.ErrNoProfile) {
		return nil, statusErr(http.StatusNotFound, "Profile '%s' not found", name)
	}
	return m, err
}

func (s *Server) handleGetProfile(in *request[profilePath, none]) (any, error) {
	name := in.query.Name
	mode, err := exposeMode(in.r)
	if err != nil {
		return nil, err
	}
	m, err := s.loadProfile(name)
	if err != nil {
		return nil, err
	}
	keySet := userstore.HasSecret(map[string]any{"api_key": m["api_key"]})
	switch mode {
	case "plaintext":
		s.log.Warn("profile read with secrets in plaintext", "profile", name)
	case "encrypted":
		if s.cipher == nil && userstore.HasSecret(m) {
			return nil, statusErr(http.StatusServiceUnavailable, "Encryption not available: OH_SECRET_KEY is not configured. Cannot return encrypted secrets.")
		}
		if m, err = userstore.MapSecrets(m, func(_ []string, v string) (any, error) { return s.cipher.EncryptString(v) }); err != nil {
			return nil, err
		}
	default:
		m["api_key"] = nil
		m = userstore.Redact(m)
	}
	return protocol.ProfileDetailResponse{Name: name, Config: m, APIKeySet: keySet}, nil
}

func (s *Server) handleSaveProfile(in *request[profilePath, saveProfileRequest]) (any, error) {
	name := in.query.Name
	cfg, err := s.profileLLM(in.body.LLM)
	if err != nil {
		return nil, err
	}
	m, err := exposedConfig(cfg)
	if err != nil {
		return nil, err
	}
	include := in.body.IncludeSecrets == nil || *in.body.IncludeSecrets
	err = s.profiles.Save(name, m, include, maxProfiles)
	if errors.Is(err, userstore.ErrProfileLimit) {
		return nil, statusErr(http.StatusConflict, "Profile limit reached (%d). Delete a profile before saving a new one.", maxProfiles)
	}
	if err != nil {
		return nil, err
	}
	s.log.Info("profile saved", "profile", name, "include_secrets", include)
	return reply{http.StatusCreated, protocol.ProfileMutationResponse{Name: name, Message: fmt.Sprintf("Profile '%s' saved", name)}}, nil
}

// setActiveProfileIf moves the settings' active profile from old to new
// (nil: none) when old is the active one.
func (s *Server) setActiveProfileIf(old string, new *string) error {
	_, err := s.settings.Update(func(d *userstore.Doc) error {
		if d.ActiveProfile != nil && userstore.CanonicalProfileName(*d.ActiveProfile) == userstore.CanonicalProfileName(old) {
			d.ActiveProfile = new
		}
		return nil
	})
	return err
}

func (s *Server) handleDeleteProfile(in *request[profilePath, none]) (any, error) {
	name := in.query.Name
	if err := s.profiles.Delete(name); err != nil {
		return nil, err
	}
	if err := s.setActiveProfileIf(name, nil); err != nil {
		s.log.Warn("profile deleted, but the active profile could not be cleared", "profile", name, "err", err)
	}
	return protocol.ProfileMutationResponse{Name: name, Message: fmt.Sprintf("Profile '%s' deleted", name)}, nil
}

func (s *Server) handleRenameProfile(in *request[profilePath, renameProfileRequest]) (any, error) {
	name := in.query.Name
	if in.body.NewName == nil {
		return nil, &invalidError{loc: []any{"body", "new_name"}, typ: "missing", msg: "Field required"}
	}
	to := *in.body.NewName
	if !userstore.ProfileNamePattern.MatchString(to) {
		return nil, &invalidError{loc: []any{"body", "new_name"}, typ: "string_pattern_mismatch", msg: "String should match pattern '" + userstore.ProfileNamePattern.String() + "'"}
	}
	switch err := s.profiles.Rename(name, to); {
	case errors.Is(err, userstore.ErrNoProfile):
		return nil, statusErr(http.StatusNotFound, "Profile '%s' not found", name)
	case errors.Is(err, userstore.ErrProfileExists):
		return nil, statusErr(http.StatusConflict, "Profile '%s' already exists", to)
	case err != nil:
		return nil, err
	}
	if name == to {
		return protocol.ProfileMutationResponse{Name: to, Message: fmt.Sprintf("Profile '%s' unchanged (same name)", name)}, nil
	}
	canon := userstore.CanonicalProfileName(to)
	if err := s.setActiveProfileIf(name, &canon); err != nil {
		s.log.Warn("profile renamed, but the active profile could not follow", "profile", name, "err", err)
	}
	return protocol.ProfileMutationResponse{Name: to, Message: fmt.Sprintf("Profile '%s' renamed to '%s'", name, to)}, nil
}

func (s *Server) handleActivateProfile(in *request[profilePath, none]) (any, error) {
	name := in.query.Name
	m, err := s.loadProfile(name)
	if err != nil {
		return nil, err
	}
	applied := false
	_, err = s.settings.Update(func(d *userstore.Doc) error {
		// An ACP agent has no LLM of its own to replace.
		if kind, _ := d.AgentSettings["agent_kind"].(string); kind != "acp" {
			d.AgentSettings["llm"] = m
			applied = true
		}
		canon := userstore.CanonicalProfileName(name)
		d.ActiveProfile = &canon
		return nil
	})
	if errors.Is(err, userstore.ErrUnreadable) {
		return nil, statusErr(http.StatusConflict, detailSettingsUnreadable)
	}
	if err != nil {
		return nil, err
	}
	msg := fmt.Sprintf("Profile '%s' activated", name)
	if applied {
		msg += " and applied to current settings"
	}
	return protocol.ActivateProfileResponse{Name: name, Message: msg, LLMApplied: applied}, nil
}

// handleValidateProfile makes one bounded call with the configuration, no
// retries and no fallbacks: a wrong model, address or key answers
// valid=false with the error's kind; a rate limit or timeout (the
// configuration may be right) answers valid=true.
func (s *Server) handleValidateProfile(in *request[profilePath, validateProfileRequest]) (any, error) {
	name := in.query.Name
	cfg, err := s.profileLLM(in.body.LLM)
	if err != nil {
		return nil, err
	}
	cfg.NumRetries = 1
	cfg.MaxOutputTokens = 1
	cfg.FallbackStrategy = nil
	timeout := profilePreflightTimeout
	if cfg.Timeout > 0 && time.Duration(cfg.Timeout*float64(time.Second)) < timeout {
		timeout = time.Duration(cfg.Timeout * float64(time.Second))
	}
	invalidAnswer := func(kind string, err error) protocol.ValidateProfileResponse {
		msg := redactKey(err.Error(), cfg.APIKey.Value())
		s.log.Info("profile pre-flight failed", "profile", name, "type", kind, "err", msg)
		return protocol.ValidateProfileResponse{Error: &protocol.ValidateProfileError{Type: kind, Message: msg}}
	}
	m, err := llm.New(cfg, &llm.Options{Logger: s.log})
	if err != nil {
		return invalidAnswer("BadRequestError", err), nil
	}
	ctx, cancel := context.WithTimeout(in.r.Context(), timeout)
	defer cancel()
	msgs := []event.Message{{Role: event.RoleSystem, Content: event.List[event.Content]{event.Text("Reply with one token.")}}, event.UserMessage("ping")}
	_, err = m.Completion(ctx, msgs, nil, nil)
	switch {
	case err == nil:
		return protocol.ValidateProfileResponse{Valid: true}, nil
	case errors.Is(err, llm.ErrRateLimit), errors.Is(err, llm.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return protocol.ValidateProfileResponse{Valid: true}, nil
	}
	return invalidAnswer(llmErrorKind(err), err), nil
}

// llmErrorKind names an LLM error as the reference's exception classes do.
func llmErrorKind(err error) string {
	for _, k := range []struct {
		err  error
		name string
	}{
		{llm.ErrAuthentication, "AuthenticationError"},
		{llm.ErrBadRequest, "BadRequestError"},
		{llm.ErrContentPolicy, "ContentPolicyViolationError"},
		{llm.ErrContextWindowExceeded, "ContextWindowExceededError"},
		{llm.ErrConnection, "APIConnectionError"},
		{llm.ErrServer, "ServiceUnavailableError"},
		{llm.ErrNoResponse, "LLMNoResponseError"},
	} {
		if errors.Is(err, k.err) {
			return k.name
		}
	}
	return "LLMError"
}

// redactKey hides key in msg (a provider may echo it).
func redactKey(msg, key string) string {
	if len(key) < 4 {
		return msg
	}
	return strings.ReplaceAll(msg, key, userstore.Redacted)
}

// llmProfiles are the profiles a conversation may switch to or title
// with: the stored ones (/api/profiles) and Options.Profiles, which win
// on a name clash. A stored profile that is no valid LLM configuration
// is logged and left out.
func (s *Server) llmProfiles() llm.Profiles {
	out := llm.Profiles{}
	list, err := s.profiles.List()
	if err != nil {
		s.log.Warn("profiles: cannot list the stored profiles", "err", err)
	}
	for _, p := range list {
		m, err := s.profiles.Load(p.Name)
		if err != nil {
			s.log.Warn("profiles: cannot read a stored profile", "profile", p.Name, "err", err)
			continue
		}
		b, err := json.Marshal(m)
		var cfg llm.Config
		if err == nil {
			err = json.Unmarshal(b, &cfg)
		}
		if err != nil {
			s.log.Warn("profiles: a stored profile is no LLM configuration", "profile", p.Name, "err", err)
			continue
		}
		out[p.Name] = cfg
	}
	maps.Copy(out, s.opts.Profiles)
	return out
}

// llmProfileSettings is the LLM profile name, secrets exposed, as an agent
// profile's launch takes it: one of Options.Profiles, which win on a name
// clash as in llmProfiles, or a stored one (userstore.ErrNoProfile when
// neither).
func (s *Server) llmProfileSettings(name string) (map[string]any, error) {
	if cfg, ok := s.opts.Profiles[name]; ok {
		return exposedConfig(cfg)
	}
	return s.profiles.Load(name)
}
