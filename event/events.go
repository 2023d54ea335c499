package event

import "encoding/json"

// This file declares every event kind of the reference. Field order
// follows the reference's so encoded events match its output byte for byte.

// SecurityRisk is the risk rating of an action.
type SecurityRisk string

// Security risks, in increasing order except Unknown.
const (
	RiskUnknown SecurityRisk = "UNKNOWN"
	RiskLow     SecurityRisk = "LOW"
	RiskMedium  SecurityRisk = "MEDIUM"
	RiskHigh    SecurityRisk = "HIGH"
)

// Valid reports whether r is one of the four risk levels.
func (r SecurityRisk) Valid() bool {
	switch r {
	case RiskUnknown, RiskLow, RiskMedium, RiskHigh:
		return true
	}
	return false
}

// Action is a tool's typed arguments: a pointer to a struct registered with
// RegisterKind (e.g. *terminal.Action, kind "TerminalAction").
type Action any

// ObservationBase holds the fields every observation has. Observation types
// embed it first.
type ObservationBase struct {
	Content List[Content] `json:"content"`
	IsError bool          `json:"is_error"`
}

// Obs returns o; it makes every struct embedding ObservationBase an
// Observation.
func (o *ObservationBase) Obs() *ObservationBase { return o }

// Observation is a tool's result: a pointer to a registered struct that
// embeds ObservationBase.
type Observation interface {
	Obs() *ObservationBase
}

// LLMRenderer is implemented by observations that show the model something
// other than the default rendering (an error header, then Content).
type LLMRenderer interface {
	LLMContent() []Content
}

// ErrorHeader is the text block the model sees before the content of an
// observation that failed.
const ErrorHeader = "[An error occurred during execution.]\n"

// ObservationContent returns what the model sees for o.
func ObservationContent(o Observation) []Content {
	if r, ok := o.(LLMRenderer); ok {
		return r.LLMContent()
	}
	b := o.Obs()
	if !b.IsError {
		return b.Content
	}
	out := make([]Content, 0, len(b.Content)+1)
	out = append(out, Text(ErrorHeader))
	return append(out, b.Content...)
}

// ToolAnnotations are MCP-style hints about a tool's behaviour.
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    bool   `json:"readOnlyHint"`
	DestructiveHint bool   `json:"destructiveHint"`
	IdempotentHint  bool   `json:"idempotentHint"`
	OpenWorldHint   bool   `json:"openWorldHint"`
}

// ToolDefinition is a tool as serialised inside a SystemPromptEvent. The
// tool's name is not part of it; readers derive it from Kind.
type ToolDefinition struct {
	Description     string           `json:"description" required:"true"`
	ActionType      string           `json:"action_type" required:"true"`
	ObservationType string           `json:"observation_type,omitempty"`
	Annotations     *ToolAnnotations `json:"annotations,omitempty"`
	Meta            json.RawMessage  `json:"meta,omitempty"` // any JSON object, kept verbatim
	// ClientToolName and InputSchema are a client tool's (kind ClientTool):
	// its name and its parameters' schema as the client gave them.
	ClientToolName string          `json:"client_tool_name,omitempty"`
	InputSchema    json.RawMessage `json:"input_schema,omitempty"`
	Kind           string          `json:"kind"` // the reference writes kind before title
	Title          string          `json:"title"`
}

// SystemPromptEvent carries the system prompt and the tools offered to the
// model. It is the first event of a conversation.
type SystemPromptEvent struct {
	Base
	SystemPrompt   Content          `json:"system_prompt" required:"true"`
	Tools          []ToolDefinition `json:"tools" required:"true"`
	DynamicContext *Content         `json:"dynamic_context,omitempty"`
}

// CriticResult is a critic's assessment of an action or message.
//
// Message is required but nullable in the reference, so it is always
// written, as null when nil. Python's own exclude_none output drops a null
// message and then fails to read it back; gohands reads it as null.
type CriticResult struct {
	Score    float64         `json:"score" required:"true"` // probability of success, 0 to 1
	Message  *string         `json:"message"`
	Metadata json.RawMessage `json:"metadata,omitempty"` // any JSON object, kept verbatim
}

