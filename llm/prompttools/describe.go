package prompttools

import (
	"encoding/json"
	"fmt"
	"strings"
)

const noDescription = "No description provided"

// Describe lists tools in the reference's layout:
//
//	---- BEGIN FUNCTION #1: NAME ----
//	Description: ...
//	Parameters:
//	  (1) NAME (TYPE, required): DESCRIPTION
//	---- END FUNCTION #1 ----
//
// with enum values, and nested details of arrays, objects and unions
// indented below their parameter.
func Describe(tools []Tool) (string, error) {
	var b strings.Builder
	for i, t := range tools {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "---- BEGIN FUNCTION #%d: %s ----\n", i+1, t.Name)
		if t.Description != "" {
			fmt.Fprintf(&b, "Description: %s\n", t.Description)
		}
		if len(t.Parameters) == 0 {
			b.WriteString("No parameters are required for this function.\n")
		} else {
			b.WriteString("Parameters:\n")
			var schema struct {
				Properties json.RawMessage `json:"properties"`
				Required   []string        `json:"required"`
			}
			if err := json.Unmarshal(t.Parameters, &schema); err != nil {
				return "", fmt.Errorf("prompttools: schema of %s: %w", t.Name, err)
			}
			var props []keyValue
			if len(schema.Properties) > 0 {
				var err error
				if props, err = orderedObject(schema.Properties); err != nil {
					return "", fmt.Errorf("prompttools: schema of %s: %w", t.Name, err)
				}
			}
			for j, p := range props {
				s := parseSchema(p.value)
				status := "optional"
				for _, r := range schema.Required {
					if r == p.key {
						status = "required"
					}
				}
				desc := s.description()
				if s.has("enum") {
					var vals []string
					for _, v := range s.list("enum") {
						vals = append(vals, "`"+pyValue(v)+"`")
					}
					desc += "\nAllowed values: [" + strings.Join(vals, ", ") + "]"
				}
				fmt.Fprintf(&b, "  (%d) %s (%s, %s): %s\n", j+1, p.key, s.summary(), status, desc)
				if lines := s.details(6); len(lines) > 0 {
					b.WriteString(strings.Join(lines, "\n") + "\n")
				}
			}
		}
		fmt.Fprintf(&b, "---- END FUNCTION #%d ----\n", i+1)
	}
	return b.String(), nil
}

// schema is a JSON schema node with its keys in order.
type schema struct {
	ok     bool // the node is an object
	fields map[string]json.RawMessage
	order  []keyValue
}

func parseSchema(raw json.RawMessage) schema {
	kvs, err := orderedObject(raw)
	if err != nil {
		return schema{}
	}
	s := schema{ok: true, fields: map[string]json.RawMessage{}, order: kvs}
	for _, kv := range kvs {
		s.fields[kv.key] = kv.value
	}
	return s
}

func (s schema) has(k string) bool { _, ok := s.fields[k]; return ok }

func (s schema) str(k string) (string, bool) {
	var v string
	if raw, ok := s.fields[k]; ok && json.Unmarshal(raw, &v) == nil {
		return v, true
	}
	return "", false
}

func (s schema) list(k string) []json.RawMessage {
	var v []json.RawMessage
	if raw, ok := s.fields[k]; ok {
		_ = json.Unmarshal(raw, &v) // not a list reads as none
	}
	return v
}

func (s schema) description() string {
	if d, ok := s.str("description"); ok && strings.TrimSpace(d) != "" {
		return d
	}
	return noDescription
}

var unionKeys = []string{"anyOf", "oneOf", "allOf"}

// summary is the one-word-ish type of a node: "string", "array[string]",
// "integer or null", ...
func (s schema) summary() string {
	if !s.ok {
		return "unknown"
	}
	for _, k := range unionKeys {
		if s.has(k) {
			var parts []string
			for _, o := range s.list(k) {
				parts = append(parts, parseSchema(o).summary())
			}
			return strings.Join(parts, " or ")
		}
	}
	if types := s.list("type"); len(types) > 0 {
		var parts []string
		for _, t := range types {
			parts = append(parts, pyValue(t))
		}
		return strings.Join(parts, " or ")
	}
	t, _ := s.str("type")
	switch {
	case t == "array":
		items := s.fields["items"]
		if list := s.list("items"); list != nil {
			var parts []string
			for _, it := range list {
				parts = append(parts, parseSchema(it).summary())
			}
			return "array[" + strings.Join(parts, ", ") + "]"
		}
		if it := parseSchema(items); it.ok {
			return "array[" + it.summary() + "]"
		}
		return "array"
	case t != "":
		return t
	case s.has("enum"):
		return "enum"
	}
	return "unknown"
}

