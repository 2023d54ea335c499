package tool

import (
	"encoding/json"

	"github.com/gohands/gohands/event"
)

// Meta-argument names: arguments the agent adds to every tool's schema and
// removes from the arguments before the tool sees them.
const (
	MetaSecurityRisk = "security_risk"
	MetaSummary      = "summary"
)

// DefaultAnnotations returns the annotations of a tool that declares none,
// as the MCP specification (and the reference) define them: not read-only,
// destructive, not idempotent, open-world.
func DefaultAnnotations() event.ToolAnnotations {
	return event.ToolAnnotations{DestructiveHint: true, OpenWorldHint: true}
}

// AnnotationsOf returns t's annotations, or the defaults when it has none.
func AnnotationsOf(t Tool) event.ToolAnnotations {
	if a := t.Annotations(); a != nil {
		return *a
	}
	return DefaultAnnotations()
}

// ReadOnly reports whether t declares itself read-only. Read-only tools are
// not asked for a security risk.
func ReadOnly(t Tool) bool {
	a := t.Annotations()
	return a != nil && a.ReadOnlyHint
}

// HasOwnSummary reports whether t's own arguments include "summary", in
// which case the summary meta-argument is not added and the model's
// "summary" belongs to the tool.
func HasOwnSummary(t Tool) bool {
	_, ok := PropertiesOf(inputSchema(t)).Get(MetaSummary)
	return ok
}

// inputSchema returns t's input schema for reading, without the copy
// InputSchema makes where t allows it.
func inputSchema(t Tool) map[string]any {
	if s, ok := t.(interface{ sharedSchema() map[string]any }); ok {
		return s.sharedSchema()
	}
	return t.InputSchema()
}

func securityRiskSchema() map[string]any {
	return map[string]any{
		"type":        "string",
		"description": "Your estimate of how risky this action is for the user's system and data.",
		"enum":        []string{string(event.RiskUnknown), string(event.RiskLow), string(event.RiskMedium), string(event.RiskHigh)},
	}
}

func summarySchema() map[string]any {
	return map[string]any{
		"type":        "string",
		"description": "What this action does, in about ten words, e.g. 'Run the unit tests of the parser package'.",
	}
}

// Parameters returns the schema the model sees for t: its InputSchema with
// the meta-arguments first in properties:
// security_risk unless t is read-only, then summary unless t has its own.
// Both are optional. Meta-arguments first make models fill these short
// fields before long ones, so a truncated reply loses content rather than
// the metadata.
func Parameters(t Tool) map[string]any {
	s := cloneSchema(inputSchema(t))
	if s == nil {
		s = map[string]any{"type": "object"}
	}
	props := PropertiesOf(s)
	var front Properties
	readOnly := ReadOnly(t)
	if !readOnly {
		front = append(front, Property{Name: MetaSecurityRisk, Schema: securityRiskSchema()})
	}
	if own, ok := props.Get(MetaSummary); ok {
		front = append(front, Property{Name: MetaSummary, Schema: own}) // first too, as in the reference
	} else {
		front = append(front, Property{Name: MetaSummary, Schema: summarySchema()})
	}
	out := make(Properties, 0, len(front)+len(props))
	out = append(out, front...)
	for _, p := range props {
		if p.Name == MetaSummary || (p.Name == MetaSecurityRisk && !readOnly) {
			continue // placed above; our security_risk replaces a tool's own
		}
		out = append(out, p)
	}
	s["properties"] = out
	return s
}

// ChatCompletionsFormat returns t as an OpenAI Chat Completions tool:
// {"type":"function","function":{"name","description","parameters"}}.
func ChatCompletionsFormat(t Tool) map[string]any {
	return map[string]any{
		"type": "function",
		"function": map[string]any{
			"name":        t.Name(),
			"description": t.Description(),
			"parameters":  Parameters(t),
		},
	}
}

// ResponsesFormat returns t as an OpenAI Responses API function tool:
// {"type":"function","name","description","parameters","strict":false}.
// Strict mode stays off: it would require every property and forbid
// optional ones.
func ResponsesFormat(t Tool) map[string]any {
	return map[string]any{
		"type":        "function",
		"name":        t.Name(),
		"description": t.Description(),
		"parameters":  Parameters(t),
		"strict":      false,
	}
}

// AnthropicFormat returns t as an Anthropic Messages tool:
// {"name","description","input_schema"}.
func AnthropicFormat(t Tool) map[string]any {
	return map[string]any{
		"name":         t.Name(),
		"description":  t.Description(),
		"input_schema": Parameters(t),
	}
}

// MCPFormat returns t as an MCP tool: {"name","description","inputSchema"},
// plus "annotations" and "_meta" when t has them. As in the reference, the input
// schema is t's own InputSchema without meta-arguments: an MCP client calls
// the tool directly, not through the agent that strips them.
func MCPFormat(t Tool) map[string]any {
	out := map[string]any{
		"name":        t.Name(),
		"description": t.Description(),
		"inputSchema": cloneSchema(inputSchema(t)),
	}
	if a := t.Annotations(); a != nil {
		out["annotations"] = *a
	}
	if m := t.Definition().Meta; len(m) > 0 {
		out["_meta"] = m
	}
	return out
}

// ParametersJSON is Parameters(t) encoded as JSON, properties in order,
// ready for an LLM request.
func ParametersJSON(t Tool) (json.RawMessage, error) {
	return event.MarshalJSON(Parameters(t))
}
