package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
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

// aliases maps tool names models use from their training (other agents'
// tool names) to the built-in tool that does the job.
var aliases = map[string]string{
	"bash":               "terminal",
	"command":            "terminal",
	"execute":            "terminal",
	"execute_bash":       "terminal",
	"git":                "terminal",
	"reset":              "terminal",
	"str_replace":        "file_editor",
	"str_replace_editor": "file_editor",
}

// commandAliases are aliases that are themselves shell commands: "git"
// with command "status" runs "git status".
var commandAliases = map[string]bool{"git": true, "reset": true}

// bareCommands are read-only shell commands some models call as tools
// with no arguments; they run in the terminal.
var bareCommands = map[string]bool{"find": true, "git": true, "ls": true, "pwd": true}

var leadingIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*`)

// NormalizeCall maps the tool name a model used to one of the known tools
// and adapts the arguments to it. known reports whether a tool of that
// name is available. A known name is never rewritten. Otherwise, in order:
//
//   - a malformed name such as "str_replace </parameter" is cut to its
//     leading identifier, used if known;
//   - an alias is used if its target is known: bash, command, execute,
//     execute_bash, git and reset mean terminal, str_replace and
//     str_replace_editor mean file_editor; for git and reset the name
//     becomes the start of the terminal command and only command,
//     security_risk and summary are kept;
//   - with a terminal available, "grep" with a pattern becomes an rg
//     command line (grep when rg is not on this process's PATH, checked
//     here as the reference does), and find, git, ls or pwd with no
//     arguments run as that command.
//
// For file_editor calls without a command, the command is inferred from
// the arguments given (old_str: str_replace, insert_line: insert,
// file_text: create, path: view); with no file_editor argument at all, it
// is an error. An unknown name that nothing matches is returned unchanged.
func NormalizeCall(name string, args json.RawMessage, known func(string) bool) (string, json.RawMessage, error) {
	o, err := parseObject(args)
	if err != nil {
		return name, args, fmt.Errorf("arguments must be a JSON object: %w", err)
	}
	outName := name
	if !known(name) {
		base := leadingIdent.FindString(name)
		if base == "" {
			base = name
		}
		target := aliases[base]
		switch {
		case base != name && known(base):
			outName = base
		case target != "" && known(target):
			outName = target
			if target == "terminal" && commandAliases[base] {
				o = prefixCommand(o, base)
			}
		case known("terminal"):
			if cmd, ok := terminalFallback(name, o); ok {
				outName = "terminal"
				o = keepMeta(o)
				o.set("command", mustRaw(cmd))
			}
		}
	}
	if outName == "file_editor" {
		if _, has := o.get("command"); !has {
			cmd := inferEditorCommand(o)
			switch {
			case cmd != "":
				o = append(object{{"command", mustRaw(cmd)}}, o...)
			case !hasEditorHint(o):
				return outName, args, fmt.Errorf("cannot infer the command for tool 'file_editor' from arguments %s: give command (view, create, str_replace, insert or undo_edit) and its arguments", pyList(o.keys()))
			}
			// Otherwise validation reports the missing command.
		}
	}
	if outName == name && len(o) == 0 {
		return outName, args, nil
	}
	return outName, o.marshal(), nil
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

func prefixCommand(o object, word string) object {
	cmd := word
	if raw, ok := o.get("command"); ok {
		var c string
		if s, isStr := rawString(raw); isStr {
			c = s
		} else {
			c = strings.Trim(string(raw), `"`)
		}
		if f := strings.Fields(c); len(f) > 0 && f[0] == word {
			cmd = c
		} else if strings.TrimSpace(c) != "" {
			cmd = word + " " + c
		}
	}
	out := keepMeta(o)
	out.set("command", mustRaw(cmd))
	return out
}

func hasEditorHint(o object) bool {
	for _, k := range []string{"old_str", "new_str", "insert_line", "file_text", "path", "view_range"} {
		if _, ok := o.get(k); ok {
			return true
		}
	}
	return false
}

func inferEditorCommand(o object) string {
	for _, p := range [][2]string{{"old_str", "str_replace"}, {"insert_line", "insert"}, {"file_text", "create"}, {"path", "view"}} {
		if _, ok := o.get(p[0]); ok {
			return p[1]
		}
	}
	return ""
}

// terminalFallback turns a shell-like tool call into a command line.
func terminalFallback(name string, o object) (string, bool) {
	if name == "grep" {
		arg := func(k string) string {
			raw, _ := o.get(k)
			s, _ := rawString(raw)
			if strings.TrimSpace(s) == "" {
				return ""
			}
			return s
		}
		pattern, path, include := arg("pattern"), arg("path"), arg("include")
		if pattern == "" {
			return "", false
		}
		if path == "" {
			path = "."
		}
		var parts []string
		if _, err := exec.LookPath("rg"); err == nil {
			parts = []string{"rg", "-n", "-i", pattern, path, "--sortr=modified"}
			if include != "" {
				parts = append(parts, "-g", include)
			}
		} else {
			parts = []string{"grep", "-R", "-I", "-n", "-i", pattern, path}
			if include != "" {
				parts = append(parts, "--include="+include)
			}
		}
		return ShellJoin(parts), true
	}
	if len(o) == 0 && bareCommands[name] {
		return name, true
	}
	return "", false
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
