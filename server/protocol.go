package server

import "github.com/gohands/gohands/api/protocol"

// The request and response bodies of the routes, shared with the clients
// (package protocol). The OpenAPI document names them Server... as it
// did when they were declared here (see openAPI).
type (
	startRequest          = protocol.StartRequest
	initialMessage        = protocol.InitialMessage
	conversationInfo      = protocol.ConversationInfo
	conversationPage      = protocol.ConversationPage
	updateRequest         = protocol.UpdateRequest
	secretsRequest        = protocol.SecretsRequest
	policyRequest         = protocol.PolicyRequest
	analyzerRequest       = protocol.AnalyzerRequest
	askResponse           = protocol.AskResponse
	eventPage             = protocol.EventPage
	confirmationRequest   = protocol.ConfirmationRequest
	forkRequest           = protocol.ForkRequest
	navigateRequest       = protocol.NavigateRequest
	switchLLMRequest      = protocol.SwitchLLMRequest
	switchProfileRequest  = protocol.SwitchProfileRequest
	loadPluginRequest     = protocol.LoadPluginRequest
	generateTitleRequest  = protocol.GenerateTitleRequest
	generateTitleResponse = protocol.GenerateTitleResponse
	startGoalRequest      = protocol.StartGoalRequest
	errorDetail           = protocol.ErrorDetail
	validationError       = protocol.ValidationError
	validationErrors      = protocol.ValidationErrors
	successResponse       = protocol.SuccessResponse
	statusResponse        = protocol.StatusResponse
	serverInfo            = protocol.ServerInfo
	bashRequest           = protocol.BashRequest
	bashPage              = protocol.BashPage
	clearedResponse       = protocol.ClearedResponse
)
