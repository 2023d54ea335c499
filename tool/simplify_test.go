package tool_test

import (
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

func TestSimplify(t *testing.T) {
	in := `{
	  "type": "object",
	  "title": "Args",
	  "additionalProperties": false,
	  "$defs": {
	    "Node": {"type": "object", "description": "A tree node.", "properties": {
	      "name": {"type": "string", "minLength": 1},
	      "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}},
	    "Mode": {"type": "string", "enum": ["fast", "slow"], "title": "Mode"}
	  },
	  "properties": {
	    "query": {"type": "string", "description": "What to find.", "default": "x", "maxLength": 10},
	    "limit": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}], "default": null, "description": "Max results."},
	    "mode": {"$ref": "#/$defs/Mode"},
	    "tree": {"$ref": "#/$defs/Node"},
	    "anything": true,
	    "loose": {"properties": {"a": {"type": "boolean"}}, "required": ["a"]}
	  },
	  "required": ["query"]
	}`
	s, err := tool.DecodeSchema([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out, err := event.MarshalJSON(tool.Simplify(s))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"properties":{` +
		`"query":{"description":"What to find.","type":"string"},` +
		`"limit":{"description":"Max results.","type":"integer"},` +
		`"mode":{"enum":["fast","slow"],"type":"string"},` +
		`"tree":{"description":"A tree node.","properties":{"name":{"type":"string"},"children":{"items":{"description":"A tree node.","type":"object"},"type":"array"}},"type":"object"},` +
		`"anything":{},` +
		`"loose":{"properties":{"a":{"type":"boolean"}},"required":["a"],"type":"object"}` +
		`},"required":["query"],"type":"object"}`
	if string(out) != want {
		t.Errorf("Simplify:\n got %s\nwant %s", out, want)
	}
}
