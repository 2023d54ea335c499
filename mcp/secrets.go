package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/gohands/gohands/internal/varref"
)

// expandSecrets replaces references to secrets in the string values of
// args (at any depth; keys are left alone), as the reference does before
// calling an MCP tool: a known secret is substituted, an unknown one with
// a default (${NAME:-default}) gets the default, anything else is kept.
// Member order and numbers are kept as written.
func expandSecrets(args json.RawMessage, lookup func(string) (string, bool)) (json.RawMessage, error) {
	if lookup == nil || !bytes.Contains(args, []byte("$")) {
		return args, nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var out bytes.Buffer
	// Stack of containers: for objects, whether the next string is a key.
	type frame struct {
		object, wantKey, first bool
	}
	var stack []frame
	sep := func() {
		if len(stack) == 0 {
			return
		}
		f := &stack[len(stack)-1]
		switch {
		case f.object && !f.wantKey:
			out.WriteByte(':')
		case !f.first:
			out.WriteByte(',')
		}
		f.first = false
		if f.object {
			f.wantKey = !f.wantKey
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				sep()
				out.WriteByte(byte(v))
				stack = append(stack, frame{object: v == '{', wantKey: v == '{', first: true})
			default:
				stack = stack[:len(stack)-1]
				out.WriteByte(byte(v))
			}
		case string:
			isKey := len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].wantKey
			sep()
			if !isKey {
				v = expandString(v, lookup)
			}
			b, _ := json.Marshal(v)
			out.Write(b)
		default:
			sep()
			b, _ := json.Marshal(v)
			out.Write(b)
		}
	}
	return out.Bytes(), nil
}

func expandString(s string, lookup func(string) (string, bool)) string {
	return varref.Expand(s, lookup, varref.Options{Unbraced: true, Defaults: true})
}