// MessageEvent is a message from the user, or a final text reply from the
// agent.
type MessageEvent struct {
	Base
	LLMMessage      Message       `json:"llm_message" required:"true"`
	LLMResponseID   string        `json:"llm_response_id,omitempty"`
	ActivatedSkills List[string]  `json:"activated_skills"`
	ExtendedContent List[Content] `json:"extended_content"`
	Sender          string        `json:"sender,omitempty"`
	CriticResult    *CriticResult `json:"critic_result,omitempty"`
}

// ActionEvent is one tool call of the model. Action is nil when the call
// could not be turned into an action (unknown tool, invalid arguments); an
// AgentErrorEvent then answers it.
type ActionEvent struct {
	Base
	Thought          List[Content]       `json:"thought" required:"true"`
	ReasoningContent string              `json:"reasoning_content,omitempty"`
	ThinkingBlocks   List[ThinkingBlock] `json:"thinking_blocks"`
	ResponsesItem    *ReasoningItem      `json:"responses_reasoning_item,omitempty"`
	Action           Action              `json:"action,omitempty" wire:"kinded"`
	ToolName         string              `json:"tool_name" required:"true"`
	ToolCallID       string              `json:"tool_call_id" required:"true"`
	ToolCall         ToolCall            `json:"tool_call" required:"true"`
	LLMResponseID    string              `json:"llm_response_id" required:"true"`
	SecurityRisk     SecurityRisk        `json:"security_risk"`
	CriticResult     *CriticResult       `json:"critic_result,omitempty"`
	Summary          string              `json:"summary,omitempty"`
}

// ObservationEvent is the result of executing an action.
type ObservationEvent struct {
	Base
	ToolName        string        `json:"tool_name" required:"true"`
	ToolCallID      string        `json:"tool_call_id" required:"true"`
	Observation     Observation   `json:"observation" required:"true"`
	ActionID        string        `json:"action_id" required:"true"`
	ExtendedContent List[Content] `json:"extended_content"`
}

// Rejection sources.
const (
	RejectedByUser = "user"
	RejectedByHook = "hook"
)

// DefaultRejectionReason is the reason of a rejection that gave none.
const DefaultRejectionReason = "User rejected the action"

// UserRejectObservation answers an action the user (or a hook) rejected.
type UserRejectObservation struct {
	Base
	ToolName        string `json:"tool_name" required:"true"`
	ToolCallID      string `json:"tool_call_id" required:"true"`
	RejectionReason string `json:"rejection_reason"` // DefaultRejectionReason when absent on load
	RejectionSource string `json:"rejection_source"` // RejectedByUser when empty
	ActionID        string `json:"action_id" required:"true"`
}

// Error classification kinds.
const (
	ErrorKindAuth        = "auth"
	ErrorKindQuota       = "quota"
	ErrorKindRateLimit   = "rate_limit"
	ErrorKindConfig      = "config"
	ErrorKindTransient   = "transient"
	ErrorKindAgentAction = "agent_action"
	ErrorKindInternal    = "internal"
	ErrorKindUnknown     = "unknown"
)

// ErrorClassification says what kind of failure an error is and what the
// user can do about it.
type ErrorClassification struct {
	Kind       string `json:"kind" required:"true"`
	Retryable  bool   `json:"retryable" required:"true"`
	UserAction string `json:"user_action"`
	ErrorID    string `json:"error_id,omitempty"`
}

// AgentActionError is the classification of errors the model can correct.
var AgentActionError = ErrorClassification{Kind: ErrorKindAgentAction, Retryable: true, UserAction: "retry"}

// AgentErrorEvent answers a tool call that failed before or during
// execution; the model sees Error as the tool result. It is matched to its
// action by ToolCallID.
type AgentErrorEvent struct {
	Base
	ToolName       string              `json:"tool_name" required:"true"`
	ToolCallID     string              `json:"tool_call_id" required:"true"`
	Error          string              `json:"error" required:"true"`
	Classification ErrorClassification `json:"classification"`
}

// Condensation forgets events from the model's view and may insert a summary
// in their place. The log itself is never rewritten.
type Condensation struct {
	Base
	ForgottenEventIDs List[string] `json:"forgotten_event_ids"`
	Summary           *string      `json:"summary,omitempty"`
	SummaryOffset     *int         `json:"summary_offset,omitempty"`
	LLMResponseID     string       `json:"llm_response_id" required:"true"`
}

// CondensationRequest asks the condenser to run on the next step.
type CondensationRequest struct {
	Base
}

