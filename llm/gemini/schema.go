package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// schema is a schema in Gemini's subset of OpenAPI 3: the fields of the
// API's Schema object. Their order is the encoding's, pinned in testdata.
type schema struct {
	AnyOf            []*schema          `json:"anyOf,omitempty"`
	Default          any                `json:"default,omitempty"`
	Description      string             `json:"description,omitempty"`
	Enum             []string           `json:"enum,omitempty"`
	Example          any                `json:"example,omitempty"`
	Format           string             `json:"format,omitempty"`
	Items            *schema            `json:"items,omitempty"`
	MaxItems         *int64             `json:"maxItems,omitempty"`
	MaxLength        *int64             `json:"maxLength,omitempty"`
	MaxProperties    *int64             `json:"maxProperties,omitempty"`
	Maximum          *float64           `json:"maximum,omitempty"`
	MinItems         *int64             `json:"minItems,omitempty"`
	MinLength        *int64             `json:"minLength,omitempty"`
	MinProperties    *int64             `json:"minProperties,omitempty"`
	Minimum          *float64           `json:"minimum,omitempty"`
	Nullable         *bool              `json:"nullable,omitempty"`
	Pattern          string             `json:"pattern,omitempty"`
	Properties       map[string]*schema `json:"properties,omitempty"`
	PropertyOrdering []string           `json:"propertyOrdering,omitempty"`
	Required         []string           `json:"required,omitempty"`
	Title            string             `json:"title,omitempty"`
	Type             schemaType         `json:"type,omitempty"`
}

// schemaType is a schema type.
type schemaType string

// Schema types.
const (
	typeString  schemaType = "STRING"
	typeNumber  schemaType = "NUMBER"
	typeInteger schemaType = "INTEGER"
	typeBoolean schemaType = "BOOLEAN"
	typeArray   schemaType = "ARRAY"
	typeObject  schemaType = "OBJECT"
)

// Gemini takes function parameters in its own subset of OpenAPI 3 schema:
// one type per schema (nullable instead of type arrays), string enums
// only, no $ref, no additionalProperties, a few formats. toSchema turns a
// JSON schema into that subset, keeping what it can and saying in the
// description what it could not express (non-string enums).

// maxRefDepth bounds $ref inlining, so recursive schemas end.
const maxRefDepth = 4

// keyed is a JSON object that remembers its key order.
type keyed struct {
	keys   []string
	values map[string]json.RawMessage
}

func decodeKeyed(data []byte) (*keyed, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("want a JSON object")
	}
	k := &keyed{values: map[string]json.RawMessage{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if _, dup := k.values[name]; !dup {
			k.keys = append(k.keys, name)
		}
		k.values[name] = v
	}
	return k, nil
}

func (k *keyed) str(key string) string {
	var s string
	json.Unmarshal(k.values[key], &s)
	return s
}

type schemaConverter struct {
	defs  map[string]json.RawMessage // "#/$defs/x" -> schema
	depth int
}

// toSchema converts the JSON schema of a tool's parameters. It returns nil
// for an object schema without properties: Gemini rejects empty objects,
// and a function without parameters is declared without them.
func toSchema(raw json.RawMessage) (*schema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	root, err := decodeKeyed(raw)
	if err != nil {
		return nil, fmt.Errorf("parameters: %w", err)
	}
	c := &schemaConverter{defs: map[string]json.RawMessage{}}
	for _, defsKey := range []string{"$defs", "definitions"} {
		if d, ok := root.values[defsKey]; ok {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(d, &m); err != nil {
				return nil, fmt.Errorf("parameters: %s: %w", defsKey, err)
			}
			for name, s := range m {
				c.defs["#/"+defsKey+"/"+name] = s
			}
		}
	}
	s, err := c.convert(root)
	if err != nil {
		return nil, fmt.Errorf("parameters: %w", err)
	}
	if s.Type == typeObject && len(s.Properties) == 0 {
		return nil, nil
	}
	return s, nil
}

var jsonTypes = map[string]schemaType{
	"string": typeString, "number": typeNumber, "integer": typeInteger,
	"boolean": typeBoolean, "array": typeArray, "object": typeObject,
}

// formats Gemini accepts, per type.
var formats = map[schemaType][]string{
	typeString:  {"enum", "date-time"},
	typeNumber:  {"float", "double"},
	typeInteger: {"int32", "int64"},
}

func (c *schemaConverter) convertRaw(raw json.RawMessage) (*schema, error) {
	if b := bytes.TrimSpace(raw); bytes.Equal(b, []byte("true")) || bytes.Equal(b, []byte("{}")) {
		// "Anything": the closest Gemini has is a string.
		return &schema{Type: typeString}, nil
	}
	k, err := decodeKeyed(raw)
	if err != nil {
		return nil, err
	}
	return c.convert(k)
}

