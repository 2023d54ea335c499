package llmtest

import (
	"fmt"
	"net/http"
)

// writeFailure writes f in the error format of wire.
func writeFailure(rw http.ResponseWriter, wire Wire, f *Failure) {
	status, body := failureBody(wire, f)
	if f.RetryAfter != "" {
		rw.Header().Set("Retry-After", f.RetryAfter)
	}
	switch wire {
	case WireAnthropic, WireVertexAnthropic:
		rw.Header().Set("request-id", "req_llmtest")
	case WireBedrock:
		rw.Header().Set("X-Amzn-Requestid", "llmtest-request")
		rw.Header().Set("X-Amzn-Errortype", bedrockException(status, f.ContextWindow)+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	}
	if f.Body != "" {
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(status)
		rw.Write([]byte(f.Body))
		return
	}
	writeJSON(rw, status, body)
}

// failureBody returns the status and the error body of f in the format of
// wire.
func failureBody(wire Wire, f *Failure) (int, any) {
	status := f.Status
	if status == 0 {
		status = http.StatusBadRequest
	}
	msg := f.Message
	var body any
	switch wire {
	case WireChat, WireResponses:
		typ, code := openAIErrorType(status)
		var param any
		if f.ContextWindow {
			typ, code = "invalid_request_error", "context_length_exceeded"
			if msg == "" {
				if wire == WireResponses {
					msg = "Your input exceeds the context window of this model. Please adjust your input and try again."
					param = "input"
				} else {
					msg = "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages."
					param = "messages"
				}
			}
		}
		if msg == "" {
			msg = defaultMessage(status)
		}
		body = map[string]any{"error": map[string]any{
			"message": msg, "type": typ, "param": param, "code": code,
		}}
	case WireAnthropic, WireVertexAnthropic:
		typ := anthropicErrorType(status)
		if f.ContextWindow && msg == "" {
			msg = "prompt is too long: 208310 tokens > 200000 maximum"
		}
		if msg == "" {
			msg = defaultMessage(status)
		}
		body = map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
	case WireBedrock:
		if f.ContextWindow && msg == "" {
			msg = "Input is too long for requested model."
		}
		if msg == "" {
			msg = defaultMessage(status)
		}
		body = map[string]any{"message": msg}
	case WireGemini, WireVertexGemini:
		if f.ContextWindow && msg == "" {
			msg = "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."
		}
		if msg == "" {
			msg = defaultMessage(status)
		}
		body = map[string]any{"error": map[string]any{
			"code": status, "message": msg, "status": googleStatus(status),
		}}
	}
	return status, body
}

// streamFailure ends a stream with f, sent the way wire reports errors
// inside a stream that began with 200.
func streamFailure(e *sse, wire Wire, f *Failure) {
	if f.Body != "" {
		e.event("", f.Body)
		return
	}
	_, body := failureBody(wire, f)
	switch wire {
	case WireAnthropic, WireVertexAnthropic:
		e.event("error", body)
	case WireResponses:
		inner := body.(map[string]any)["error"].(map[string]any)
		e.event("error", map[string]any{"type": "error", "code": inner["code"], "message": inner["message"], "param": inner["param"]})
	default:
		e.event("", body)
	}
}

func defaultMessage(status int) string {
	return fmt.Sprintf("llmtest: scripted %d %s", status, http.StatusText(status))
}

// openAIErrorType returns OpenAI's error type and code for a status.
func openAIErrorType(status int) (typ string, code any) {
	switch status {
	case http.StatusUnauthorized:
		return "invalid_request_error", "invalid_api_key"
	case http.StatusForbidden:
		return "invalid_request_error", "unsupported_country_region_territory"
	case http.StatusNotFound:
		return "invalid_request_error", "model_not_found"
	case http.StatusTooManyRequests:
		return "requests", "rate_limit_exceeded"
	}
	if status >= 500 {
		return "server_error", nil
	}
	return "invalid_request_error", nil
}

// anthropicErrorType returns Anthropic's error type for a status.
func anthropicErrorType(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusPaymentRequired:
		return "billing_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusGatewayTimeout:
		return "timeout_error"
	case 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

// googleStatus returns the google.rpc status name Gemini reports for an
// HTTP status.
func googleStatus(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusConflict:
		return "ABORTED"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusNotImplemented:
		return "UNIMPLEMENTED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	case http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED"
	}
	if status >= 500 {
		return "INTERNAL"
	}
	return "FAILED_PRECONDITION"
}

// bedrockException returns the exception Bedrock names a failure of
// this status with.
func bedrockException(status int, contextWindow bool) string {
	switch status {
	case http.StatusUnauthorized:
		return "UnrecognizedClientException"
	case http.StatusForbidden:
		return "AccessDeniedException"
	case http.StatusNotFound:
		return "ResourceNotFoundException"
	case http.StatusRequestTimeout:
		return "ModelTimeoutException"
	case http.StatusFailedDependency:
		return "ModelErrorException"
	case http.StatusTooManyRequests:
		return "ThrottlingException"
	case http.StatusServiceUnavailable:
		return "ServiceUnavailableException"
	}
	if status >= 500 {
		return "InternalServerException"
	}
	return "ValidationException"
}