func pad(n int) string { return strings.Repeat(" ", n) }

// details describes arrays, objects, unions and additional properties,
// indented by indent and nesting two spaces a level.
func (s schema) details(indent int) []string {
	if !s.ok {
		return nil
	}
	for _, k := range unionKeys {
		if !s.has(k) {
			continue
		}
		lines := []string{pad(indent) + k + " options:"}
		for _, o := range s.list(k) {
			os := parseSchema(o)
			lines = append(lines, pad(indent+2)+"- "+os.summary()+": "+os.description())
			lines = append(lines, os.details(indent+4)...)
		}
		return lines
	}
	if types := s.list("type"); len(types) > 0 {
		var parts []string
		for _, t := range types {
			parts = append(parts, pyValue(t))
		}
		return []string{pad(indent) + "Allowed types: " + strings.Join(parts, ", ")}
	}
	switch t, _ := s.str("type"); t {
	case "array":
		lines := []string{pad(indent) + "Array items:"}
		if list := s.list("items"); list != nil {
			for i, it := range list {
				is := parseSchema(it)
				lines = append(lines, fmt.Sprintf("%s- index %d: %s", pad(indent+2), i, is.summary()))
				lines = append(lines, is.details(indent+4)...)
			}
		} else if is := parseSchema(s.fields["items"]); is.ok {
			lines = append(lines, pad(indent+2)+"Type: "+is.summary())
			lines = append(lines, is.details(indent+4)...)
		} else {
			lines = append(lines, pad(indent+2)+"Type: unknown")
		}
		return lines
	case "object":
		var lines []string
		props, _ := orderedObject(s.fields["properties"])
		var required []string
		if raw, ok := s.fields["required"]; ok {
			_ = json.Unmarshal(raw, &required) // malformed reads as none required
		}
		if len(props) > 0 {
			lines = append(lines, pad(indent)+"Object properties:")
			for _, p := range props {
				ps := parseSchema(p.value)
				flag := "optional"
				for _, r := range required {
					if r == p.key {
						flag = "required"
					}
				}
				lines = append(lines, fmt.Sprintf("%s- %s (%s, %s): %s", pad(indent+2), p.key, ps.summary(), flag, ps.description()))
				lines = append(lines, ps.details(indent+4)...)
			}
		}
		if raw, ok := s.fields["additionalProperties"]; ok {
			switch ap := parseSchema(raw); {
			case ap.ok:
				lines = append(lines, pad(indent)+"Additional properties allowed: "+ap.summary())
				lines = append(lines, ap.details(indent+2)...)
			case string(raw) == "true":
				lines = append(lines, pad(indent)+"Additional properties allowed.")
			case string(raw) == "false":
				lines = append(lines, pad(indent)+"Additional properties not allowed.")
			}
		}
		return lines
	}
	return nil
}

// pyValue renders a JSON scalar as the reference's Python str() would.
func pyValue(raw json.RawMessage) string {
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return pythonScalar(raw)
}

// instructions explain the call format; {description} is replaced by the
// tool list. The wording is ours; the format it teaches is the reference's.
const instructions = `
You can call the functions described below.

{description}

To call a function, reply with the call in exactly this form, and write nothing after it:

<function=example_function_name>
<parameter=example_parameter_1>value_1</parameter>
<parameter=example_parameter_2>
A value may span
several lines
</parameter>
</function>

<IMPORTANT>
Rules:
- A call starts with <function= and ends with </function>
- Give every required parameter
- Make one call per reply
- Any explanation goes before the call, never after it
- If no function fits, answer in plain text and do not mention functions
</IMPORTANT>
`

const securityExample = "<parameter=security_risk>LOW</parameter>\n<parameter=summary>What this call does, in a few words</parameter>\n"

// SystemSuffix is the text appended to the system prompt: the tool list and
// the format rules. With security set, the example call also shows the
// security_risk and summary arguments. (The reference inserts them before
// every "</function>" of its template, including the one inside a rule's
// sentence; we show them in the example call only.)
func SystemSuffix(tools []Tool, security bool) (string, error) {
	desc, err := Describe(tools)
	if err != nil {
		return "", err
	}
	text := instructions
	if security {
		text = strings.Replace(text, "</parameter>\n</function>", "</parameter>\n"+securityExample+"</function>", 1)
	}
	return strings.Replace(text, "{description}", desc, 1), nil
}
