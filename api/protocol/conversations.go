package protocol

import (
	"encoding/json"
	"github.com/gohands/gohands/event"
)

// StartRequest is the reference's StartConversationRequest. Kind-tagged
// members stay raw until validated; unknown keys are ignored.
type StartRequest struct {
	Agent                json.RawMessage            `json:"agent"`
	AgentSettings        json.RawMessage            `json:"agent_settings,omitempty"`
	AgentProfileID       *string                    `json:"agent_profile_id,omitempty"`
	Workspace            json.RawMessage            `json:"workspace"`
	ConversationID       *string                    `json:"conversation_id,omitempty"`
	InitialMessage       *InitialMessage            `json:"initial_message,omitempty"`
	MaxIterations        *int                       `json:"max_iterations,omitempty"`
	StuckDetection       *bool                      `json:"stuck_detection,omitempty"`
	ConfirmationPolicy   json.RawMessage            `json:"confirmation_policy,omitempty"`
	SecurityAnalyzer     json.RawMessage            `json:"security_analyzer,omitempty"`
	Secrets              map[string]json.RawMessage `json:"secrets,omitempty"`
	SecretsEncrypted     bool                       `json:"secrets_encrypted,omitempty"`
	ToolModuleQualnames  map[string]string          `json:"tool_module_qualnames,omitempty"`
	ClientTools          []json.RawMessage          `json:"client_tools,omitempty"`
	HookConfig           json.RawMessage            `json:"hook_config,omitempty"`
	Tags                 map[string]string          `json:"tags,omitempty"`
	UserID               *string                    `json:"user_id,omitempty"`
	ParentConversationID *string                    `json:"parent_conversation_id,omitempty"`
	Autotitle            *bool                      `json:"autotitle,omitempty"`

	ObservabilityMetadata          json.RawMessage `json:"observability_metadata,omitempty"`
	ObservabilityTags              json.RawMessage `json:"observability_tags,omitempty"`
	ObservabilitySpanName          *string         `json:"observability_span_name,omitempty"`
	ObservabilityParentSpanContext *string         `json:"observability_parent_span_context,omitempty"`

	// TitleLLMProfile names the profile (of the server's llm_profiles)
	// that titles the conversation.
	TitleLLMProfile *string `json:"title_llm_profile,omitempty"`

	// The reference 1.58.2's fields this server does not implement yet. A
	// request that sets one to anything but its default is refused with a
	// 422 naming it, never silently run without it.
	Worktree             *bool             `json:"worktree,omitempty"`
	WorktreeOptions      json.RawMessage   `json:"worktree_options,omitempty"`
	AgentDefinitions     []json.RawMessage `json:"agent_definitions,omitempty"`
	Plugins              json.RawMessage   `json:"plugins,omitempty"`
	AgentLaunchAdditions json.RawMessage   `json:"agent_launch_additions,omitempty"`
	Prompt               *string           `json:"prompt,omitempty"`
	ConversationRuntime  *string           `json:"conversation_runtime,omitempty"`
	Container            json.RawMessage   `json:"container,omitempty"`
}

// InitialMessage is the first user message of a new conversation.
type InitialMessage struct {
	Role    string          `json:"role"`
	Content []event.Content `json:"content"`
	Run     bool            `json:"run"`
}

