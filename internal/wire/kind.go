package wire

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"unsafe"
)

// ErrNoKind is returned by FindKind for an object without a "kind".
var ErrNoKind = errors.New(`event: object has no "kind"`)

// Kinded is implemented by values that carry a "kind" discriminator without
// being registered.
type Kinded interface {
	Kind() string
}

// RawKinded is a value of a kind the program does not know, kept as the
// JSON object it was read from ("kind" included) and written back as is.
type RawKinded interface {
	Kinded
	RawKinded() []byte
}

var registry struct {
	mu     sync.RWMutex
	byName map[string]reflect.Type // the struct type; values are handled as *T
	byType map[reflect.Type]string
}

// RegisterKind ties the struct type t to kind name. It panics if name or t
// is already registered to something else, since that is a programming
// error found at init.
func RegisterKind(name string, t reflect.Type) {
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("event.RegisterKind(%q): %v is not a struct type", name, t))
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if registry.byName == nil {
		registry.byName = make(map[string]reflect.Type)
		registry.byType = make(map[reflect.Type]string)
	}
	if old, ok := registry.byName[name]; ok {
		if old == t {
			return
		}
		panic(fmt.Sprintf("event.RegisterKind: kind %q already registered to %v", name, old))
	}
	if old, ok := registry.byType[t]; ok {
		panic(fmt.Sprintf("event.RegisterKind: %v already registered as kind %q", t, old))
	}
	registry.byName[name] = t
	registry.byType[t] = name
	// A type's encoder depends on whether the type is a registered kind.
	encCache.Clear()
	memberCache.Clear()
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
	return registeredKind(t)
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
	t, ok := registry.byName[name]
	registry.mu.RUnlock()
	if !ok {
		return nil, false
	}
	return writtenNew(t).Interface(), true
}

// writtenNew is reflect.New(t) with the new value's first and last bytes
// written (with the zero they hold). Decoding may read a fresh value
// before writing it: a method promoted from an embedded struct, such as
// an event's EventBase, begins with a nil check that reads. The first
// read of a page the process has never touched maps the shared zero
// page, and the first write then replaces it: a second fault, and an
// interrupt to each other core running the process to flush the old
// mapping. On a virtual machine's cores that interrupt is dear: the ~30
// such faults of a replay of 1,001 events were about a seventh of its
// CPU time. Written first, each page is allocated once.
func writtenNew(t reflect.Type) reflect.Value {
	v := reflect.New(t)
	if n := t.Size(); n > 0 {
		p := v.UnsafePointer()
		*(*byte)(p) = 0
		*(*byte)(unsafe.Add(p, n-1)) = 0
	}
	return v
}

// kindName returns name as a string: the registered kind's own string
// when it names one, without allocating a copy (every event and every
// action and observation in it names its kind).
func kindName(name []byte) string {
	registry.mu.RLock()
	t, ok := registry.byName[string(name)]
	k := registry.byType[t]
	registry.mu.RUnlock()
	if ok && k == string(name) {
		return k
	}
	return string(name)
}

// registeredKind returns the kind of struct type t, if registered.
func registeredKind(t reflect.Type) (string, bool) {
	registry.mu.RLock()
	name, ok := registry.byType[t]
	registry.mu.RUnlock()
	return name, ok
}

// AppendKinded appends v, which must be a registered kind or implement
// Kinded, as a JSON object with "kind" as its last key.
func AppendKinded(b []byte, v any) ([]byte, error) {
	if v == nil {
		return nil, errors.New("event: cannot encode a nil kind")
	}
	if r, ok := v.(RawKinded); ok {
		return append(b, r.RawKinded()...), nil
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
	if name, ok := registeredKind(st); ok {
		// The encoder adds the kind of registered types itself.
		out, err := encoderFor(t)(b, rv)
		if err != nil {
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

// FindKind returns the kind of the JSON object data. The reference always
// writes kind last, which is the fast path; any other position is handled
// too. Whether data is valid JSON is left to the decoding that follows.
func FindKind(data []byte) (string, error) {
	if kind, ok := KindAtEnd(data); ok {
		return kind, nil
	}
	// Slow path: the kind is elsewhere, or spacing differs.
	st := &Decoder{Data: data}
	st.SkipSpace()
	if c, err := st.Peek(); err != nil || c != '{' {
		return "", errors.New("event: expected a JSON object")
	}
	var kind *string
	err := st.Object(func(key []byte) error {
		if string(key) != "kind" {
			return st.SkipValue()
		}
		if st.IsNullNext() {
			kind = nil
			return nil
		}
		k, err := st.Str()
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
		return "", ErrNoKind
	}
	return *kind, nil
}

// KindAtEnd returns the kind of a JSON object that ends with its "kind",
// as written by the reference: ...,"kind":"Name"} or {"kind":"Name"}.
func KindAtEnd(data []byte) (string, bool) {
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
		return kindName(name), true
	}
	return "", false
}
