package tool

import "maps"

import "strings"

// Simplify rewrites a full JSON schema (an MCP server's inputSchema, a
// schema generated elsewhere) into the simplified vocabulary models handle
// best, as the reference does: local "$ref"s to "$defs" (or
// "definitions") are inlined, with a recursive reference cut to a plain
// object; "anyOf"/"oneOf" keep their first non-null alternative (so an
// optional X, written anyOf[X, null], becomes X); a boolean schema true
// becomes {}; and only type, description, properties, required, items and
// enum are kept. Property order is kept.
//
// Unlike the reference, properties are kept when "type" is absent (it is
// set to "object"), and oneOf is treated like anyOf.
func Simplify(schema map[string]any) map[string]any {
	defs, _ := schema["$defs"].(map[string]any)
	if defs == nil {
		defs, _ = schema["definitions"].(map[string]any)
	}
	return simplifyNode(schema, defs, map[string]bool{})
}

func simplifyNode(node any, defs map[string]any, visiting map[string]bool) map[string]any {
	n, ok := node.(map[string]any)
	if !ok {
		if b, isBool := node.(bool); isBool && !b {
			return map[string]any{"not": map[string]any{}}
		}
		return map[string]any{}
	}
	if ref, ok := n["$ref"].(string); ok {
		name := ref[strings.LastIndexByte(ref, '/')+1:]
		if def, found := defs[name]; found && (strings.HasPrefix(ref, "#/$defs/") || strings.HasPrefix(ref, "#/definitions/")) {
			if visiting[name] {
				out := map[string]any{"type": "object"}
				if d, ok := def.(map[string]any); ok && d["description"] != nil {
					out["description"] = d["description"]
				}
				return out
			}
			visiting[name] = true
			defer delete(visiting, name)
			return simplifyNode(def, defs, visiting)
		}
	}
	out := map[string]any{}
	if t, ok := n["type"]; ok {
		out["type"] = cloneValue(t)
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		alts, _ := n[key].([]any)
		for _, a := range alts {
			if m, ok := a.(map[string]any); ok && m["type"] == "null" {
				continue
			}
			maps.Copy(out, simplifyNode(a, defs, visiting))
			break
		}
		if len(alts) > 0 {
			break
		}
	}
	if d, ok := n["description"]; ok {
		out["description"] = d
	}
	if _, has := n["properties"]; has && (n["type"] == nil || n["type"] == "object") {
		out["type"] = "object"
		var props Properties
		for _, p := range PropertiesOf(n) {
			props = append(props, Property{Name: p.Name, Schema: simplifyNode(p.Schema, defs, visiting)})
		}
		out["properties"] = props
		if r := RequiredOf(n); len(r) > 0 {
			out["required"] = append([]string(nil), r...)
		}
	}
	if items, has := n["items"]; has && n["type"] == "array" {
		out["items"] = simplifyNode(items, defs, visiting)
	}
	if e, ok := n["enum"]; ok {
		out["enum"] = cloneValue(e)
	}
	return out
}
