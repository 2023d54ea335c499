package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gohands/gohands/event"
)

// Client tools are defined by a client of the agent server in its start
// request (client_tools): a name, a description and a JSON schema, no
// code. The model is offered them like any tool; a call is an ActionEvent
// the client sees over its socket and acts on, and the tool answers at
// once with an acknowledgment, as the reference 1.58.2 does: the client
// sends what came of it as a message when it has something to say.
//
// The reference keeps a client tool's spec in the agent's tool list, as
// params {"spec": ...} of a tool named after it, so a resumed conversation
// finds it there; Resolve makes a client tool of any such spec whose name
// is not registered.

// Kinds of client tools, as the reference names them. A call's action kind
// is ClientActionKindPrefix followed by the tool's name.
const (
	ClientToolKind         = "ClientTool"
	ClientObservationKind  = "ClientToolObservation"
	ClientActionKindPrefix = "ClientAction_"
	// ClientAck is the observation's text.
	ClientAck = "Tool call dispatched to client."
)

func init() { event.RegisterKind[ClientObservation](ClientObservationKind) }

// ClientSpec is the reference's ClientToolSpec.
type ClientSpec struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Parameters is the JSON schema of the arguments, an object schema
	// ({"type": "object", "properties": {}} when absent).
	Parameters  json.RawMessage        `json:"parameters"`
	Annotations *event.ToolAnnotations `json:"annotations"`
}

// ClientObservation acknowledges a client tool's call.
type ClientObservation struct {
	event.ObservationBase
}

// ParseClientSpec decodes and checks one client tool spec as the
// reference does: name and description required, parameters an object
// schema, no other key. The error names the offending field.
func ParseClientSpec(data []byte) (*ClientSpec, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil || fields == nil {
		return nil, errors.New("a client tool spec must be an object")
	}
	for k := range fields {
		switch k {
		case "name", "description", "parameters", "annotations":
		default:
			return nil, fmt.Errorf("%s: unknown field", k)
		}
	}
	var s ClientSpec
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	switch {
	case s.Name == "":
		return nil, errors.New("name: required")
	case s.Description == "":
		return nil, errors.New("description: required")
	}
	if len(bytes.TrimSpace(s.Parameters)) == 0 || bytes.Equal(bytes.TrimSpace(s.Parameters), []byte("null")) {
		s.Parameters = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	var typ struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(s.Parameters, &typ); err != nil || typ.Type != "object" {
		return nil, fmt.Errorf("parameters: must be an object JSON Schema (got type=%v)", typ.Type)
	}
	if _, err := DecodeSchema(s.Parameters); err != nil {
		return nil, fmt.Errorf("parameters: %w", err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, s.Parameters); err != nil {
		return nil, fmt.Errorf("parameters: %w", err)
	}
	s.Parameters = compact.Bytes()
	return &s, nil
}

// Spec returns the agent's tool spec of s, as the reference stores it.
func (s *ClientSpec) Spec() Spec {
	var params map[string]any
	b, _ := json.Marshal(s)
	_ = json.Unmarshal(b, &params)
	return Spec{Name: s.Name, Params: event.Map[string, any]{"spec": params}}
}

// ClientSpecOf returns the client tool spec spec carries, or nil: its
// params' "spec" is one whose name is spec's.
func ClientSpecOf(spec Spec) *ClientSpec {
	raw, ok := spec.Params["spec"]
	if !ok {
		return nil
	}
	if _, isMap := raw.(map[string]any); !isMap {
		return nil
	}
	data, err := json.Marshal(raw)
	if err != nil {
		return nil
	}
	cs, err := ParseClientSpec(data)
	if err != nil || cs.Name != spec.Name {
		return nil
	}
	return cs
}

// clientTool is a client tool as a Tool.
type clientTool struct {
	spec   *ClientSpec
	schema map[string]any
}

// NewClientTool returns the tool of s, which ParseClientSpec made.
func NewClientTool(s *ClientSpec) (Tool, error) {
	schema, err := DecodeSchema(s.Parameters)
	if err != nil {
		return nil, fmt.Errorf("client tool %q: parameters: %w", s.Name, err)
	}
	return &clientTool{spec: s, schema: schema}, nil
}

func (t *clientTool) Name() string        { return t.spec.Name }
func (t *clientTool) Description() string { return t.spec.Description }

// Annotations are the client's, nil when it gave none: the call may do
// anything on the client's side, so it is not assumed read-only.
func (t *clientTool) Annotations() *event.ToolAnnotations {
	if t.spec.Annotations == nil {
		return nil
	}
	a := *t.spec.Annotations
	return &a
}

func (t *clientTool) Definition() event.ToolDefinition {
	title := t.spec.Name
	if a := t.spec.Annotations; a != nil && a.Title != "" {
		title = a.Title
	}
	return event.ToolDefinition{
		Description:     t.spec.Description,
		ActionType:      ClientActionKindPrefix + t.spec.Name,
		ObservationType: ClientObservationKind,
		Annotations:     t.Annotations(),
		ClientToolName:  t.spec.Name,
		InputSchema:     t.spec.Parameters,
		Kind:            ClientToolKind,
		Title:           title,
	}
}

// InputSchema is the client's schema as given: its constraints are the
// client's contract, so it is not simplified.
func (t *clientTool) InputSchema() map[string]any {
	s, _ := DecodeSchema(t.spec.Parameters)
	return s
}

// ParseAction validates args against the client's schema; the action is
// the arguments as the model wrote them with the kind last, as the
// reference writes a ClientAction_<name>.
func (t *clientTool) ParseAction(args json.RawMessage) (event.Action, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if err := Validate(t.schema, args); err != nil {
		return nil, err
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, args); err != nil || compact.Len() < 2 || compact.Bytes()[0] != '{' {
		return nil, &FieldError{Msg: "arguments must be a JSON object"}
	}
	kind := ClientActionKindPrefix + t.spec.Name
	raw := compact.Bytes()[:compact.Len()-1]
	if len(raw) > 1 {
		raw = append(raw, ',')
	}
	k, _ := json.Marshal(kind)
	raw = append(append(append(raw, `"kind":`...), k...), '}')
	return &event.Unknown{KindName: kind, Raw: raw}, nil
}

// Execute acknowledges the call: the client carries it out.
func (t *clientTool) Execute(context.Context, event.Action) (event.Observation, error) {
	return &ClientObservation{event.ObservationBase{Content: event.List[event.Content]{event.Text(ClientAck)}}}, nil
}
