package conversation_test

import (
	"encoding/json"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/secret"
)

// testAgent stands in for the real Agent kind, which arrives in a later
// package. It keeps the LLM config as raw JSON, with the api key as a secret
// so the state's secret handling can be tested.
type testAgent struct {
	LLM    json.RawMessage `json:"llm"`
	Tools  []any           `json:"tools"`
	APIKey secret.String   `json:"api_key,omitzero"`
}

func (a *testAgent) MapSecrets(f func(secret.String) (secret.String, error)) (any, error) {
	c := *a
	if !a.APIKey.IsZero() {
		k, err := f(a.APIKey)
		if err != nil {
			return nil, err
		}
		c.APIKey = k
	}
	return &c, nil
}

// terminalAction and terminalObservation have the reference's fields, so
// the Python SDK can read the logs the tests write.
type terminalAction struct {
	Command string   `json:"command"`
	IsInput bool     `json:"is_input"`
	Timeout *float64 `json:"timeout,omitempty"`
	Reset   bool     `json:"reset"`
}

type terminalMetadata struct {
	ExitCode   int    `json:"exit_code"`
	PID        int    `json:"pid"`
	Username   string `json:"username,omitempty"`
	Hostname   string `json:"hostname,omitempty"`
	WorkingDir string `json:"working_dir,omitempty"`
	Prefix     string `json:"prefix"`
	Suffix     string `json:"suffix"`
}

type terminalObservation struct {
	event.ObservationBase
	Command  *string          `json:"command"`
	ExitCode *int             `json:"exit_code,omitempty"`
	Timeout  bool             `json:"timeout"`
	Metadata terminalMetadata `json:"metadata"`
}

func init() {
	event.RegisterKind[testAgent]("Agent")
	event.RegisterKind[terminalAction]("TerminalAction")
	event.RegisterKind[terminalObservation]("TerminalObservation")
}
