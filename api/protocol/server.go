package protocol

// ErrorDetail is the reference's error body: {"detail": ...}.
type ErrorDetail struct {
	Detail string `json:"detail"`
}

// ValidationError is one item of a 422 body, FastAPI's shape.
type ValidationError struct {
	Type string `json:"type"`
	Loc  []any  `json:"loc"`
	Msg  string `json:"msg"`
}

// ValidationErrors is a 422 body.
type ValidationErrors struct {
	Detail []ValidationError `json:"detail"`
}

// SuccessResponse is the body of action routes.
type SuccessResponse struct {
	Success bool `json:"success"`
}

// StatusResponse is the answer of /health and /ready.
type StatusResponse struct {
	Status string `json:"status"`
}

// ServerInfo is the answer of /server_info.
type ServerInfo struct {
	Uptime                    float64  `json:"uptime"`
	IdleTime                  float64  `json:"idle_time"`
	Title                     string   `json:"title"`
	Version                   string   `json:"version"`
	SDKVersion                string   `json:"sdk_version"`
	ToolsVersion              string   `json:"tools_version"`
	WorkspaceVersion          string   `json:"workspace_version"`
	BuildGitSHA               *string  `json:"build_git_sha"`
	BuildGitRef               *string  `json:"build_git_ref"`
	PythonVersion             string   `json:"python_version"`
	UsableTools               []string `json:"usable_tools"`
	RuntimeIdleTimeoutSeconds *float64 `json:"runtime_idle_timeout_seconds"`
	// ConversationRuntime is where conversations run ("local" or
	// "docker"); AvailableConversationRuntimes are those a start request
	// may pick (empty: only ConversationRuntime).
	ConversationRuntime           string   `json:"conversation_runtime"`
	AvailableConversationRuntimes []string `json:"available_conversation_runtimes"`
	Capabilities                  []string `json:"capabilities"`
	// AppBackendIngressURL is the separate origin of canvas app backends
	// (none here).
	AppBackendIngressURL         *string `json:"app_backend_ingress_url"`
	MaxForegroundTerminalTimeout int     `json:"max_foreground_terminal_timeout_seconds"`
	Docs                         string  `json:"docs"`
	Redoc                        string  `json:"redoc"`
}
