package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// FieldError is one problem with the model's arguments. Its message names
// the field, so the model can correct the call.
type FieldError struct {
	// Field is the path of the offending argument, e.g. "path" or
	// "task_list[1].status"; "" for the arguments as a whole.
	Field string
	// Msg is the complete message, field name included.
	Msg string
}

// Error implements error.
func (e *FieldError) Error() string { return e.Msg }

// Validate checks the JSON arguments args against schema, a simplified
// schema as SchemaFor makes or DecodeSchema reads. It returns nil or an
// error listing every problem found, one per line, each a *FieldError
// (reachable with errors.As) naming the field:
//
//	missing required field "path"
//	field "timeout": expected number, got string "soon"
//	field "command": "foo" is not one of [view create]
//	unknown field "x" (known fields: command, path)
//
// Objects that declare properties are closed unless the schema sets
// additionalProperties: the reference's action models forbid unknown
// fields, and telling the model about a misspelt argument beats silently
// dropping it. A null value for an optional field counts as absent, as the
// reference drops null arguments before validating.
func Validate(schema map[string]any, args []byte) error {
	v, err := decodeArgs(args)
	if err != nil {
		return err
	}
	return validateValue(schema, v)
}

// decodeArgs decodes a JSON object of arguments, keeping numbers exact.
// Empty input is an empty object (some models send "" for no arguments).
func decodeArgs(args []byte) (map[string]any, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, &FieldError{Msg: fmt.Sprintf("arguments are not valid JSON: %v", err)}
	}
	if dec.More() {
		return nil, &FieldError{Msg: "arguments are not valid JSON: trailing data after the object"}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &FieldError{Msg: fmt.Sprintf("arguments must be a JSON object, got %s", describe(v))}
	}
	return m, nil
}

func validateValue(schema map[string]any, v any) error {
	var errs []error
	check(schema, v, "", &errs)
	return errors.Join(errs...)
}

func fieldErr(errs *[]error, path, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if path != "" {
		msg = fmt.Sprintf("field %q: %s", path, msg)
	}
	*errs = append(*errs, &FieldError{Field: path, Msg: msg})
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// check validates v against schema, appending problems to errs.
func check(schema map[string]any, v any, path string, errs *[]error) {
	if schema == nil {
		return
	}
	if not, ok := schema["not"].(map[string]any); ok {
		var e []error
		if check(not, v, path, &e); len(e) == 0 {
			fieldErr(errs, path, "this value is not allowed")
			return
		}
	}
	if alts, ok := schema["anyOf"].([]any); ok {
		checkAnyOf(alts, v, path, errs)
	}
	types := typesOf(schema["type"])
	if len(types) > 0 && !slices.ContainsFunc(types, func(t string) bool { return hasType(t, v) }) {
		want := strings.Join(types, " or ")
		fieldErr(errs, path, "expected %s, got %s", want, describe(v))
		return
	}
	if enum := enumOf(schema["enum"]); enum != nil {
		if !slices.ContainsFunc(enum, func(e any) bool { return jsonEqual(e, v) }) {
			fieldErr(errs, path, "%s is not one of %s", shortJSON(v), formatEnum(enum))
			return
		}
	}
	switch v := v.(type) {
	case map[string]any:
		checkObject(schema, v, path, errs)
	case []any:
		if items, ok := schema["items"].(map[string]any); ok {
			for i, e := range v {
				check(items, e, fmt.Sprintf("%s[%d]", path, i), errs)
			}
		}
	}
}

func checkAnyOf(alts []any, v any, path string, errs *[]error) {
	var first []error
	for _, a := range alts {
		s, _ := a.(map[string]any)
		var e []error
		check(s, v, path, &e)
		if len(e) == 0 {
			return
		}
		if first == nil {
			first = e
		}
	}
	*errs = append(*errs, first...)
}

func checkObject(schema map[string]any, v map[string]any, path string, errs *[]error) {
	props := PropertiesOf(schema)
	for _, name := range RequiredOf(schema) {
		if val, ok := v[name]; !ok || val == nil {
			p := join(path, name)
			*errs = append(*errs, &FieldError{Field: p, Msg: fmt.Sprintf("missing required field %q", p)})
		}
	}
	for _, p := range props {
		if val, ok := v[p.Name]; ok && val != nil {
			check(p.Schema, val, join(path, p.Name), errs)
		}
	}
	var extra []string
	_, closed := schema["properties"]
	switch ap := schema["additionalProperties"].(type) {
	case bool:
		closed = !ap
	case map[string]any:
		closed = false
		for k, val := range v {
			if _, known := props.Get(k); !known {
				check(ap, val, join(path, k), errs)
			}
		}
	}
	if !closed {
		return
	}
	for k, val := range v {
		if _, known := props.Get(k); !known && val != nil {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	names := make([]string, len(props))
	for i, p := range props {
		names[i] = p.Name
	}
	hint := "no fields are accepted"
	if len(names) > 0 {
		hint = "known fields: " + strings.Join(names, ", ")
	}
	for _, k := range extra {
		p := join(path, k)
		*errs = append(*errs, &FieldError{Field: p, Msg: fmt.Sprintf("unknown field %q (%s)", p, hint)})
	}
}

// typesOf reads a schema's "type", a string or a list of strings.
func typesOf(t any) []string {
	switch t := t.(type) {
	case string:
		return []string{t}
	case []string:
		return t
	case []any:
		out := make([]string, 0, len(t))
		for _, e := range t {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func enumOf(e any) []any {
	switch e := e.(type) {
	case []any:
		return e
	case []string:
		out := make([]any, len(e))
		for i, s := range e {
			out[i] = s
		}
		return out
	}
	return nil
}

func formatEnum(enum []any) string {
	parts := make([]string, len(enum))
	for i, e := range enum {
		if s, ok := e.(string); ok {
			parts[i] = s
		} else {
			parts[i] = shortJSON(e)
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func hasType(t string, v any) bool {
	switch t {
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		return isNumber(v)
	case "integer":
		return isInteger(v)
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "null":
		return v == nil
	}
	return true // unknown type names constrain nothing
}

func isNumber(v any) bool {
	switch v.(type) {
	case json.Number, float64, float32, int, int64:
		return true
	}
	return false
}

// isInteger reports whether v is a whole number that fits an int64. As in
// the reference (Pydantic), 3.0 counts as the integer 3.
func isInteger(v any) bool {
	switch n := v.(type) {
	case int, int64:
		return true
	case json.Number:
		if _, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return true
		}
		f, err := n.Float64()
		return err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<63
	case float64:
		return n == math.Trunc(n) && math.Abs(n) < 1<<63
	}
	return false
}

// describe names the JSON type of v for an error message, with a short
// excerpt of scalars.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return "string " + shortJSON(v)
	case bool:
		return "boolean " + strconv.FormatBool(v)
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	if isNumber(v) {
		return "number " + shortJSON(v)
	}
	return fmt.Sprintf("%T", v)
}

// shortJSON renders v as JSON, cut to a length that keeps errors readable.
func shortJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	const max = 60
	if r := []rune(string(b)); len(r) > max {
		return string(r[:max]) + "…"
	}
	return string(b)
}

func jsonEqual(a, b any) bool {
	switch a.(type) {
	case string, bool, nil:
		return a == b
	}
	if isNumber(a) && isNumber(b) {
		fa, _ := strconv.ParseFloat(fmt.Sprint(a), 64)
		fb, _ := strconv.ParseFloat(fmt.Sprint(b), 64)
		return fa == fb
	}
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}
