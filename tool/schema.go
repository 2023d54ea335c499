package tool

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/gohands/gohands/event"
)

// Action struct conventions, followed by every tool in this module:
//
//   - `json:"name"` names the argument.
//   - `desc:"..."` is the argument's description for the model. The tag
//     `jsonschema:"..."` of the MCP Go SDK and adk-go (github.com/google/jsonschema-go)
//     is read the same way, so a struct written for them works unchanged.
//   - `enum:"a,b,c"` restricts a string argument (or the elements of a
//     []string argument) to those values.
//   - `default:"..."` is the value a missing argument takes: the literal
//     text for string fields, JSON otherwise (`default:"30"`,
//     `default:"true"`). Defaults are applied by ParseAction so the decoded
//     action, and the action JSON stored in the event log, carry them, as
//     the reference's models do. They are not shown to the model.
//   - An argument is required unless its type is a pointer, its json tag
//     has omitempty or omitzero, it has a default, or it has the tag
//     `optional:"true"`.
//   - `hidden:"true"` keeps a field out of the schema: it is written and
//     read with the action's JSON, but the model is not told of it and
//     ParseAction rejects it as unknown (a tool that accepts it reads it
//     itself, as the task tool does max_turns).
//
// Supported field types: strings, booleans, all integer and float kinds,
// slices and arrays of any supported type, nested structs (also through
// pointers and slices, e.g. a list of task items), maps with string keys
// (plain "object"), and any/interface values (no constraint). Embedded
// structs are flattened as encoding/json does. A type may describe itself
// by implementing [Schemaer].
//
// For example:
//
//	type Action struct {
//		Command string `json:"command" desc:"The command to run." enum:"view,create"`
//		IsInput bool   `json:"is_input" optional:"true" desc:"Send to the running process."`
//		Timeout *float64 `json:"timeout,omitempty" desc:"Hard timeout in seconds."`
//	}

// Schemaer is implemented by types that describe their own JSON schema
// (for example a type with a custom JSON encoding). The returned schema
// must use only the simplified vocabulary of SchemaFor.
type Schemaer interface {
	JSONSchema() map[string]any
}

// Schema keys. A simplified schema uses only these, as the reference's
// does: "type", "description", "properties" (a [Properties]), "required"
// (a []string), "items" and "enum".

// Property is one entry of a schema's "properties".
type Property struct {
	Name   string
	Schema map[string]any
}

// Properties is the "properties" object of a JSON schema, in order. Go maps
// have no order, but the order matters to models (they tend to fill
// arguments in the order shown, and the meta-arguments go first), so
// schemas in this package keep properties in this ordered form and it
// marshals as a JSON object with its keys in order.
type Properties []Property

// Get returns the schema of the named property.
func (p Properties) Get(name string) (map[string]any, bool) {
	for _, q := range p {
		if q.Name == name {
			return q.Schema, true
		}
	}
	return nil, false
}

// MarshalJSON implements json.Marshaler: a JSON object in order.
func (p Properties) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, q := range p {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := event.MarshalJSON(q.Name)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := event.MarshalJSON(q.Schema)
		if err != nil {
			return nil, fmt.Errorf("property %q: %w", q.Name, err)
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON implements json.Unmarshaler, keeping the order of the keys.
// Nested schemas are decoded with DecodeSchema.
func (p *Properties) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("schema properties: expected an object")
	}
	var out Properties
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		v, err := decodeSubschema(raw)
		if err != nil {
			return fmt.Errorf("property %q: %w", name, err)
		}
		s, ok := v.(map[string]any)
		if !ok {
			// Boolean schemas: true accepts anything, false nothing.
			b, isBool := v.(bool)
			if !isBool {
				return fmt.Errorf("property %q: schema is not an object", name)
			}
			s = map[string]any{}
			if !b {
				s["not"] = map[string]any{}
			}
		}
		out = append(out, Property{Name: name, Schema: s})
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	*p = out
	return nil
}

