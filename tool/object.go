package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/wire"
)

// object is a JSON object as an ordered list of members with raw values.
// Repair works on it so the model's argument order and number literals
// survive untouched.
type object []member

type member struct {
	key string
	val json.RawMessage
}

// parseObject decodes a JSON object, keeping member order and raw values.
// A repeated key keeps its last value, at its first position (as Python's
// json.loads does). Values alias data.
func parseObject(data []byte) (object, error) {
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v) // for its error message
		if err == nil {
			err = fmt.Errorf("invalid JSON")
		}
		return nil, err
	}
	var o object
	err := wire.ScanObject(data, func(key, val []byte) error {
		o.set(string(key), json.RawMessage(val))
		return nil
	})
	if err != nil { // data is valid JSON, so it is not an object
		return nil, errNotObject
	}
	return o, nil
}

var errNotObject = fmt.Errorf("not a JSON object")

func (o object) index(key string) int {
	for i, m := range o {
		if m.key == key {
			return i
		}
	}
	return -1
}

func (o object) get(key string) (json.RawMessage, bool) {
	if i := o.index(key); i >= 0 {
		return o[i].val, true
	}
	return nil, false
}

func (o *object) set(key string, val json.RawMessage) {
	if i := o.index(key); i >= 0 {
		(*o)[i].val = val
		return
	}
	*o = append(*o, member{key, val})
}

// pop removes key and returns its value.
func (o *object) pop(key string) (json.RawMessage, bool) {
	i := o.index(key)
	if i < 0 {
		return nil, false
	}
	v := (*o)[i].val
	*o = append((*o)[:i:i], (*o)[i+1:]...)
	return v, true
}

func (o object) keys() []string {
	out := make([]string, len(o))
	for i, m := range o {
		out[i] = m.key
	}
	return out
}

// marshal writes o as compact JSON.
func (o object) marshal() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := event.MarshalJSON(m.key)
		b.Write(k)
		b.WriteByte(':')
		if err := json.Compact(&b, m.val); err != nil {
			b.Write(m.val)
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

func isNullRaw(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// rawString returns the string value of raw, if it is a JSON string.
func rawString(raw json.RawMessage) (string, bool) {
	var s string
	if r := bytes.TrimSpace(raw); len(r) == 0 || r[0] != '"' {
		return "", false
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

func mustRaw(v any) json.RawMessage {
	b, err := event.MarshalJSON(v)
	if err != nil {
		panic(err) // only called with strings, numbers, bools and decoded JSON
	}
	return b
}

// pyJSON renders JSON as Python's json.dumps does by default (", " and
// ": " separators, non-ASCII escaped), keeping member order, so generated
// summaries read the same as the reference's.
func pyJSON(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var b strings.Builder
	if err := pyValue(dec, &b); err != nil {
		return string(raw)
	}
	return b.String()
}

func pyValue(dec *json.Decoder, b *strings.Builder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		end, sep := "]", ", "
		if t == '{' {
			end = "}"
		}
		b.WriteString(t.String())
		for i := 0; dec.More(); i++ {
			if i > 0 {
				b.WriteString(sep)
			}
			if t == '{' {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				pyString(b, k.(string))
				b.WriteString(": ")
			}
			if err := pyValue(dec, b); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return err
		}
		b.WriteString(end)
	case string:
		pyString(b, t)
	case json.Number:
		b.WriteString(t.String())
	case bool:
		b.WriteString(strconv.FormatBool(t))
	case nil:
		b.WriteString("null")
	}
	return nil
}

func pyString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || (r >= 0x7f && r < 0x10000) || r == utf8.RuneError:
			fmt.Fprintf(b, `\u%04x`, r)
		case r >= 0x10000:
			r -= 0x10000
			fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// pyList renders names as a Python list of strings, as the reference's
// error messages show them: ['a', 'b'].
func pyList(names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		if strings.Contains(n, "'") && !strings.Contains(n, `"`) {
			parts[i] = `"` + n + `"`
		} else {
			parts[i] = "'" + strings.ReplaceAll(strings.ReplaceAll(n, `\`, `\\`), "'", `\'`) + "'"
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
