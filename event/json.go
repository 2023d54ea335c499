package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// marshal encodes v with the package's encoder (see encode.go).
func marshal(v any) ([]byte, error) {
	return withScratch(func(b []byte) ([]byte, error) { return appendJSON(b, v) })
}

var scratchPool = sync.Pool{New: func() any { return new([]byte) }}

// withScratch runs enc on a pooled buffer and returns a right-sized copy of
// the result: one allocation, and no growing of a fresh slice.
func withScratch(enc func([]byte) ([]byte, error)) ([]byte, error) {
	bp := scratchPool.Get().(*[]byte)
	b, err := enc((*bp)[:0])
	var out []byte
	if err == nil {
		out = bytes.Clone(b)
	}
	if cap(b) <= 1<<20 { // do not keep huge buffers alive
		*bp = b[:0]
		scratchPool.Put(bp)
	}
	return out, err
}

// MarshalJSON encodes v the way the reference writes JSON: compact, no HTML
// escaping, Python-style floats, registered kinds tagged with "kind" last.
// Types that implement json.Marshaler in this module use it so nested output
// matches the reference.
func MarshalJSON(v any) ([]byte, error) { return marshal(v) }

// AppendJSON is MarshalJSON appending to b.
func AppendJSON(b []byte, v any) ([]byte, error) { return appendJSON(b, v) }

// JSONAppender is implemented by types that encode themselves by appending
// to a buffer, typically by calling AppendJSON on a copy of the value
// whose type has no methods. The encoder calls it in preference to
// MarshalJSON and, trusting it, does not validate what it appends: it must
// append exactly one JSON value, compact as AppendJSON writes it.
type JSONAppender interface {
	AppendJSON(b []byte) ([]byte, error)
}

// unmarshalStrict decodes data into v, rejecting fields v does not declare
// (at the top level; see decode.go).
func unmarshalStrict(data []byte, v any) error { return decodeJSON(data, v, true) }

// ErrUnknownField is returned (wrapped) when an object the reference decodes
// strictly (events, tool actions and observations, text content, error
// classifications) has a key its type does not declare.
var ErrUnknownField = errors.New("event: unknown field")

// unknownFieldError names the key; it matches ErrUnknownField without
// repeating its prefix inside the decoding error that wraps it.
type unknownFieldError struct{ key string }

func (e unknownFieldError) Error() string { return fmt.Sprintf("unknown field %q", e.key) }
func (e unknownFieldError) Unwrap() error { return ErrUnknownField }

// List is a slice that encodes as [] rather than null when empty. The
// reference rejects null for list fields with a default, so fields of that
// kind use List.
type List[T any] []T

func (List[T]) emptyJSON() string { return "[]" }

// MarshalJSON implements json.Marshaler.
func (l List[T]) MarshalJSON() ([]byte, error) {
	if l == nil {
		return []byte("[]"), nil
	}
	return marshal([]T(l))
}

// Map is a map that encodes as {} rather than null when empty.
type Map[K comparable, V any] map[K]V

func (Map[K, V]) emptyJSON() string { return "{}" }

// MarshalJSON implements json.Marshaler.
func (m Map[K, V]) MarshalJSON() ([]byte, error) {
	if m == nil {
		return []byte("{}"), nil
	}
	return marshal(map[K]V(m))
}

// isNull reports whether raw is absent or the JSON null.
func isNull(raw json.RawMessage) bool {
	r := bytes.TrimSpace(raw)
	return len(r) == 0 || bytes.Equal(r, []byte("null"))
}

// rawOrNil returns raw, or nil when it is null, so that a decoded null reads
// as absent (the reference omits nulls).
func rawOrNil(raw json.RawMessage) json.RawMessage {
	if isNull(raw) {
		return nil
	}
	return raw
}