// DecodeSchema decodes a JSON schema (from an MCP server, a file, ...) into
// the form this package uses: maps, with every "properties" object as an
// ordered [Properties]. Numbers decode as float64.
func DecodeSchema(data []byte) (map[string]any, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	if fields == nil {
		return nil, fmt.Errorf("schema: expected an object, got null")
	}
	out := make(map[string]any, len(fields))
	for k, raw := range fields {
		var err error
		switch k {
		case "properties":
			var p Properties
			err = json.Unmarshal(raw, &p)
			out[k] = p
		case "items", "additionalProperties", "not":
			out[k], err = decodeSubschema(raw)
		case "anyOf", "oneOf", "allOf", "prefixItems":
			var list []json.RawMessage
			if err = json.Unmarshal(raw, &list); err == nil {
				subs := make([]any, len(list))
				for i, r := range list {
					if subs[i], err = decodeSubschema(r); err != nil {
						break
					}
				}
				out[k] = subs
			}
		case "$defs", "definitions":
			var m map[string]json.RawMessage
			if err = json.Unmarshal(raw, &m); err == nil {
				defs := make(map[string]any, len(m))
				for name, r := range m {
					if defs[name], err = decodeSubschema(r); err != nil {
						break
					}
				}
				out[k] = defs
			}
		default:
			var v any
			err = json.Unmarshal(raw, &v)
			out[k] = v
		}
		if err != nil {
			return nil, fmt.Errorf("schema %q: %w", k, err)
		}
	}
	return out, nil
}

// decodeSubschema decodes a schema position that may also hold a boolean.
func decodeSubschema(raw json.RawMessage) (any, error) {
	if r := bytes.TrimSpace(raw); len(r) > 0 && r[0] == '{' {
		return DecodeSchema(r)
	}
	var v any
	err := json.Unmarshal(raw, &v)
	return v, err
}

// PropertiesOf returns the properties of schema in order. It accepts the
// ordered [Properties] this package builds and plain maps from elsewhere
// (sorted by name, since a map has no order).
func PropertiesOf(schema map[string]any) Properties {
	switch p := schema["properties"].(type) {
	case Properties:
		return p
	case map[string]any:
		names := make([]string, 0, len(p))
		for n := range p {
			names = append(names, n)
		}
		sort.Strings(names)
		out := make(Properties, 0, len(p))
		for _, n := range names {
			s, _ := p[n].(map[string]any)
			out = append(out, Property{Name: n, Schema: s})
		}
		return out
	}
	return nil
}

// RequiredOf returns the "required" names of schema, whether stored as
// []string or as decoded JSON ([]any).
func RequiredOf(schema map[string]any) []string {
	switch r := schema["required"].(type) {
	case []string:
		return r
	case []any:
		out := make([]string, 0, len(r))
		for _, v := range r {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// typeInfo is what ParseAction needs beyond the schema: JSON names, and the
// defaults of missing fields, per struct level.
type typeInfo struct {
	kind   reflect.Kind // Struct, Slice (elem), Pointer is unwrapped
	fields []fieldInfo  // for structs
	elem   *typeInfo    // for slices and arrays
	intish bool         // an integer kind: JSON 3.0 is normalised to 3
}

type fieldInfo struct {
	name  string
	def   any // decoded default, or nil
	child *typeInfo
}

var schemaCache sync.Map // reflect.Type -> *derived

type derived struct {
	schema map[string]any
	info   *typeInfo
	err    error
}

// SchemaFor derives the LLM-facing JSON schema of the action type A, a
// struct, following the tag conventions above. The schema is simplified as
// the reference simplifies it: only type, description, properties
// (in field order), required (absent when nothing is required), items and
// enum.
//
// It panics if A cannot be described (not a struct, a field of an
// unsupported type such as a channel, or a malformed default tag): that is
// a programming error, found by the tool's first test.
func SchemaFor[A any]() map[string]any {
	d := derive(reflect.TypeFor[A]())
	if d.err != nil {
		panic(fmt.Sprintf("tool.SchemaFor[%v]: %v", reflect.TypeFor[A](), d.err))
	}
	return cloneSchema(d.schema)
}

func derive(t reflect.Type) *derived {
	if d, ok := schemaCache.Load(t); ok {
		return d.(*derived)
	}
	d := new(derived)
	if t.Kind() != reflect.Struct {
		d.err = fmt.Errorf("%v is not a struct type", t)
	} else {
		b := &builder{visiting: make(map[reflect.Type]bool)}
		d.schema, d.info, d.err = b.schema(t)
	}
	schemaCache.Store(t, d)
	return d
}

type builder struct {
	visiting map[reflect.Type]bool
}

var schemaerType = reflect.TypeFor[Schemaer]()

func (b *builder) schema(t reflect.Type) (map[string]any, *typeInfo, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(schemaerType) || reflect.PointerTo(t).Implements(schemaerType) {
		s := reflect.New(t).Interface().(Schemaer).JSONSchema()
		return cloneSchema(s), &typeInfo{kind: t.Kind()}, nil
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}, &typeInfo{kind: t.Kind()}, nil
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, &typeInfo{kind: t.Kind()}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}, &typeInfo{kind: t.Kind(), intish: true}, nil
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}, &typeInfo{kind: t.Kind()}, nil
	case reflect.Interface:
		return map[string]any{}, &typeInfo{kind: t.Kind()}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, nil, fmt.Errorf("map key type %v is not string", t.Key())
		}
		return map[string]any{"type": "object"}, &typeInfo{kind: t.Kind()}, nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			// encoding/json writes []byte as a base64 string.
			return map[string]any{"type": "string"}, &typeInfo{kind: reflect.String}, nil
		}
		items, info, err := b.schema(t.Elem())
		if err != nil {
			return nil, nil, err
		}
		return map[string]any{"type": "array", "items": items}, &typeInfo{kind: reflect.Slice, elem: info}, nil
	case reflect.Struct:
		if b.visiting[t] {
			// A recursive type: stop at a plain object rather than loop.
			return map[string]any{"type": "object"}, &typeInfo{kind: reflect.Map}, nil
		}
		b.visiting[t] = true
		defer delete(b.visiting, t)
		return b.object(t)
	}
	return nil, nil, fmt.Errorf("unsupported type %v", t)
}

