// Package prompttools lets models without native function calling use
// tools: the tools are described in the system prompt, earlier tool calls
// and results are rewritten as text, and the model's reply is parsed back
// into a tool call.
//
// The textual format is the reference SDK's, so a model sees exactly what
// it would see there:
//
//	<function=NAME>
//	<parameter=KEY>VALUE</parameter>
//	<parameter=KEY>
//	a value that spans
//	several lines
//	</parameter>
//	</function>
//
// Tool results come back as user messages starting "EXECUTION RESULT of
// [NAME]:". Only one call per reply is supported, as in the reference.
package prompttools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/lazyregexp"
)

// Tool is a tool as described to the model.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON schema of the arguments (an object schema);
	// nil means the tool takes none. Property order is kept.
	Parameters json.RawMessage
}

// StopWords stop generation right after a call, so the model cannot go on
// to imagine the call's result.
var StopWords = []string{"</function"}

// Error is a reply that does not make a valid call. Its message is written
// for the model, which should be shown it and asked to try again.
type Error struct {
	Msg string
}

func (e *Error) Error() string { return e.Msg }

func errorf(format string, args ...any) error { return &Error{Msg: fmt.Sprintf(format, args...)} }

// Options configure ToText.
type Options struct {
	// Example wraps the first user message in a worked example of the
	// format, built from the tools that have one.
	Example bool
	// SecurityParams shows security_risk and summary arguments in the
	// format reminder; when unset, it is on if any tool has a
	// security_risk parameter.
	SecurityParams *bool
}

// ExampleWanted reports whether a model benefits from the worked example:
// models trained on the format (and short-context ones) go without, as in
// the reference.
func ExampleWanted(model string) bool {
	for _, s := range []string{"openhands-lm", "devstral", "nemotron"} {
		if strings.Contains(model, s) {
			return false
		}
	}
	return true
}

// ToText rewrites a conversation that uses native tool calls into the
// textual format: the system prompt gains the tool descriptions and format
// rules, assistant tool calls become call text, tool results become user
// messages. It fails on an assistant message with more than one call,
// which the format cannot express.
func ToText(messages []event.Message, tools []Tool, opts *Options) ([]event.Message, error) {
	if opts == nil {
		opts = &Options{}
	}
	security := hasSecurityParam(tools)
	if opts.SecurityParams != nil {
		security = *opts.SecurityParams
	}
	suffix, err := SystemSuffix(tools, security)
	if err != nil {
		return nil, err
	}
	out := make([]event.Message, 0, len(messages))
	seenUser := false
	for _, m := range messages {
		c := slices.Clone([]event.Content(m.Content))
		switch m.Role {
		case event.RoleSystem:
			c = appendText(c, suffix)
			out = append(out, event.Message{Role: event.RoleSystem, Content: c})
		case event.RoleUser:
			if !seenUser && opts.Example {
				if ex := Example(tools); ex != "" {
					c = wrapText(c, ex, exampleTrailer)
				}
			}
			seenUser = true
			out = append(out, event.Message{Role: event.RoleUser, Content: c})
		case event.RoleAssistant:
			if len(m.ToolCalls) > 1 {
				return nil, fmt.Errorf("prompttools: an assistant message has %d tool calls; the text format takes one per message", len(m.ToolCalls))
			}
			if len(m.ToolCalls) == 1 {
				call, err := CallText(m.ToolCalls[0])
				if err != nil {
					return nil, err
				}
				if n := len(c); n > 0 && c[n-1].Type == event.ContentText {
					c[n-1].Text = strings.TrimLeft(c[n-1].Text+"\n\n"+call, " \t\n\r")
				} else {
					c = append(c, event.Text(call))
				}
			}
			out = append(out, event.Message{Role: event.RoleAssistant, Content: c, ReasoningContent: m.ReasoningContent, ThinkingBlocks: m.ThinkingBlocks})
		case event.RoleTool:
			name := m.Name
			if name == "" {
				name = "function"
			}
			prefix := "EXECUTION RESULT of [" + name + "]:\n"
			if i := slices.IndexFunc(c, func(x event.Content) bool { return x.Type == event.ContentText }); i >= 0 {
				c[i].Text = prefix + c[i].Text
			} else {
				c = append([]event.Content{event.Text(prefix)}, c...)
			}
			out = append(out, event.Message{Role: event.RoleUser, Content: c})
		default:
			return nil, fmt.Errorf("prompttools: unexpected role %q", m.Role)
		}
	}
	return out, nil
}

func appendText(c []event.Content, s string) []event.Content {
	if n := len(c); n > 0 && c[n-1].Type == event.ContentText {
		c[n-1].Text += s
		return c
	}
	return append(c, event.Text(s))
}

func wrapText(c []event.Content, prefix, suffix string) []event.Content {
	if len(c) > 0 && c[0].Type == event.ContentText {
		c[0].Text = prefix + c[0].Text + suffix
		return c
	}
	return append(append([]event.Content{event.Text(prefix)}, c...), event.Text(suffix))
}