// ConversationInfo is the reference's ConversationInfo as documented in
// /openapi.json. The response is built from the state's own encoding (the
// server's conv.info); this type describes it. A client may decode the
// part it reads into a narrower type.
type ConversationInfo struct {
	ID                         string            `json:"id" format:"uuid"`
	Agent                      map[string]any    `json:"agent"`
	Workspace                  map[string]any    `json:"workspace"`
	PersistenceDir             *string           `json:"persistence_dir"`
	MaxIterations              int               `json:"max_iterations"`
	StuckDetection             bool              `json:"stuck_detection"`
	ExecutionStatus            string            `json:"execution_status"`
	ConfirmationPolicy         map[string]any    `json:"confirmation_policy"`
	SecurityAnalyzer           map[string]any    `json:"security_analyzer"`
	ActivatedKnowledgeSkills   []string          `json:"activated_knowledge_skills"`
	InvokedSkills              []string          `json:"invoked_skills"`
	BlockedActions             map[string]string `json:"blocked_actions"`
	BlockedMessages            map[string]string `json:"blocked_messages"`
	LastUserMessageID          *string           `json:"last_user_message_id"`
	LeafEventID                *string           `json:"leaf_event_id"`
	Stats                      map[string]any    `json:"stats"`
	SecretRegistry             map[string]any    `json:"secret_registry"`
	Tags                       map[string]string `json:"tags"`
	AgentState                 map[string]any    `json:"agent_state"`
	HookConfig                 map[string]any    `json:"hook_config"`
	Title                      *string           `json:"title"`
	Metrics                    map[string]any    `json:"metrics"`
	CreatedAt                  string            `json:"created_at"`
	UpdatedAt                  string            `json:"updated_at"`
	ForkedFromConversationID   *string           `json:"forked_from_conversation_id"`
	ForkedFromEventID          *string           `json:"forked_from_event_id"`
	ParentConversationID       *string           `json:"parent_conversation_id"`
	SubConversationIDs         []string          `json:"sub_conversation_ids"`
	CurrentModelID             *string           `json:"current_model_id"`
	AvailableModels            []map[string]any  `json:"available_models"`
	SupportsRuntimeModelSwitch bool              `json:"supports_runtime_model_switch"`
	LaunchedAgentProfile       map[string]any    `json:"launched_agent_profile"`
	ClientTools                []map[string]any  `json:"client_tools"`
	ToolModuleQualnames        map[string]string `json:"tool_module_qualnames"`
	RuntimeInfo                *RuntimeInfo      `json:"runtime_info"`
}

// ConversationPage is a page of search results.
type ConversationPage struct {
	Items      []ConversationInfo `json:"items"`
	NextPageID *string            `json:"next_page_id"`
}

// UpdateRequest is the body of PATCH /api/conversations/{id}.
type UpdateRequest struct {
	Title *string           `json:"title,omitempty" minLength:"1" maxLength:"200"`
	Tags  map[string]string `json:"tags,omitempty"`
}

// SecretsRequest is the body of the secrets route.
type SecretsRequest struct {
	Secrets map[string]json.RawMessage `json:"secrets" required:"true"`
}

// PolicyRequest is the body of the confirmation_policy route.
type PolicyRequest struct {
	Policy json.RawMessage `json:"policy"`
}

// AnalyzerRequest is the body of the security_analyzer route.
type AnalyzerRequest struct {
	SecurityAnalyzer json.RawMessage `json:"security_analyzer" required:"true"`
}

// AskRequest is the body of ask_agent.
type AskRequest struct {
	Question string `json:"question" required:"true" minLength:"1" pattern:"\\S"`
}

// AskResponse is the answer of ask_agent.
type AskResponse struct {
	Response string `json:"response"`
}

// StartGoalRequest is the body of the goal route (the reference's
// StartGoalRequest).
type StartGoalRequest struct {
	Objective     *string `json:"objective" required:"true" minLength:"1"`
	MaxIterations *int    `json:"max_iterations,omitempty" minimum:"1"`
}

// LocalWorkspace is StartRequest's workspace for a directory of the
// server's machine (the reference's LocalWorkspace).
type LocalWorkspace struct {
	Kind       string `json:"kind"` // "LocalWorkspace"
	WorkingDir string `json:"working_dir"`
}

// SocketAuth is the first message a client sends on the events socket
// when its key is not in the URL.
type SocketAuth struct {
	Type          string `json:"type"` // "auth"
	SessionAPIKey string `json:"session_api_key"`
}

// RuntimeInfo is the reference's ConversationRuntimeInfo: whether a
// conversation's runtime is there to run it.
type RuntimeInfo struct {
	RuntimeStatus string        `json:"runtime_status" enum:"available,starting,missing,ownership_lost,error"`
	CanResume     bool          `json:"can_resume"`
	RuntimeError  *RuntimeError `json:"runtime_error"`
}

// RuntimeError is the reference's ConversationRuntimeError.
type RuntimeError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}
