package tool

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gohands/gohands/event"
)

// ResponseSchemaParam is the spec parameter that asks for structured output:
// a JSON schema of an object whose fields are added to the tool's
// arguments (reference: Tool(params={"response_schema": ...})). Resolve
// handles it for every tool.
const ResponseSchemaParam = "response_schema"

// supportedResponseKeys are the top-level keywords a response schema may
// use: it must be a plain object with named fields.
var supportedResponseKeys = map[string]bool{
	"$anchor": true, "$comment": true, "$defs": true, "$dynamicAnchor": true, "$id": true,
	"$schema": true, "$vocabulary": true, "additionalProperties": true, "default": true,
	"deprecated": true, "description": true, "examples": true, "properties": true,
	"readOnly": true, "required": true, "title": true, "type": true, "writeOnly": true,
}

// reservedResponseFields cannot be response fields: the agent or the
// event model already uses them.
var reservedResponseFields = []string{"kind", MetaSecurityRisk, "structured_output", MetaSummary}

// responseTool is a tool with structured-output fields added to its
// arguments.
type responseTool struct {
	Tool
	response map[string]any // simplified response schema
	merged   map[string]any // the tool's schema plus the response fields
}

// WithResponseSchema returns t with the fields of schema, a JSON schema of
// an object, added to its arguments, so that calling t also hands back
// structured output (typically on finish: the model's final answer as
// data). The fields are validated with the call and removed before t's own
// ParseAction sees the arguments; ResponseOf reads them back from the
// call's recorded arguments.
//
// schema must have named properties, no additionalProperties other than
// false, no required field it does not define, and no field named kind,
// security_risk, structured_output, summary or like one of t's arguments.
// As in the reference, $refs are inlined; unlike it, the response is
// validated with this package's simplified vocabulary (type, enum,
// required, items, properties), not full JSON Schema.
func WithResponseSchema(t Tool, schema map[string]any) (Tool, error) {
	if schema["type"] != "object" {
		return nil, fmt.Errorf("response_schema must describe a JSON object")
	}
	var unsupported []string
	for k := range schema {
		if !supportedResponseKeys[k] {
			unsupported = append(unsupported, k)
		}
	}
	if len(unsupported) > 0 {
		sort.Strings(unsupported)
		return nil, fmt.Errorf("response_schema has unsupported top-level keywords: %s", pyList(unsupported))
	}
	if ap, ok := schema["additionalProperties"]; ok && ap != false {
		return nil, fmt.Errorf("response_schema does not support dynamic fields via additionalProperties")
	}
	simple := Simplify(schema)
	props := PropertiesOf(simple)
	if len(props) == 0 {
		return nil, fmt.Errorf("response_schema must define named properties")
	}
	var bad []string
	for _, r := range RequiredOf(simple) {
		if _, ok := props.Get(r); !ok {
			bad = append(bad, r)
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("response_schema required fields %s must be named properties", pyList(bad))
	}
	own := PropertiesOf(inputSchema(t))
	var reserved, clash []string
	for _, p := range props {
		if slices.Contains(reservedResponseFields, p.Name) {
			reserved = append(reserved, p.Name)
		} else if _, ok := own.Get(p.Name); ok {
			clash = append(clash, p.Name)
		}
	}
	if len(reserved) > 0 {
		return nil, fmt.Errorf("response_schema fields %s are reserved", pyList(reserved))
	}
	if len(clash) > 0 {
		return nil, fmt.Errorf("response_schema fields %s collide with the arguments of tool %s", pyList(clash), t.Name())
	}
	if schema["additionalProperties"] == false {
		simple["additionalProperties"] = false
	}

	merged := cloneSchema(inputSchema(t))
	if merged == nil {
		merged = map[string]any{"type": "object"}
	}
	merged["properties"] = append(append(Properties{}, own...), cloneValue(props).(Properties)...)
	req := slices.Clone(RequiredOf(merged))
	for _, r := range RequiredOf(simple) {
		if !slices.Contains(req, r) {
			req = append(req, r)
		}
	}
	if len(req) > 0 {
		merged["required"] = req
	}
	if simple["additionalProperties"] == false {
		merged["additionalProperties"] = false
	}
	return &responseTool{Tool: t, response: simple, merged: merged}, nil
}

// InputSchema implements Tool: the tool's arguments and the response
// fields.
func (r *responseTool) InputSchema() map[string]any { return cloneSchema(r.merged) }

func (r *responseTool) sharedSchema() map[string]any { return r.merged }

// ParseAction implements Tool. The response fields are validated and
// removed; the rest goes to the tool.
func (r *responseTool) ParseAction(args json.RawMessage) (event.Action, error) {
	own, _, err := r.split(args)
	if err != nil {
		return nil, err
	}
	return r.Tool.ParseAction(own)
}

// Close closes the wrapped tool if it holds resources.
func (r *responseTool) Close() error {
	if c, ok := r.Tool.(Closer); ok {
		return c.Close()
	}
	return nil
}

// Unwrap returns the tool without the response fields.
func (r *responseTool) Unwrap() Tool { return r.Tool }

// split separates the response fields of args from the tool's own and
// validates them.
func (r *responseTool) split(args json.RawMessage) (own json.RawMessage, response map[string]any, err error) {
	o, err := parseObject(args)
	if err != nil {
		return nil, nil, &FieldError{Msg: fmt.Sprintf("arguments must be a JSON object: %v", err)}
	}
	props := PropertiesOf(r.response)
	var mine, theirs object
	for _, m := range o {
		if _, ok := props.Get(m.key); ok {
			theirs = append(theirs, m)
		} else {
			mine = append(mine, m)
		}
	}
	v, err := decodeArgs(theirs.marshal())
	if err != nil {
		return nil, nil, err
	}
	if err := validateValue(r.response, v); err != nil {
		msg := strings.ReplaceAll(err.Error(), "\n", "; ")
		return nil, nil, &FieldError{Msg: "response_schema validation failed: " + msg}
	}
	var out map[string]any
	if err := json.Unmarshal(theirs.marshal(), &out); err != nil {
		return nil, nil, err
	}
	return mine.marshal(), out, nil
}

// ResponseOf returns the structured output of a call of t, from the
// arguments it was called with (an ActionEvent's tool_call.arguments). It
// returns nil and no error when t has no response schema.
func ResponseOf(t Tool, arguments string) (map[string]any, error) {
	r, ok := t.(*responseTool)
	if !ok {
		return nil, nil
	}
	_, out, err := r.split(json.RawMessage(arguments))
	return out, err
}