// CallText writes a tool call in the textual format. String values with
// newlines go on their own lines; lists and objects are written as JSON.
func CallText(tc event.ToolCall) (string, error) {
	args, err := orderedObject([]byte(tc.Arguments))
	if err != nil {
		return "", fmt.Errorf("prompttools: arguments of %s are not a JSON object: %w", tc.Name, err)
	}
	var b strings.Builder
	b.WriteString("<function=" + tc.Name + ">")
	for _, kv := range args {
		b.WriteString("\n<parameter=" + kv.key + ">")
		var s string
		if v := bytes.TrimSpace(kv.value); len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil {
			if strings.Contains(s, "\n") {
				b.WriteString("\n" + s + "\n")
			} else {
				b.WriteString(s)
			}
		} else {
			b.WriteString(pythonScalar(kv.value))
		}
		b.WriteString("</parameter>")
	}
	b.WriteString("\n</function>")
	return b.String(), nil
}

// pythonScalar renders a non-string JSON value the way the reference's
// str() does for scalars (True, False, None), and lists and objects as its
// json.dumps does (key order kept, ", " and ": " separators, non-ASCII
// escaped).
func pythonScalar(v json.RawMessage) string {
	switch s := string(bytes.TrimSpace(v)); s {
	case "true":
		return "True"
	case "false":
		return "False"
	case "null":
		return "None"
	default:
		if len(s) > 0 && (s[0] == '[' || s[0] == '{') {
			var b strings.Builder
			if pyJSON(&b, v) == nil {
				return b.String()
			}
		}
		return s
	}
}

// pyJSON writes raw JSON as Python's json.dumps would.
func pyJSON(b *strings.Builder, raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return errors.New("empty JSON value")
	}
	switch raw[0] {
	case '{':
		kvs, err := orderedObject(raw)
		if err != nil {
			return err
		}
		b.WriteByte('{')
		for i, kv := range kvs {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(pyString(kv.key) + ": ")
			if err := pyJSON(b, kv.value); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return err
		}
		b.WriteByte('[')
		for i, it := range items {
			if i > 0 {
				b.WriteString(", ")
			}
			if err := pyJSON(b, it); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		b.WriteString(pyString(s))
	default:
		b.Write(raw)
	}
	return nil
}

