// Package shadow checks that a wire "shadow" struct (a type's fields
// declared again for JSON, e.g. with pointers so that an empty value is
// written as null) stays in step with the type it shadows: a field added to
// one and forgotten in the other fails a test instead of silently going
// missing from the wire.
package shadow

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// Check reports the differences between the exported fields of typ and
// those of its shadow, matched by Go name: a field in one and not the
// other, a field whose JSON key differs (when both sides have one), or a
// field whose type is not the same on both sides up to one pointer (T and
// *T) or a named type of the same shape (map[string]any and
// event.Map[string, any]); a json.RawMessage, decoded later, matches any
// type. Fields tagged json:"-" and the names listed in
// ignore are skipped on both sides.
func Check(typ, shadow reflect.Type, ignore ...string) []string {
	a, b := fields(typ), fields(shadow)
	skip := map[string]bool{}
	for _, k := range ignore {
		skip[k] = true
	}
	var diffs []string
	for k, fa := range a {
		if skip[k] {
			continue
		}
		fb, ok := b[k]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("%s.%s has no field in %s", typ.Name(), k, shadow.Name()))
			continue
		}
		if !compatible(fa.Type, fb.Type) {
			diffs = append(diffs, fmt.Sprintf("%s is %s in %s but %s in %s", k, fa.Type, typ.Name(), fb.Type, shadow.Name()))
		}
		if ka, kb := key(fa), key(fb); ka != "" && kb != "" && ka != kb {
			diffs = append(diffs, fmt.Sprintf("%s is %q in %s but %q in %s", k, ka, typ.Name(), kb, shadow.Name()))
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok && !skip[k] {
			diffs = append(diffs, fmt.Sprintf("%s.%s has no field in %s", shadow.Name(), k, typ.Name()))
		}
	}
	return diffs
}

func fields(t reflect.Type) map[string]reflect.StructField {
	m := map[string]reflect.StructField{}
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		if key(f) == "-" {
			continue
		}
		m[f.Name] = f
	}
	return m
}

// key returns the JSON key of f's tag, or "" if it has none.
func key(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

func compatible(a, b reflect.Type) bool {
	if a == rawMessage || b == rawMessage {
		return true
	}
	if a.Kind() == reflect.Pointer && b.Kind() != reflect.Pointer {
		a = a.Elem()
	}
	if b.Kind() == reflect.Pointer && a.Kind() != reflect.Pointer {
		b = b.Elem()
	}
	if a == b {
		return true
	}
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case reflect.Map:
		return compatible(a.Key(), b.Key()) && compatible(a.Elem(), b.Elem())
	case reflect.Slice, reflect.Pointer:
		return compatible(a.Elem(), b.Elem())
	}
	return a.ConvertibleTo(b) && a.Kind() != reflect.Struct
}
