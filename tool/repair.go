package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// This file repairs tool calls as models actually send them. The agent
// applies, in order: ParseArguments, NormalizeCall, RepairArgs, SplitMeta,
// then the tool's ParseAction.
// PrepareCall does all of it.

// ParseArguments turns the argument text of a tool call into a JSON
// object. Invalid JSON is retried once with raw control characters escaped
// (some models put literal newlines and tabs inside strings). Valid JSON
// that is not an object becomes {}. Misspellings of security_risk that
// models are known to make are corrected, and null members are dropped
// (null means "not given"). Member order is kept.
func ParseArguments(raw string) (json.RawMessage, error) {
	if strings.TrimSpace(raw) == "" {
		return json.RawMessage("{}"), nil
	}
	data := []byte(raw)
	if !json.Valid(data) {
		data = EscapeControlChars(data)
		if !json.Valid(data) {
			var v any
			err := json.Unmarshal([]byte(raw), &v)
			return nil, fmt.Errorf("arguments are not valid JSON: %w", err)
		}
	}
	o, err := parseObject(data)
	if err == errNotObject {
		return json.RawMessage("{}"), nil
	}
	if err != nil {
		return nil, fmt.Errorf("arguments are not valid JSON: %w", err)
	}
	for _, typo := range []string{"security_rort", "securtiy_risk", "security_riks"} {
		if v, ok := o.pop(typo); ok {
			o.set(MetaSecurityRisk, v)
			break
		}
	}
	clean := o[:0:0]
	for _, m := range o {
		if !isNullRaw(m.val) {
			clean = append(clean, m)
		}
	}
	return clean.marshal(), nil
}

// EscapeControlChars replaces every raw byte U+0000–U+001F inside the JSON
// strings of data with its escape (\n, \t, ... or \u00XX), which models
// sometimes forget. Bytes outside strings (whitespace between tokens) are
// left alone; the reference escapes those too, which breaks pretty-printed
// arguments that also contain a raw newline in a string.
func EscapeControlChars(data []byte) []byte {
	var b bytes.Buffer
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case !inString:
			inString = c == '"'
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case c == '"':
			inString = false
		case c < 0x20:
			switch c {
			case '\b':
				b.WriteString(`\b`)
			case '\t':
				b.WriteString(`\t`)
			case '\n':
				b.WriteString(`\n`)
			case '\f':
				b.WriteString(`\f`)
			case '\r':
				b.WriteString(`\r`)
			default:
				fmt.Fprintf(&b, `\u%04x`, c)
			}
			continue
		}
		b.WriteByte(c)
	}
	return b.Bytes()
}

var leadingIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*`)

// NormalizeCall finds the tool among tools that a model's call of name is
// for, and lets it repair the arguments. A tool of that name is never
// swapped for another. Otherwise, in order:
//
//   - a malformed name such as "str_replace </parameter" is cut to its
//     leading identifier, used if a tool has it;
//   - a tool with that identifier among its aliases takes the call;
//   - each tool that is a Repairer is offered the call under the name as
//     written, and the first that accepts it takes it.
//
// Whichever tool takes the call, its Repairer (if any) adapts the
// arguments. t is nil when no tool takes the call; args are then as given.
func NormalizeCall(tools []Tool, name string, args json.RawMessage) (t Tool, out json.RawMessage, err error) {
	o, err := parseObject(args)
	if err != nil {
		return nil, args, fmt.Errorf("arguments must be a JSON object: %w", err)
	}
	a := &Args{o}
	byName := func(n string) Tool {
		for i := len(tools) - 1; i >= 0; i-- { // the last of a repeated name, as the registry keeps it
			if tools[i].Name() == n {
				return tools[i]
			}
		}
		return nil
	}
	take := func(t Tool, as string) (Tool, json.RawMessage, error) {
		if r, ok := t.(Repairer); ok {
			if _, err := r.RepairCall(as, a); err != nil {
				return t, args, err
			}
		}
		if t.Name() == name && a.Len() == 0 {
			return t, args, nil
		}
		return t, a.o.marshal(), nil
	}
	if t := byName(name); t != nil {
		return take(t, name)
	}
	base := leadingIdent.FindString(name)
	if base != "" && base != name {
		if t := byName(base); t != nil {
			return take(t, base)
		}
	}
	if base == "" {
		base = name
	}
	for _, t := range tools {
		if r, ok := t.(Repairer); ok && slices.Contains(r.Aliases(), base) {
			return take(t, base)
		}
	}
	for _, t := range tools {
		r, ok := t.(Repairer)
		if !ok {
			continue
		}
		trial := &Args{slices.Clone(a.o)}
		ok, err := r.RepairCall(name, trial)
		if err != nil {
			return t, args, err
		}
		if ok {
			a = trial
			return t, a.o.marshal(), nil
		}
	}
	return nil, args, nil
}

// keepMeta returns the meta-arguments of o.
func keepMeta(o object) object {
	var out object
	for _, m := range o {
		if m.key == MetaSecurityRisk || m.key == MetaSummary {
			out = append(out, m)
		}
	}
	return out
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// ShellJoin quotes words for a POSIX shell and joins them with spaces, as
// Python's shlex.join does.
func ShellJoin(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		switch {
		case w == "":
			out[i] = "''"
		case shellSafe.MatchString(w):
			out[i] = w
		default:
			out[i] = "'" + strings.ReplaceAll(w, "'", `'"'"'`) + "'"
		}
	}
	return strings.Join(out, " ")
}

