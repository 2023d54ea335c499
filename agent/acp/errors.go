package acp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
)

// Error codes of the ConversationErrorEvents an ACP agent causes, as the
// reference names them.
const (
	CodeSpawn          = "ACPSpawnError"
	CodeInit           = "ACPInitError"
	CodeAuthRequired   = "ACPAuthRequired"
	CodeStartupTimeout = "ACPStartupTimeout"
	CodePrompt         = "ACPPromptError"
	CodeUsagePolicy    = "UsagePolicyRefusal"
)

// Error is a failure of the ACP server. The conversation records it as a
// ConversationErrorEvent with Code.
type Error struct {
	Code   string
	Detail string
	Err    error
}

func (e *Error) Error() string { return e.Code + ": " + e.Detail }

// ErrorCode is what the conversation names the error by.
func (e *Error) ErrorCode() string { return e.Code }

func (e *Error) Unwrap() error { return e.Err }

// authMarkers are what servers put in errors that are really credential
// problems (an upstream 401 collapsed into -32603).
var (
	authMarkers = []string{"authentication required", "unauthorized", "invalid api key", "invalid_api_key", "not logged in", "please log in", "/login"}
	authStatus  = regexp.MustCompile(`\b(401|403)\b`)
)

// authError reports whether err is a credential failure: the protocol's
// -32000, or a message that says so.
func authError(err error) bool {
	var re *sdk.RequestError
	if errors.As(err, &re) && re.Code == -32000 {
		return true
	}
	text := strings.ToLower(err.Error())
	for _, m := range authMarkers {
		if strings.Contains(text, m) {
			return true
		}
	}
	return authStatus.MatchString(text)
}

// initCode names a failure to start the server.
func initCode(err error) string {
	switch {
	case errors.Is(err, os.ErrNotExist), errors.Is(err, os.ErrPermission):
		return CodeSpawn
	case errors.Is(err, context.DeadlineExceeded):
		return CodeStartupTimeout
	case authError(err):
		return CodeAuthRequired
	}
	return CodeInit
}

// turnCode names a failure of a prompt turn.
func turnCode(err error) string {
	text := strings.ToLower(err.Error())
	switch {
	case strings.Contains(text, "usage policy") || strings.Contains(text, "content policy"):
		return CodeUsagePolicy
	case authError(err):
		return CodeAuthRequired
	}
	return CodePrompt
}

// detail renders err for a ConversationErrorEvent: a JSON-RPC error with
// its code, message and the data servers put the real cause in, capped at
// the reference's 500 characters. Secrets are masked by the conversation
// when the event is emitted.
func detail(err error) string {
	var re *sdk.RequestError
	var s string
	if errors.As(err, &re) {
		s = "[" + itoa(re.Code) + "] " + re.Message
		if d := dataText(re.Data); d != "" && d != re.Message {
			s += ": " + d
		}
	} else {
		s = err.Error()
	}
	if len(s) > 500 {
		s = s[:500]
	}
	return s
}

func dataText(data any) string {
	switch d := data.(type) {
	case nil:
		return ""
	case string:
		return d
	case map[string]any:
		for _, k := range []string{"message", "details", "detail", "error"} {
			if v, ok := d[k].(string); ok && v != "" {
				return v
			}
		}
	}
	b, _ := json.Marshal(data)
	return string(b)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// notFound is the protocol's "Resource not found" error (-32002).
func notFound(what string) *sdk.RequestError {
	return &sdk.RequestError{Code: -32002, Message: "Resource not found", Data: map[string]any{"uri": what}}
}
