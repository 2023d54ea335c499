package event

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"sync"
)

var errNoKind = errors.New(`event: object has no "kind"`)

// Kinded is implemented by values that carry a "kind" discriminator. Types
// registered with RegisterKind need not implement it: the registry knows their
// kind from their Go type.
type Kinded interface {
	Kind() string
}

type kindInfo struct {
	name string
	typ  reflect.Type // the struct type; values are handled as *T
}

var registry struct {
	mu     sync.RWMutex
	byName map[string]kindInfo
	byType map[reflect.Type]string
}

// RegisterKind ties the struct type T to kind name. Values of the kind are
// handled as *T. It panics if name or T is already registered to something
// else, since that is a programming error found at init.
//
// Call it from an init function of the package that defines T.
func RegisterKind[T any](name string) {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("event.RegisterKind(%q): %v is not a struct type", name, t))
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if registry.byName == nil {
		registry.byName = make(map[string]kindInfo)
		registry.byType = make(map[reflect.Type]string)
	}
	if old, ok := registry.byName[name]; ok {
		if old.typ == t {
			return
		}
		panic(fmt.Sprintf("event.RegisterKind: kind %q already registered to %v", name, old.typ))
	}
	if old, ok := registry.byType[t]; ok {
		panic(fmt.Sprintf("event.RegisterKind: %v already registered as kind %q", t, old))
	}
	registry.byName[name] = kindInfo{name: name, typ: t}
	registry.byType[t] = name
	resetEncoders()
}

// KindOf returns the kind name of v, a pointer to (or value of) a registered
// struct type, or of a value implementing Kinded.
func KindOf(v any) (string, bool) {
	if k, ok := v.(Kinded); ok {
		return k.Kind(), true
	}
	t := reflect.TypeOf(v)
	if t == nil {
		return "", false
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	registry.mu.RLock()
	name, ok := registry.byType[t]
	registry.mu.RUnlock()
	return name, ok
}

// Kinds returns the registered kind names.
func Kinds() []string {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	names := make([]string, 0, len(registry.byName))
	for n := range registry.byName {
		names = append(names, n)
	}
	return names
}

// NewKind returns a new zero value of the registered kind name, as a pointer.
func NewKind(name string) (any, bool) {
	registry.mu.RLock()
	info, ok := registry.byName[name]
	registry.mu.RUnlock()
	if !ok {
		return nil, false
	}
	return reflect.New(info.typ).Interface(), true
}

// MarshalKinded encodes v, which must be a registered kind or implement
// Kinded, as a JSON object with "kind" as its last key.
func MarshalKinded(v any) ([]byte, error) {
	return withScratch(func(b []byte) ([]byte, error) { return AppendKinded(b, v) })
}

// AppendKinded is MarshalKinded appending to b.
func AppendKinded(b []byte, v any) ([]byte, error) {
	if v == nil {
		return nil, errors.New("event: cannot encode a nil kind")
	}
	rv := reflect.ValueOf(v)
	t := rv.Type()
	st := t
	if st.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil, fmt.Errorf("event: cannot encode a nil %v", t)
		}
		st = st.Elem()
	}
	if _, ok := registeredKind(st); ok {
		// The encoder adds the kind of registered types itself.
		out, err := encoderFor(t)(b, rv)
		if err != nil {
			name, _ := registeredKind(st)
			return nil, fmt.Errorf("event: encoding %s: %w", name, err)
		}
		return out, nil
	}
	k, ok := v.(Kinded)
	if !ok {
		return nil, fmt.Errorf("event: %T has no registered kind", v)
	}
	name := k.Kind()
	start := len(b)
	b, err := encoderFor(t)(b, rv)
	if err != nil {
		return nil, fmt.Errorf("event: encoding %s: %w", name, err)
	}
	obj, err := appendKind(b[start:], name)
	if err != nil {
		return nil, err
	}
	return append(b[:start], obj...), nil
}

