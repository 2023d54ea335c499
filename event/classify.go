package event

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// User actions of an ErrorClassification.
const (
	UserActionNone     = "none"
	UserActionRetry    = "retry"
	UserActionSettings = "settings"
)

// unknownError is the classification of an error nothing more is known
// about; AgentErrorEvent defaults to it.
var unknownError = ErrorClassification{Kind: ErrorKindUnknown, UserAction: UserActionNone}

// classificationFields is ErrorClassification without its methods, for
// the codec.
type classificationFields ErrorClassification

// MarshalJSON implements json.Marshaler. A zero classification is written as
// unknownError and an empty UserAction as "none", the reference's defaults.
func (c ErrorClassification) MarshalJSON() ([]byte, error) { return c.AppendJSON(nil) }

// AppendJSON implements JSONAppender.
func (c ErrorClassification) AppendJSON(b []byte) ([]byte, error) {
	if c.Kind == "" {
		c.Kind, c.Retryable = unknownError.Kind, unknownError.Retryable
	}
	if c.UserAction == "" {
		c.UserAction = UserActionNone
	}
	return AppendJSON(b, classificationFields(c))
}

// UnmarshalJSON implements json.Unmarshaler: strict, with kind and retryable
// required and the vocabulary checked, as in the reference.
func (c *ErrorClassification) UnmarshalJSON(data []byte) error {
	w := classificationFields{UserAction: UserActionNone}
	if err := unmarshalStrict(data, &w); err != nil {
		return fmt.Errorf("classification: %w", err)
	}
	*c = ErrorClassification(w)
	return c.validate()
}

func (c ErrorClassification) validate() error {
	switch c.Kind {
	case ErrorKindAuth, ErrorKindQuota, ErrorKindRateLimit, ErrorKindConfig, ErrorKindTransient,
		ErrorKindAgentAction, ErrorKindInternal, ErrorKindUnknown:
	default:
		return fmt.Errorf("classification: invalid kind %q", c.Kind)
	}
	switch c.UserAction {
	case UserActionNone, UserActionRetry, UserActionSettings:
	default:
		return fmt.Errorf("classification: invalid user_action %q", c.UserAction)
	}
	return nil
}

var _ json.Marshaler = ErrorClassification{}

// ClassifyError derives the classification of a conversation error from its
// code (usually an exception class name) and detail text, by the
// reference's rules: codes that are conclusive on their own first, then
// phrases in the detail, then generic wrapper codes.
func ClassifyError(code, detail string) ErrorClassification {
	for _, r := range conclusiveCodes {
		if slices.Contains(r.codes, code) {
			return r.class
		}
	}
	text := strings.ToLower(detail)
	for _, r := range detailPhrases {
		for _, p := range r.phrases {
			if strings.Contains(text, p) {
				return r.class
			}
		}
	}
	if slices.Contains(transientWrapperCodes, code) {
		return transientError
	}
	return unknownError
}

var (
	authError      = ErrorClassification{Kind: ErrorKindAuth, UserAction: UserActionSettings}
	quotaError     = ErrorClassification{Kind: ErrorKindQuota, UserAction: UserActionSettings}
	rateLimitError = ErrorClassification{Kind: ErrorKindRateLimit, Retryable: true, UserAction: UserActionRetry}
	configError    = ErrorClassification{Kind: ErrorKindConfig, UserAction: UserActionSettings}
	transientError = ErrorClassification{Kind: ErrorKindTransient, Retryable: true, UserAction: UserActionRetry}
	internalError  = ErrorClassification{Kind: ErrorKindInternal, UserAction: UserActionNone}
)

var conclusiveCodes = []struct {
	codes []string
	class ErrorClassification
}{
	{[]string{"LLMAuthenticationError", "ACPAuthRequired"}, authError},
	{[]string{"LLMRateLimitError"}, rateLimitError},
	{[]string{"MaxBudgetReached"}, quotaError},
	{[]string{"LLMBadRequestError", "ACPInitError", "ACPSpawnError", "ACPPromptError", "NotFoundError", "LibTmuxException"}, configError},
	// Context-window trouble is recoverable by condensing.
	{[]string{"LLMContextWindowExceedError", "LLMMalformedConversationHistoryError"}, AgentActionError},
	// Run limits are expected outcomes, not faults.
	{[]string{"MaxIterationsReached", "ConversationOwnershipLostError"}, ErrorClassification{Kind: ErrorKindAgentAction, UserAction: UserActionNone}},
	{[]string{"KeyError", "AssertionError", "PydanticSerializationError", "AttributeError", "TypeError"}, internalError},
}

var detailPhrases = []struct {
	phrases []string
	class   ErrorClassification
}{
	{[]string{"invalid api key", "incorrect api key", "authentication required", "invalid bearer token",
		"invalid proxy server token", "unauthorized", "error code: 401", `status": 401`, "token_not_found",
		"api key is missing"}, authError},
	{[]string{"weekly usage limit", "daily quota", "session usage limit", "insufficient balance",
		"more credits", "budget has been exceeded"}, quotaError},
	{[]string{"rate limit", "error code: 429", `status": 429`}, rateLimitError},
	{[]string{"provider not provided", "no models loaded", "does not support thinking",
		"model is no longer available", "model not found", "invalid params", "inactive_service",
		"powershell is not available"}, configError},
	{[]string{"timeout", "connection error", "connection closed", "service temporarily unavailable",
		"bad gateway", "cloudflare", "cannot connect", "name or service not known", "error code: 5"}, transientError},
	{[]string{"on_token callback", "duplicate tool names", "list_tools", "on_tools_changed",
		"surrogates not allowed"}, internalError},
}

var transientWrapperCodes = []string{
	"LLMServiceUnavailableError", "LLMTimeoutError", "ReadTimeout", "LLMNoResponseError",
	"MCPTimeoutError", "BadGatewayError", "HTTPStatusError", "RequestError", "CloudflareError",
	"OpenAIError", "APIError", "BaseLLMException", "AnthropicError", "OpenRouterException", "OllamaError",
}
