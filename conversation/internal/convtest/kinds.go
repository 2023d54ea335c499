package convtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/secret"
)

// Agent stands in for the real Agent kind, which arrives in a later
// package. It keeps the LLM config and any other field as raw JSON (so the
// reference's full Agent JSON loads), with an api key as a secret so the
// state's secret handling can be tested.
type Agent struct {
	LLM    json.RawMessage
	Tools  []any
	APIKey secret.String
	Extra  map[string]json.RawMessage
}

func (a *Agent) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"llm":`)
	b.Write(a.LLM)
	tools, err := json.Marshal(event.List[any](a.Tools))
	if err != nil {
		return nil, err
	}
	b.WriteString(`,"tools":`)
	b.Write(tools)
	if !a.APIKey.IsZero() {
		k, _ := json.Marshal(a.APIKey)
		b.WriteString(`,"api_key":`)
		b.Write(k)
	}
	for _, k := range slices.Sorted(maps.Keys(a.Extra)) {
		fmt.Fprintf(&b, ",%q:%s", k, a.Extra[k])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (a *Agent) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*a = Agent{LLM: m["llm"]}
	if err := json.Unmarshal(m["tools"], &a.Tools); err != nil {
		return fmt.Errorf("tools: %w", err)
	}
	if k, ok := m["api_key"]; ok {
		if err := json.Unmarshal(k, &a.APIKey); err != nil {
			return err
		}
	}
	delete(m, "llm")
	delete(m, "tools")
	delete(m, "api_key")
	delete(m, "kind")
	if len(m) > 0 {
		a.Extra = m
	}
	return nil
}

func (a *Agent) MapSecrets(f func(secret.String) (secret.String, error)) (any, error) {
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

// TerminalAction and TerminalObservation have the reference's fields, so
// the Python SDK can read the logs the tests write.
type TerminalAction struct {
	Command string   `json:"command"`
	IsInput bool     `json:"is_input"`
	Timeout *float64 `json:"timeout,omitempty"`
	Reset   bool     `json:"reset"`
}

type TerminalMetadata struct {
	ExitCode   int    `json:"exit_code"`
	PID        int    `json:"pid"`
	Username   string `json:"username,omitempty"`
	Hostname   string `json:"hostname,omitempty"`
	WorkingDir string `json:"working_dir,omitempty"`
	PyPath     string `json:"py_interpreter_path,omitempty"`
	Prefix     string `json:"prefix"`
	Suffix     string `json:"suffix"`
}

type TerminalObservation struct {
	event.ObservationBase
	Command  *string          `json:"command"`
	ExitCode *int             `json:"exit_code,omitempty"`
	Timeout  bool             `json:"timeout"`
	Metadata TerminalMetadata `json:"metadata"`
	SaveDir  string           `json:"full_output_save_dir,omitempty"`
}

func init() {
	event.RegisterKind[Agent]("Agent")
	event.RegisterKind[TerminalAction]("TerminalAction")
	event.RegisterKind[TerminalObservation]("TerminalObservation")
}