func (b *builder) object(t reflect.Type) (map[string]any, *typeInfo, error) {
	var props Properties
	var required []string
	info := &typeInfo{kind: reflect.Struct}
	if err := b.fields(t, &props, &required, info); err != nil {
		return nil, nil, err
	}
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s, info, nil
}

func (b *builder) fields(t reflect.Type, props *Properties, required *[]string, info *typeInfo) error {
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" || f.Tag.Get("hidden") == "true" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if err := b.fields(ft, props, required, info); err != nil {
					return err
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		s, child, err := b.schema(f.Type)
		if err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
		if d := cmp.Or(f.Tag.Get("desc"), f.Tag.Get("jsonschema")); d != "" {
			s["description"] = d
		}
		if e := f.Tag.Get("enum"); e != "" {
			vals := strings.Split(e, ",")
			target := s
			if s["type"] == "array" {
				target, _ = s["items"].(map[string]any)
			}
			if target == nil || target["type"] != "string" {
				return fmt.Errorf("field %s: enum tag on a non-string type %v", f.Name, f.Type)
			}
			target["enum"] = vals
		}
		fi := fieldInfo{name: name, child: child}
		def, hasDef := f.Tag.Lookup("default")
		if hasDef {
			if fi.def, err = parseDefault(def, f.Type); err != nil {
				return fmt.Errorf("field %s: default %q: %w", f.Name, def, err)
			}
		}
		optional := f.Type.Kind() == reflect.Pointer || hasDef || f.Tag.Get("optional") == "true" ||
			strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
		if !optional {
			*required = append(*required, name)
		}
		*props = append(*props, Property{Name: name, Schema: s})
		info.fields = append(info.fields, fi)
	}
	return nil
}

// parseDefault decodes a default tag for a field of type t and checks that
// it fits the type.
func parseDefault(s string, t reflect.Type) (any, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	raw := []byte(s)
	if t.Kind() == reflect.String {
		raw, _ = json.Marshal(s)
	}
	if err := json.Unmarshal(raw, reflect.New(t).Interface()); err != nil {
		return nil, err
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// cloneSchema deep-copies a schema so callers may change what they get.
func cloneSchema(s map[string]any) map[string]any {
	if s == nil {
		return nil
	}
	out := make(map[string]any, len(s))
	for k, v := range s {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return cloneSchema(v)
	case Properties:
		out := make(Properties, len(v))
		for i, p := range v {
			out[i] = Property{Name: p.Name, Schema: cloneSchema(p.Schema)}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = cloneValue(e)
		}
		return out
	case []string:
		return append([]string(nil), v...)
	}
	return v
}
