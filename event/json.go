package event

import (
	"bytes"
	"encoding/json"
	"sync"
)

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// marshal encodes v as compact JSON without HTML escaping, the way Pydantic
// writes it (Python leaves <, > and & alone).
func marshal(v any) ([]byte, error) {
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bufPool.Put(buf)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	b = b[:len(b)-1] // Encode appends a newline
	return bytes.Clone(b), nil
}

// MarshalJSON is json.Marshal without HTML escaping. Types that implement
// json.Marshaler in this module use it so nested output matches the reference.
func MarshalJSON(v any) ([]byte, error) { return marshal(v) }

// unmarshalStrict decodes data into v, rejecting fields v does not declare.
func unmarshalStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errTrailing
	}
	return nil
}

// List is a slice that encodes as [] rather than null when empty. The
// reference rejects null for list fields with a default, so fields of that
// kind use List.
type List[T any] []T

// MarshalJSON implements json.Marshaler.
func (l List[T]) MarshalJSON() ([]byte, error) {
	if l == nil {
		return []byte("[]"), nil
	}
	return marshal([]T(l))
}

// Map is a map that encodes as {} rather than null when empty.
type Map[K comparable, V any] map[K]V

// MarshalJSON implements json.Marshaler.
func (m Map[K, V]) MarshalJSON() ([]byte, error) {
	if m == nil {
		return []byte("{}"), nil
	}
	return marshal(map[K]V(m))
}
