package tool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/gohands/gohands/tool"
)

// FuzzParseAction feeds arbitrary bytes to ParseAction: it must never
// panic, every failure must be a *FieldError, and every action it accepts
// must survive an encode/parse round trip unchanged.
func FuzzParseAction(f *testing.F) {
	for _, s := range []string{
		`{"command":"view","path":"/x"}`,
		`{"command":"insert","path":"/x","insert_line":3.0,"view_range":[1,-1],"recursive":false}`,
		`{"command":"view","path":"/x","insert_line":1e400}`,
		`{"command":"view","path":"/x","insert_line":-9223372036854775809}`,
		`{"command":"view","path":"/x","timeout":null,"file_text":"\u0000"}`,
		`{"task_list":[{"title":"t","status":"done"}]}`, `[]`, `null`, `""`, `{`, `{"a":1}{`, "\xff",
	} {
		f.Add([]byte(s))
	}
	edit := tool.New("edit_fuzz", "d", func(context.Context, *editAction) (*editObs, error) { return &editObs{}, nil }, nil)
	plan := tool.New("plan_fuzz", "d", func(context.Context, *planAction) (*editObs, error) { return &editObs{}, nil }, nil)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, tl := range []tool.Tool{edit, plan} {
			a, err := tl.ParseAction(data)
			if err != nil {
				var fe *tool.FieldError
				if !errors.As(err, &fe) {
					t.Fatalf("%s: error %T is not a *FieldError: %v", tl.Name(), err, err)
				}
				continue
			}
			enc, err := json.Marshal(a)
			if err != nil {
				t.Fatalf("%s: encoding accepted action: %v", tl.Name(), err)
			}
			b, err := tl.ParseAction(enc)
			if err != nil {
				t.Fatalf("%s: re-parsing %s: %v", tl.Name(), enc, err)
			}
			// Compared as JSON: with omitempty, an empty list and no list
			// encode alike.
			if enc2, _ := json.Marshal(b); !bytes.Equal(enc, enc2) {
				t.Fatalf("%s: round trip changed the action: %s -> %s", tl.Name(), enc, enc2)
			}
		}
	})
}

// FuzzPrepareCall runs the whole repair pipeline on arbitrary tool names
// and argument text: it must never panic, and fail only with *CallError.
func FuzzPrepareCall(f *testing.F) {
	f.Add("risky", `{"command":"ls","security_risk":"LOW"}`)
	f.Add("bash", "{\"command\":\"a\nb\"}")
	f.Add("git", `{"command":7}`)
	f.Add("str_replace </x", `{"path":"/a","view_range":"[1, 2]"}`)
	f.Add("grep", `{"pattern":"x","path":"/tmp","include":"*.go"}`)
	f.Add("reader", `{"summary":["a","b"],"command":"x"}`)
	tools := []tool.Tool{newRisky(), newReader(), newTicket(),
		tool.New("terminal", "d", func(context.Context, *riskyAction) (*plainObs, error) { return &plainObs{}, nil }, nil),
		tool.New("file_editor", "d", func(context.Context, *editAction) (*editObs, error) { return &editObs{}, nil }, nil)}
	f.Fuzz(func(t *testing.T, name, args string) {
		for _, honour := range []bool{false, true} {
			c, err := tool.PrepareCall(tools, name, args, honour)
			if err != nil {
				var ce *tool.CallError
				if !errors.As(err, &ce) {
					t.Fatalf("error %T is not a *CallError: %v", err, err)
				}
				continue
			}
			if c.Action == nil || c.Tool == nil || !json.Valid([]byte(c.Arguments)) {
				t.Fatalf("incomplete call %+v", c)
			}
		}
	})
}