// appendKind adds "kind":name as the last key of the JSON object b.
func appendKind(b []byte, name string) ([]byte, error) {
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return nil, fmt.Errorf("event: kind %s does not encode as a JSON object", name)
	}
	out := make([]byte, 0, len(b)+len(name)+10)
	out = append(out, b[:len(b)-1]...)
	if len(b) > 2 {
		out = append(out, ',')
	}
	out = append(out, `"kind":"`...)
	out = append(out, name...)
	out = append(out, `"}`...)
	return out, nil
}

// findKind returns the kind of the JSON object data. The reference always
// writes kind last, which is the fast path; any other position is handled
// too. Whether data is valid JSON is left to the decoding that follows.
func findKind(data []byte) (string, error) {
	if kind, ok := kindAtEnd(data); ok {
		return kind, nil
	}
	// Slow path: the kind is elsewhere, or spacing differs.
	st := &decodeState{data: data}
	st.skipSpace()
	if c, err := st.peek(); err != nil || c != '{' {
		return "", errors.New("event: expected a JSON object")
	}
	var kind *string
	err := st.object(func(key []byte) error {
		if string(key) != "kind" {
			return st.skipValue()
		}
		if st.isNullNext() {
			kind = nil
			return nil
		}
		k, err := st.str()
		if err != nil {
			return fmt.Errorf(`"kind" is not a string: %w`, err)
		}
		kind = &k
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("event: %w", err)
	}
	if kind == nil {
		return "", errNoKind
	}
	return *kind, nil
}

// kindAtEnd returns the kind of a JSON object that ends with its "kind",
// as written by the reference: ...,"kind":"Name"} or {"kind":"Name"}.
func kindAtEnd(data []byte) (string, bool) {
	d := bytes.TrimRight(data, " \t\r\n")
	n := len(d)
	if n == 0 || d[n-1] != '}' {
		return "", false
	}
	body := d[:n-1]
	if len(body) == 0 || body[len(body)-1] != '"' {
		return "", false
	}
	q := bytes.LastIndexByte(body[:len(body)-1], '"')
	if q <= 0 {
		return "", false
	}
	name, head := body[q+1:len(body)-1], body[:q]
	if bytes.ContainsAny(name, `\"`) || !bytes.HasSuffix(head, []byte(`"kind":`)) {
		return "", false
	}
	head = head[:len(head)-len(`"kind":`)]
	if bytes.HasSuffix(head, []byte(",")) || bytes.Equal(bytes.TrimLeft(head, " \t\r\n"), []byte("{")) {
		return string(name), true
	}
	return "", false
}

// ErrUnknownKind is returned (wrapped) when a JSON object names a kind that is
// not registered.
var ErrUnknownKind = errors.New("event: unknown kind")

// Defaulter is implemented by kinds whose fields have defaults other than
// Go's zero values. DecodeKinded calls SetDefaults on the new value before
// decoding into it, so keys absent from the input keep their defaults, as
// they do in the reference.
type Defaulter interface {
	SetDefaults()
}

// kindDecoder is implemented by the package's event types, which decode
// themselves: they check the reference's rules after decoding. data is the
// whole object, "kind" included.
type kindDecoder interface {
	decodeKind(kind string, data []byte) error
}

// DecodeKinded decodes a JSON object carrying a "kind" into the registered
// type of that kind and returns it as T (an interface, or a pointer type).
// Unknown kinds, kinds that are not a T, and fields the type does not declare
// are errors that name the kind and the field.
func DecodeKinded[T any](data []byte) (T, error) {
	var zero T
	name, err := findKind(data)
	if err != nil {
		return zero, err
	}
	v, ok := NewKind(name)
	if !ok {
		return zero, fmt.Errorf("%w %q for %v", ErrUnknownKind, name, reflect.TypeFor[T]())
	}
	t, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("event: kind %q is not a %v", name, reflect.TypeFor[T]())
	}
	if d, ok := v.(kindDecoder); ok {
		err = d.decodeKind(name, data)
	} else {
		if d, ok := v.(Defaulter); ok {
			d.SetDefaults()
		}
		err = unmarshalKinded(data, name, v)
	}
	if err != nil {
		return zero, fmt.Errorf("event: decoding %s: %w", name, err)
	}
	return t, nil
}