// RepairArgs fixes argument values that a model encoded in the wrong JSON
// type, looking at the top-level properties of schema (the tool's
// InputSchema or Parameters):
//
//   - an array or object sent as a JSON string ("[1, 5]") is decoded;
//     trailing garbage after the last ] or } is cut if that makes it
//     decode;
//   - a string sent as an array of strings (some models chunk long
//     strings) is joined;
//   - a number sent as a numeric string ("30") becomes the number, and a
//     boolean sent as "true"/"false" (also yes/no, on/off, 1/0) the
//     boolean, as the reference's lax validation accepts them.
//
// Anything else is left for validation to report. args must be a JSON
// object; member order is kept.
func RepairArgs(schema map[string]any, args json.RawMessage) (json.RawMessage, error) {
	o, err := parseObject(args)
	if err != nil {
		return args, fmt.Errorf("arguments must be a JSON object: %w", err)
	}
	changed := false
	for _, p := range PropertiesOf(schema) {
		i := o.index(p.Name)
		if i < 0 {
			continue
		}
		if v, ok := repairValue(expectedTypes(p.Schema), o[i].val); ok {
			o[i].val = v
			changed = true
		}
	}
	if !changed {
		return args, nil
	}
	return o.marshal(), nil
}

// expectedTypes lists the JSON types a property accepts.
func expectedTypes(s map[string]any) []string {
	types := typesOf(s["type"])
	for _, key := range []string{"anyOf", "oneOf"} {
		alts, _ := s[key].([]any)
		for _, a := range alts {
			if m, ok := a.(map[string]any); ok {
				types = append(types, expectedTypes(m)...)
			}
		}
	}
	return types
}

func repairValue(types []string, raw json.RawMessage) (json.RawMessage, bool) {
	has := func(t string) bool { return slices.Contains(types, t) }
	wantsCollection := has("array") || has("object")
	r := bytes.TrimSpace(raw)
	if len(r) == 0 {
		return nil, false
	}
	switch r[0] {
	case '[':
		if has("string") && !wantsCollection {
			var parts []string
			if err := json.Unmarshal(r, &parts); err == nil {
				return mustRaw(strings.Join(parts, "")), true
			}
		}
	case '"':
		s, ok := rawString(r)
		if !ok || has("string") {
			return nil, false
		}
		if wantsCollection {
			return decodeCollection(s)
		}
		t := strings.TrimSpace(s)
		if has("integer") || has("number") {
			if n, err := strconv.ParseFloat(t, 64); err == nil && t != "" && !strings.ContainsAny(t, "xXnN_") {
				if has("integer") && !has("number") && n != float64(int64(n)) {
					return nil, false
				}
				return json.RawMessage(strconv.FormatFloat(n, 'f', -1, 64)), true
			}
		}
		if has("boolean") {
			switch strings.ToLower(t) {
			case "true", "yes", "on", "1", "t", "y":
				return json.RawMessage("true"), true
			case "false", "no", "off", "0", "f", "n":
				return json.RawMessage("false"), true
			}
		}
	}
	return nil, false
}

// decodeCollection decodes s as a JSON array or object, tolerating raw
// control characters in strings and garbage after the last ] or }.
func decodeCollection(s string) (json.RawMessage, bool) {
	try := func(s string) (json.RawMessage, bool) {
		data := EscapeControlChars([]byte(strings.TrimSpace(s)))
		if len(data) == 0 || (data[0] != '[' && data[0] != '{') || !json.Valid(data) {
			return nil, false
		}
		var b bytes.Buffer
		if json.Compact(&b, data) != nil {
			return nil, false
		}
		return b.Bytes(), true
	}
	if v, ok := try(s); ok {
		return v, true
	}
	for _, end := range []string{"}", "]"} {
		if i := strings.LastIndex(s, end); i >= 0 {
			if v, ok := try(s[:i+1]); ok {
				return v, true
			}
		}
	}
	return nil, false
}