// CondensationSummaryEvent is synthesised in views where a Condensation
// placed its summary; it is never stored.
type CondensationSummaryEvent struct {
	Base
	Summary string `json:"summary" required:"true"`
}

// FullStateKey is the ConversationStateUpdateEvent key whose value is the
// whole conversation state.
const FullStateKey = "full_state"

// ConversationStateUpdateEvent reports a change of one state field, or with
// Key FullStateKey the whole state.
//
// Value is any value that encodes to JSON; a nil Value is written as absent,
// which readers take as {}. A decoded event holds the value as a
// json.RawMessage, keeping its key order and number formats exactly.
type ConversationStateUpdateEvent struct {
	Base
	Key   string `json:"key"`
	Value any    `json:"value,omitempty"`
}

// ConversationErrorEvent reports a conversation-level failure (the LLM
// failed, the budget or iteration limit was reached).
type ConversationErrorEvent struct {
	Base
	Code           string               `json:"code" required:"true"`
	Detail         string               `json:"detail" required:"true"`
	Classification *ErrorClassification `json:"classification,omitempty"`
}

// SecurityAnalysisEvent records a security analyzer's verdict on one batch
// of actions (a kind of the reference since 1.58): the analyzer's and the
// confirmation policy's kinds, the risk of each action and, optionally,
// analyzer-specific detail per action. It is written whenever an analyzer
// rated a batch, whatever the policy then decided, and never sent to the
// model.
//
// gohands wrote an event of this name before the reference had one, with
// other keys (confirmation_policy, ratings, requires_confirmation, error);
// such files are still read, converted to this form (see
// decodeLegacySecurityAnalysis).
type SecurityAnalysisEvent struct {
	Base
	// Analyzer is the analyzer's kind (PatternSecurityAnalyzer, ...).
	Analyzer string `json:"analyzer" required:"true"`
	// Policy is the confirmation policy's kind.
	Policy string `json:"policy" required:"true"`
	// Risks is the risk of each action, by ActionEvent id, in the order
	// the actions were rated.
	Risks ActionRisks `json:"risks" required:"true"`
	// Details holds analyzer-specific detail by ActionEvent id (a JSON
	// object each, kept verbatim); gohands writes {"error": ...} for the
	// actions of a batch the analyzer failed to rate (rated HIGH).
	Details ActionDetails `json:"details"`
}

// PauseEvent records that the user paused the conversation.
type PauseEvent struct {
	Base
}

// InterruptEvent records that the user interrupted the conversation.
type InterruptEvent struct {
	Base
}

// Hook event types.
const (
	HookPreToolUse       = "PreToolUse"
	HookPostToolUse      = "PostToolUse"
	HookUserPromptSubmit = "UserPromptSubmit"
	HookSessionStart     = "SessionStart"
	HookSessionEnd       = "SessionEnd"
	HookStop             = "Stop"
)

// HookExecutionEvent records one run of a hook command.
type HookExecutionEvent struct {
	Base
	HookEventType     string          `json:"hook_event_type" required:"true"`
	HookCommand       string          `json:"hook_command" required:"true"`
	ToolName          string          `json:"tool_name,omitempty"`
	Success           bool            `json:"success" required:"true"`
	Blocked           bool            `json:"blocked"`
	ExitCode          int             `json:"exit_code" required:"true"`
	Stdout            string          `json:"stdout"`
	Stderr            string          `json:"stderr"`
	Reason            string          `json:"reason,omitempty"`
	AdditionalContext string          `json:"additional_context,omitempty"`
	Error             string          `json:"error,omitempty"`
	ActionID          string          `json:"action_id,omitempty"`
	MessageID         string          `json:"message_id,omitempty"`
	HookInput         json.RawMessage `json:"hook_input,omitempty"` // JSON object, kept verbatim
}

// LLMCompletionLogEvent carries one logged LLM request and response.
type LLMCompletionLogEvent struct {
	Base
	Filename  string `json:"filename" required:"true"`
	LogData   string `json:"log_data" required:"true"`
	ModelName string `json:"model_name"`
	UsageID   string `json:"usage_id"`
}

// TokenEvent carries raw token ids (vLLM return_token_ids).
type TokenEvent struct {
	Base
	PromptTokenIDs   List[int] `json:"prompt_token_ids" required:"true"`
	ResponseTokenIDs List[int] `json:"response_token_ids" required:"true"`
}

