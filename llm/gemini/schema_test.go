package gemini

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/internal/golden"
)

// TestSchemaGolden converts schemas of the shapes our tools produce (type
// arrays from pointers, $defs, enums, nested objects, anyOf) and pins the
// result.
func TestSchemaGolden(t *testing.T) {
	in := `{
	  "$schema": "https://json-schema.org/draft/2020-12/schema",
	  "type": "object",
	  "additionalProperties": false,
	  "$defs": {
	    "Range": {"type": "object", "properties": {"start": {"type": "integer", "minimum": 1}, "end": {"type": "integer"}}, "required": ["start"]},
	    "Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}
	  },
	  "properties": {
	    "command": {"type": "string", "enum": ["view", "create", "str_replace"], "description": "What to do."},
	    "path": {"type": "string", "format": "uri", "pattern": "^/"},
	    "view_range": {"type": ["array", "null"], "items": {"type": "integer"}, "minItems": 2, "maxItems": 2},
	    "range": {"$ref": "#/$defs/Range", "description": "A line range."},
	    "level": {"type": "integer", "enum": [1, 2, 3]},
	    "mode": {"const": "fast"},
	    "either": {"anyOf": [{"type": "string"}, {"type": "number", "format": "double"}]},
	    "maybe": {"anyOf": [{"type": "boolean"}, {"type": "null"}], "description": "Optional flag."},
	    "multi": {"type": ["string", "integer"]},
	    "tags": {"type": "array"},
	    "anything": {},
	    "tree": {"$ref": "#/$defs/Node"},
	    "when": {"type": "string", "format": "date-time", "default": "now", "examples": ["x"]}
	  },
	  "required": ["command", "path", "ghost"]
	}`
	s, err := toSchema(json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "schema.golden.json"), append(got, '\n'))

	// The points the golden file pins, spelled out.
	if s.Type != typeObject || len(s.PropertyOrdering) != 13 || s.PropertyOrdering[0] != "command" {
		t.Errorf("root: type %s, ordering %v", s.Type, s.PropertyOrdering)
	}
	if strings.Join(s.Required, ",") != "command,path" {
		t.Errorf("required %v: want names that are properties only", s.Required)
	}
	p := s.Properties
	if vr := p["view_range"]; vr.Type != typeArray || vr.Nullable == nil || !*vr.Nullable || vr.Items.Type != typeInteger {
		t.Errorf("view_range %+v", vr)
	}
	if r := p["range"]; r.Type != typeObject || r.Description != "A line range." || *r.Properties["start"].Minimum != 1 {
		t.Errorf("range %+v", r)
	}
	if l := p["level"]; l.Enum != nil || !strings.Contains(l.Description, "Allowed values: 1, 2, 3.") {
		t.Errorf("level %+v", l)
	}
	if m := p["mode"]; m.Type != typeString || len(m.Enum) != 1 || m.Enum[0] != "fast" {
		t.Errorf("mode %+v", m)
	}
	if m := p["maybe"]; m.Type != typeBoolean || m.Nullable == nil || m.Description != "Optional flag." {
		t.Errorf("maybe %+v", m)
	}
	if m := p["multi"]; len(m.AnyOf) != 2 || m.AnyOf[1].Type != typeInteger {
		t.Errorf("multi %+v", m)
	}
	if p["path"].Format != "" || p["when"].Format != "date-time" {
		t.Errorf("formats: path %q, when %q", p["path"].Format, p["when"].Format)
	}
}

func TestSchemaWithoutProperties(t *testing.T) {
	for _, in := range []string{``, `{"type":"object","properties":{}}`, `{"type":"object"}`} {
		s, err := toSchema(json.RawMessage(in))
		if err != nil || s != nil {
			t.Errorf("%q: got %+v, %v; want no parameters", in, s, err)
		}
	}
}

func TestSchemaErrors(t *testing.T) {
	for _, in := range []string{
		`[1]`,
		`{"type":"object","properties":{"a":{"$ref":"#/definitions/missing"}}}`,
		`{"type":"object","properties":{"a":{"type":"tuple"}}}`,
		`{"type":"object","properties":{"a":{"type":"string"}},"required":"a"}`,
	} {
		if _, err := toSchema(json.RawMessage(in)); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
}
