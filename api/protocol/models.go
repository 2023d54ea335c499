package protocol

// ProvidersResponse is the answer of GET /api/llm/providers.
type ProvidersResponse struct {
	Providers []string `json:"providers"`
}

// ModelsResponse is the answer of GET /api/llm/models.
type ModelsResponse struct {
	Models []string `json:"models"`
}

// VerifiedModelsResponse is the answer of GET /api/llm/models/verified:
// provider → its verified models.
type VerifiedModelsResponse struct {
	Models map[string][]string `json:"models"`
}

// ToolCatalogEntry is one tool offered to clients that configure an agent.
type ToolCatalogEntry struct {
	Name           string `json:"name"`
	UserSelectable bool   `json:"user_selectable"`
	Usable         bool   `json:"usable"`
	Description    string `json:"description"`
	InDefaultSet   bool   `json:"in_default_set"`
}

// ToolCatalogResponse is the answer of GET /api/tools/catalog.
type ToolCatalogResponse struct {
	Tools []ToolCatalogEntry `json:"tools"`
}

// ProfileInfo is one LLM profile in GET /api/profiles.
type ProfileInfo struct {
	Name                     string  `json:"name"`
	Model                    *string `json:"model"`
	BaseURL                  *string `json:"base_url"`
	ProviderConnectionID     *string `json:"provider_connection_id"`
	ProviderConnectionBroken bool    `json:"provider_connection_broken"`
	APIKeySet                bool    `json:"api_key_set"`
}

// ProfileListResponse is the answer of GET /api/profiles.
type ProfileListResponse struct {
	Profiles      []ProfileInfo `json:"profiles"`
	ActiveProfile *string       `json:"active_profile"`
}

// ProfileDetailResponse is the answer of GET /api/profiles/{name}: the
// profile's LLM configuration, its key null unless X-Expose-Secrets asks.
type ProfileDetailResponse struct {
	Name      string         `json:"name"`
	Config    map[string]any `json:"config"`
	APIKeySet bool           `json:"api_key_set"`
}

// ProfileMutationResponse answers a save, delete or rename of a profile.
type ProfileMutationResponse struct {
	Name    string `json:"name"`
	Message string `json:"message"`
}

// ActivateProfileResponse answers POST /api/profiles/{name}/activate.
type ActivateProfileResponse struct {
	Name       string `json:"name"`
	Message    string `json:"message"`
	LLMApplied bool   `json:"llm_applied"`
}

// ValidateProfileError says why a profile's pre-flight call failed.
type ValidateProfileError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// ValidateProfileResponse answers POST /api/profiles/{name}/validate.
type ValidateProfileResponse struct {
	Valid bool                  `json:"valid"`
	Error *ValidateProfileError `json:"error"`
}

// HooksRequest is the body of POST /api/hooks.
type HooksRequest struct {
	ProjectDir *string `json:"project_dir"`
}

// HooksResponse answers POST /api/hooks: the project's hooks.json, null
// when it has none (or an empty or unreadable one).
type HooksResponse struct {
	HookConfig any `json:"hook_config"`
}