func pyString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || r > 0x7e:
			if r > 0xffff {
				r -= 0x10000
				fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

var (
	fnRE          = lazyregexp.New(`(?s)<function=([^>]+)>\n?(.*?)</function>`)
	paramRE       = lazyregexp.New(`(?s)<parameter=([^>]+)>(.*?)</parameter>`)
	badParamRE    = lazyregexp.New(`<parameter=([a-zA-Z0-9_]+)=([^<]*)</parameter>`)
	thinkBeforeRE = lazyregexp.New(`</think>\s*<function=`)
	toolCallRE    = lazyregexp.New(`<tool_call>\s*<function=`)
	toolCallEndRE = lazyregexp.New(`</function>\s*</tool_call>`)
)

// aliases are legacy tool names some models still use.
var aliases = map[string]string{
	"str_replace_editor": "file_editor",
	"str_replace":        "file_editor",
	"bash":               "terminal",
	"execute_bash":       "terminal",
}

// clean removes wrapper tags some models put around calls and closes a
// call cut off by the stop word.
func clean(s string) string {
	s = thinkBeforeRE.ReplaceAllString(s, "<function=")
	s = toolCallRE.ReplaceAllString(s, "<function=")
	s = toolCallEndRE.ReplaceAllString(s, "</function>")
	if strings.Count(s, "<function=") == 1 {
		if strings.HasSuffix(s, "</") {
			s = strings.TrimRight(s, " \t\n\r") + "function>"
		} else if !strings.HasSuffix(strings.TrimRight(s, " \t\n\r"), "</function>") {
			s += "\n</function>"
		}
	}
	return s
}

// Parse reads a tool call out of an assistant reply written in the textual
// format. The returned message keeps the text before the call and the
// reply's reasoning, and has one tool call with id toolu_NN, NN being
// callNumber (the reference numbers calls in the conversation from 01). A
// reply without a call is returned unchanged. A call that names an
// unknown tool or has bad arguments yields an *Error for the model.
func Parse(reply event.Message, tools []Tool, callNumber int) (event.Message, error) {
	c := slices.Clone([]event.Content(reply.Content))
	if len(c) == 0 || c[len(c)-1].Type != event.ContentText {
		return reply, nil
	}
	last := clean(c[len(c)-1].Text)
	m := fnRE.FindStringSubmatch(last)
	if m == nil {
		for _, x := range c[:len(c)-1] {
			if x.Type == event.ContentText && fnRE.MatchString(x.Text) {
				return reply, errorf("The function call must be at the end of the message.")
			}
		}
		return reply, nil
	}
	name := m[1]
	tool, ok := findTool(tools, name)
	if !ok {
		if alias, isAlias := aliases[name]; isAlias {
			name = alias
			tool, ok = findTool(tools, name)
		}
	}
	if !ok {
		names := make([]string, len(tools))
		for i, t := range tools {
			names[i] = t.Name
		}
		return reply, errorf("Function %q not found in available tools: %s", name, strings.Join(names, ", "))
	}
	args, err := parseParams(tool, badParamRE.ReplaceAllString(m[2], "<parameter=$1>$2</parameter>"))
	if err != nil {
		return reply, err
	}
	before := strings.TrimSpace(strings.SplitN(last, "<function=", 2)[0])
	c[len(c)-1].Text = before
	if before == "" {
		c = c[:len(c)-1]
	}
	out := reply
	out.Content = c
	out.ToolCalls = []event.ToolCall{{ID: fmt.Sprintf("toolu_%02d", callNumber), Name: name, Arguments: args, Origin: event.OriginCompletion}}
	return out, nil
}

func findTool(tools []Tool, name string) (Tool, bool) {
	for _, t := range tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

type schemaProp struct {
	Type any   `json:"type"`
	Enum []any `json:"enum"`
}

// parseParams checks the parameters of a call against the tool's schema
// and returns them as JSON arguments, in the order the model wrote them.
func parseParams(tool Tool, body string) (string, error) {
	var schema struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if len(tool.Parameters) > 0 {
		if err := json.Unmarshal(tool.Parameters, &schema); err != nil {
			return "", fmt.Errorf("prompttools: schema of %s: %w", tool.Name, err)
		}
	}
	props := map[string]schemaProp{}
	var order []string
	if len(schema.Properties) > 0 {
		kvs, err := orderedObject(schema.Properties)
		if err != nil {
			return "", fmt.Errorf("prompttools: schema of %s: %w", tool.Name, err)
		}
		for _, kv := range kvs {
			var p schemaProp
			_ = json.Unmarshal(kv.value, &p) // a property that is not an object has no type
			props[kv.key] = p
			order = append(order, kv.key)
		}
	}
	var b bytes.Buffer
	b.WriteByte('{')
	found := map[string]bool{}
	for _, pm := range paramRE.FindAllStringSubmatch(body, -1) {
		name, raw := pm[1], strings.TrimSpace(pm[2])
		p, ok := props[name]
		if len(props) > 0 && !ok {
			return "", errorf("Parameter %q is not allowed for function %q. Allowed parameters: %s", name, tool.Name, strings.Join(order, ", "))
		}
		if found[name] {
			return "", errorf("Parameter %q is given more than once.", name)
		}
		value, err := convertParam(name, raw, p)
		if err != nil {
			return "", err
		}
		if p.Enum != nil && !slices.ContainsFunc(p.Enum, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(value) }) {
			allowed := make([]string, len(p.Enum))
			for i, e := range p.Enum {
				allowed[i] = fmt.Sprint(e)
			}
			return "", errorf("Parameter %q is expected to be one of [%s].", name, strings.Join(allowed, ", "))
		}
		if len(found) > 0 {
			b.WriteByte(',')
		}
		found[name] = true
		k, _ := json.Marshal(name)
		v, err := json.Marshal(value)
		if err != nil {
			return "", err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	var missing []string
	for _, r := range schema.Required {
		if !found[r] && r != "security_risk" {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		return "", errorf("Missing required parameters for function %q: %s", tool.Name, strings.Join(missing, ", "))
	}
	return b.String(), nil
}

// convertParam turns the text of a parameter into a value of the type the
// schema gives it. The reference converts only integers and arrays; we
// also convert numbers, booleans and objects, which it would pass on as
// strings for the tool to reject.
func convertParam(name, raw string, p schemaProp) (any, error) {
	switch p.Type {
	case "integer":
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return nil, errorf("Parameter %q is expected to be an integer.", name)
		}
		return n, nil
	case "number":
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return nil, errorf("Parameter %q is expected to be a number.", name)
		}
		return f, nil
	case "boolean":
		switch strings.ToLower(raw) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, errorf("Parameter %q is expected to be true or false.", name)
	case "array":
		var v []any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			return nil, errorf("Parameter %q is expected to be an array.", name)
		}
		return v, nil
	case "object":
		var v map[string]any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			return nil, errorf("Parameter %q is expected to be a JSON object.", name)
		}
		return v, nil
	}
	return raw, nil
}

func hasSecurityParam(tools []Tool) bool {
	for _, t := range tools {
		var s struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if json.Unmarshal(t.Parameters, &s) == nil {
			if _, ok := s.Properties["security_risk"]; ok {
				return true
			}
		}
	}
	return false
}

// CallsSoFar counts the tool calls in a conversation, to number the next
// one.
func CallsSoFar(messages []event.Message) int {
	n := 0
	for _, m := range messages {
		if m.Role == event.RoleAssistant && len(m.ToolCalls) > 0 {
			n++
		}
	}
	return n
}

type keyValue struct {
	key   string
	value json.RawMessage
}

// orderedObject decodes a JSON object keeping its key order.
func orderedObject(data []byte) ([]keyValue, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var out []keyValue
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, keyValue{key, v})
	}
	return out, nil
}