func (c *schemaConverter) convert(k *keyed) (*schema, error) {
	if ref := k.str("$ref"); ref != "" {
		def, ok := c.defs[ref]
		if !ok {
			return nil, fmt.Errorf("$ref %q: not found (only local $defs are supported)", ref)
		}
		if c.depth >= maxRefDepth {
			// A recursive type: stop with an opaque object.
			return &schema{Type: typeObject, Description: k.str("description")}, nil
		}
		c.depth++
		defer func() { c.depth-- }()
		s, err := c.convertRaw(def)
		if err != nil {
			return nil, err
		}
		if d := k.str("description"); d != "" {
			s.Description = d
		}
		return s, nil
	}

	s := &schema{Description: k.str("description"), Title: k.str("title")}
	// Types: one type, or a list that may include "null".
	var types []string
	if t, ok := k.values["type"]; ok {
		var one string
		if json.Unmarshal(t, &one) == nil {
			types = []string{one}
		} else if err := json.Unmarshal(t, &types); err != nil {
			return nil, fmt.Errorf("type: %w", err)
		}
	}
	if i := slices.Index(types, "null"); i >= 0 {
		types = slices.Delete(types, i, i+1)
		s.Nullable = new(true)
	}
	var alts []json.RawMessage
	for _, key := range []string{"anyOf", "oneOf"} {
		if v, ok := k.values[key]; ok {
			var list []json.RawMessage
			if err := json.Unmarshal(v, &list); err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			alts = append(alts, list...)
		}
	}

	switch {
	case len(types) > 1:
		// Several types: an anyOf of one schema per type.
		for _, t := range types {
			sub := &keyed{keys: slices.Clone(k.keys), values: map[string]json.RawMessage{}}
			maps.Copy(sub.values, k.values)
			sub.values["type"], _ = json.Marshal(t)
			delete(sub.values, "description")
			alt, err := c.convert(sub)
			if err != nil {
				return nil, err
			}
			s.AnyOf = append(s.AnyOf, alt)
		}
		return s, nil
	case len(alts) > 0:
		for _, a := range alts {
			if isNullSchema(a) {
				s.Nullable = new(true)
				continue
			}
			alt, err := c.convertRaw(a)
			if err != nil {
				return nil, err
			}
			s.AnyOf = append(s.AnyOf, alt)
		}
		if len(s.AnyOf) == 1 {
			// anyOf [X, null] is X, nullable.
			one := s.AnyOf[0]
			one.Nullable = s.Nullable
			if s.Description != "" {
				one.Description = s.Description
			}
			return one, nil
		}
		return s, nil
	case len(types) == 1:
		t, ok := jsonTypes[types[0]]
		if !ok {
			return nil, fmt.Errorf("type %q: unknown", types[0])
		}
		s.Type = t
	default:
		// No type: infer one from what the schema has.
		switch {
		case k.values["properties"] != nil:
			s.Type = typeObject
		case k.values["items"] != nil:
			s.Type = typeArray
		default:
			s.Type = typeString
		}
	}

	if err := c.enum(k, s); err != nil {
		return nil, err
	}
	if f := k.str("format"); f != "" && slices.Contains(formats[s.Type], f) {
		s.Format = f
	}
	for key, dst := range map[string]**float64{"minimum": &s.Minimum, "maximum": &s.Maximum} {
		if v, ok := k.values[key]; ok {
			var f float64
			if json.Unmarshal(v, &f) == nil {
				*dst = &f
			}
		}
	}
	for key, dst := range map[string]**int64{
		"minItems": &s.MinItems, "maxItems": &s.MaxItems, "minLength": &s.MinLength, "maxLength": &s.MaxLength,
		"minProperties": &s.MinProperties, "maxProperties": &s.MaxProperties,
	} {
		if v, ok := k.values[key]; ok {
			var n int64
			if json.Unmarshal(v, &n) == nil {
				*dst = &n
			}
		}
	}
	if s.Type == typeString {
		s.Pattern = k.str("pattern")
	}

	switch s.Type {
	case typeArray:
		if items, ok := k.values["items"]; ok {
			it, err := c.convertRaw(items)
			if err != nil {
				return nil, fmt.Errorf("items: %w", err)
			}
			s.Items = it
		} else {
			s.Items = &schema{Type: typeString}
		}
	case typeObject:
		if props, ok := k.values["properties"]; ok {
			pk, err := decodeKeyed(props)
			if err != nil {
				return nil, fmt.Errorf("properties: %w", err)
			}
			s.Properties = map[string]*schema{}
			for _, name := range pk.keys {
				p, err := c.convertRaw(pk.values[name])
				if err != nil {
					return nil, fmt.Errorf("property %s: %w", name, err)
				}
				s.Properties[name] = p
			}
			if len(pk.keys) > 1 {
				s.PropertyOrdering = pk.keys
			}
		}
		if req, ok := k.values["required"]; ok {
			var names []string
			if err := json.Unmarshal(req, &names); err != nil {
				return nil, fmt.Errorf("required: %w", err)
			}
			for _, n := range names {
				// Gemini rejects required names that are not properties.
				if _, ok := s.Properties[n]; ok {
					s.Required = append(s.Required, n)
				}
			}
		}
	}
	return s, nil
}

// isNullSchema reports whether raw is {"type": "null"}.
func isNullSchema(raw json.RawMessage) bool {
	var s struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(raw, &s) == nil && s.Type == "null"
}

// enum converts enum and const. Gemini takes enums of strings only; other
// values are listed in the description instead.
func (c *schemaConverter) enum(k *keyed, s *schema) error {
	var values []any
	if v, ok := k.values["enum"]; ok {
		if err := json.Unmarshal(v, &values); err != nil {
			return fmt.Errorf("enum: %w", err)
		}
	} else if v, ok := k.values["const"]; ok {
		var one any
		if err := json.Unmarshal(v, &one); err != nil {
			return fmt.Errorf("const: %w", err)
		}
		values = []any{one}
	}
	if len(values) == 0 {
		return nil
	}
	var strs []string
	for _, v := range values {
		if str, ok := v.(string); ok {
			strs = append(strs, str)
		}
	}
	if s.Type == typeString && len(strs) == len(values) {
		s.Enum = strs
		s.Format = "enum"
		return nil
	}
	parts := make([]string, len(values))
	for i, v := range values {
		b, _ := json.Marshal(v)
		parts[i] = string(b)
	}
	note := "Allowed values: " + strings.Join(parts, ", ") + "."
	if s.Description != "" {
		note = s.Description + " " + note
	}
	s.Description = note
	return nil
}
