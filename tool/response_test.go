package tool_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tool/tooltest"
)

const answerSchema = `{
  "type": "object",
  "title": "Answer",
  "$defs": {"Level": {"type": "string", "enum": ["low", "high"]}},
  "properties": {
    "answer": {"type": "string", "description": "The answer."},
    "confidence": {"$ref": "#/$defs/Level"},
    "sources": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["answer"],
  "additionalProperties": false
}`

func registerRisky(t *testing.T) {
	t.Helper()
	if slices.Contains(tool.Registered(), "test_risky") {
		return
	}
	tool.Register("test_risky", func(tool.Context, json.RawMessage) ([]tool.Tool, error) {
		return []tool.Tool{newRisky()}, nil
	})
}

func TestResponseSchema(t *testing.T) {
	registerRisky(t)
	var rs map[string]any
	if err := json.Unmarshal([]byte(answerSchema), &rs); err != nil {
		t.Fatal(err)
	}
	tools, err := tool.Resolve(tool.Context{}, tool.Spec{Name: "test_risky", Params: event.Map[string, any]{"response_schema": rs}})
	if err != nil {
		t.Fatal(err)
	}
	tl := tools[0]
	tooltest.Goldens(t, renamed{tl, "risky_with_response"})

	call := `{"summary":"s","command":"ls","answer":"42","confidence":"high"}`
	c, err := tool.PrepareCall(tools, "risky", call, false)
	if err != nil {
		t.Fatal(err)
	}
	if a := c.Action.(*riskyAction); a.Command != "ls" {
		t.Errorf("action = %+v", a)
	}
	out, err := tool.ResponseOf(tl, c.Arguments)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"answer": "42", "confidence": "high"}; !reflect.DeepEqual(out, want) {
		t.Errorf("ResponseOf = %v, want %v", out, want)
	}
	for args, want := range map[string]string{
		`{"command":"ls"}`: `response_schema validation failed: missing required field "answer"`,
		`{"command":"ls","answer":"a","confidence":"mid"}`: `response_schema validation failed: field "confidence": "mid" is not one of [low high]`,
		`{"answer":"a"}`: `missing required field "command"`,
	} {
		if _, err := tool.PrepareCall(tools, "risky", args, false); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("PrepareCall(%s) = %v, want %q", args, err, want)
		}
	}
	if out, err := tool.ResponseOf(newRisky(), call); out != nil || err != nil {
		t.Errorf("ResponseOf a plain tool = %v, %v", out, err)
	}
}

func TestResponseSchemaErrors(t *testing.T) {
	registerRisky(t)
	for schema, want := range map[string]string{
		`{"type":"array"}`:  "must describe a JSON object",
		`{"type":"object"}`: "must define named properties",
		`{"type":"object","properties":{"a":{}},"minProperties":1}`:           "unsupported top-level keywords: ['minProperties']",
		`{"type":"object","properties":{"a":{}},"additionalProperties":true}`: "does not support dynamic fields",
		`{"type":"object","properties":{"a":{}},"required":["b"]}`:            "required fields ['b'] must be named properties",
		`{"type":"object","properties":{"summary":{},"kind":{}}}`:             "fields ['kind', 'summary'] are reserved",
		`{"type":"object","properties":{"command":{}}}`:                       "fields ['command'] collide",
	} {
		var rs any
		if err := json.Unmarshal([]byte(schema), &rs); err != nil {
			t.Fatal(err)
		}
		_, err := tool.Resolve(tool.Context{}, tool.Spec{Name: "test_risky", Params: event.Map[string, any]{"response_schema": rs}})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("response_schema %s: error %v, want %q", schema, err, want)
		}
	}
}

// renamed gives a tool another name, for golden file names.
type renamed struct {
	tool.Tool
	name string
}

func (r renamed) Name() string { return r.name }
