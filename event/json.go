package event

import (
	"bytes"
	"encoding/json"

	"github.com/gohands/gohands/internal/wire"
)

// MarshalJSON encodes v the way the reference writes JSON: compact, no HTML
// escaping, Python-style floats, registered kinds tagged with "kind" last.
// Types that implement json.Marshaler in this module use it so nested output
// matches the reference.
func MarshalJSON(v any) ([]byte, error) { return wire.Marshal(v) }

// AppendJSON is MarshalJSON appending to b.
func AppendJSON(b []byte, v any) ([]byte, error) { return wire.Append(b, v) }

// JSONAppender is implemented by types that encode themselves by appending
// to a buffer, typically by calling AppendJSON on a copy of the value
// whose type has no methods. The encoder calls it in preference to
// MarshalJSON and, trusting it, does not validate what it appends: it must
// append exactly one JSON value, compact as AppendJSON writes it.
type JSONAppender interface {
	AppendJSON(b []byte) ([]byte, error)
}

// UnmarshalJSON decodes data into v (a non-nil pointer) by the codec's
// rules: keys match exactly, unknown keys are ignored, and the field
// options of the package documentation apply (nullempty, emitempty,
// kinded). UnmarshalJSON methods that decode a type through a copy of it
// without methods use it.
func UnmarshalJSON(data []byte, v any) error { return wire.Decode(data, v, false) }

// unmarshalStrict decodes data into v, rejecting fields v does not declare
// (at the top level).
func unmarshalStrict(data []byte, v any) error { return wire.Decode(data, v, true) }

// ErrUnknownField is returned (wrapped) when an object the reference decodes
// strictly (events, tool actions and observations, text content, error
// classifications) has a key its type does not declare.
var ErrUnknownField = wire.ErrUnknownField

// Float is a float64 that is always written with a fraction or exponent, as
// Python writes floats (30.0 rather than 30). The event encoder already
// writes float64 fields this way; Float is for values that must keep the
// form under encoding/json too.
type Float float64

// MarshalJSON implements json.Marshaler.
func (f Float) MarshalJSON() ([]byte, error) { return wire.AppendFloat(nil, float64(f), 64), nil }

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
	return wire.Marshal([]T(l))
}

// Map is a map that encodes as {} rather than null when empty.
type Map[K comparable, V any] map[K]V

func (Map[K, V]) emptyJSON() string { return "{}" }

// MarshalJSON implements json.Marshaler.
func (m Map[K, V]) MarshalJSON() ([]byte, error) {
	if m == nil {
		return []byte("{}"), nil
	}
	return wire.Marshal(map[K]V(m))
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
