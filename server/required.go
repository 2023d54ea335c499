package server

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// requiredMembers caches, per body type, the JSON names of its fields
// tagged required:"true" (nil when it has none).
var requiredMembers sync.Map // reflect.Type -> []string

// missingRequired returns a 422 for the first member of v's type tagged
// required:"true" that body (a JSON object) leaves out: the reference's
// bodies are pydantic models, which refuse `{}` when a member has no
// default, where Go's decoding would take the zero value.
func missingRequired(body []byte, v any) error {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	names, ok := requiredMembers.Load(t)
	if !ok {
		names, _ = requiredMembers.LoadOrStore(t, requiredNames(t))
	}
	req := names.([]string)
	if len(req) == 0 {
		return nil
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) != nil {
		return nil // not an object: the decoding already said so
	}
	for _, n := range req {
		if _, ok := members[n]; !ok {
			return &invalidError{loc: []any{"body", n}, typ: "missing", msg: "Field required"}
		}
	}
	return nil
}

func requiredNames(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		if f.Tag.Get("required") != "true" {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		out = append(out, name)
	}
	return out
}