// ACPToolCallEvent reports a tool call made inside an ACP agent.
type ACPToolCallEvent struct {
	Base
	ToolCallID string          `json:"tool_call_id" required:"true"`
	Title      string          `json:"title" required:"true"`
	Status     string          `json:"status,omitempty"`
	ToolKind   string          `json:"tool_kind,omitempty"`
	RawInput   json.RawMessage `json:"raw_input,omitempty"`  // any JSON, kept verbatim
	RawOutput  json.RawMessage `json:"raw_output,omitempty"` // any JSON, kept verbatim
	Content    json.RawMessage `json:"content,omitempty"`    // JSON array of ACP content blocks
	IsError    bool            `json:"is_error"`
}

// StreamingDeltaEvent carries token deltas to live subscribers; it is never
// stored.
type StreamingDeltaEvent struct {
	Base
	Content          *string `json:"content,omitempty"`
	ReasoningContent *string `json:"reasoning_content,omitempty"`
	// ItemID is the id the step's reply will be stored with (its message,
	// or its first action), and Attempt counts the model call's retries
	// that streamed again: a live view opens a slot per item and closes it
	// when the event with that id arrives. Neither is on the wire of this
	// event.
	ItemID  string `json:"-"`
	Attempt int    `json:"-"`
}

// ServerErrorEvent reports an agent-server error on a socket; never stored.
type ServerErrorEvent struct {
	Base
	Code   string `json:"code" required:"true"`
	Detail string `json:"detail" required:"true"`
}

// Kind names of the package's events: the "kind" each is written with,
// the reference's class name. Each is Kind plus the type's name without
// "Event"; compare Entry.Kind and Query.Kind with these.
const (
	KindSystemPrompt            = "SystemPromptEvent"
	KindMessage                 = "MessageEvent"
	KindAction                  = "ActionEvent"
	KindObservation             = "ObservationEvent"
	KindUserRejectObservation   = "UserRejectObservation"
	KindAgentError              = "AgentErrorEvent"
	KindCondensation            = "Condensation"
	KindCondensationRequest     = "CondensationRequest"
	KindCondensationSummary     = "CondensationSummaryEvent"
	KindConversationStateUpdate = "ConversationStateUpdateEvent"
	KindConversationError       = "ConversationErrorEvent"
	KindPause                   = "PauseEvent"
	KindInterrupt               = "InterruptEvent"
	KindHookExecution           = "HookExecutionEvent"
	KindLLMCompletionLog        = "LLMCompletionLogEvent"
	KindToken                   = "TokenEvent"
	KindACPToolCall             = "ACPToolCallEvent"
	KindStreamingDelta          = "StreamingDeltaEvent"
	KindServerError             = "ServerErrorEvent"

	// KindSecurityAnalysis is new in the reference 1.58: a reference
	// client of 1.43.1 fails to decode it.
	KindSecurityAnalysis = "SecurityAnalysisEvent"
)

func init() {
	RegisterKind[SystemPromptEvent](KindSystemPrompt)
	RegisterKind[MessageEvent](KindMessage)
	RegisterKind[ActionEvent](KindAction)
	RegisterKind[ObservationEvent](KindObservation)
	RegisterKind[UserRejectObservation](KindUserRejectObservation)
	RegisterKind[AgentErrorEvent](KindAgentError)
	RegisterKind[Condensation](KindCondensation)
	RegisterKind[CondensationRequest](KindCondensationRequest)
	RegisterKind[CondensationSummaryEvent](KindCondensationSummary)
	RegisterKind[ConversationStateUpdateEvent](KindConversationStateUpdate)
	RegisterKind[ConversationErrorEvent](KindConversationError)
	RegisterKind[PauseEvent](KindPause)
	RegisterKind[InterruptEvent](KindInterrupt)
	RegisterKind[HookExecutionEvent](KindHookExecution)
	RegisterKind[LLMCompletionLogEvent](KindLLMCompletionLog)
	RegisterKind[TokenEvent](KindToken)
	RegisterKind[ACPToolCallEvent](KindACPToolCall)
	RegisterKind[StreamingDeltaEvent](KindStreamingDelta)
	RegisterKind[ServerErrorEvent](KindServerError)
	RegisterKind[SecurityAnalysisEvent](KindSecurityAnalysis)
}
