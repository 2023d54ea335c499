package event

import (
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/gohands/gohands/internal/wire"
)

// Kinded is implemented by values that carry a "kind" discriminator. Types
// registered with RegisterKind need not implement it: the registry knows their
// kind from their Go type.
type Kinded interface {
	Kind() string
}

// RegisterKind ties the struct type T to kind name. Values of the kind are
// handled as *T. It panics if name or T is already registered to something
// else, since that is a programming error found at init.
//
// Call it from an init function of the package that defines T.
func RegisterKind[T any](name string) { wire.RegisterKind(name, reflect.TypeFor[T]()) }

// kindAliases maps kind names no longer written to the kinds that read
// them (see RegisterKindAlias).
var kindAliases sync.Map

// RegisterKindAlias makes the decoder read objects of kind old, which is
// no longer written, as the registered kind name: a value that was
// persisted under a former name loads, and is written back under the
// current one. Call it from an init function.
func RegisterKindAlias(old, name string) { kindAliases.Store(old, name) }

// KindOf returns the kind name of v, a pointer to (or value of) a registered
// struct type, or of a value implementing Kinded.
func KindOf(v any) (string, bool) { return wire.KindOf(v) }

// MarshalKinded encodes v, which must be a registered kind or implement
// Kinded, as a JSON object with "kind" as its last key.
func MarshalKinded(v any) ([]byte, error) {
	return wire.WithScratch(func(b []byte) ([]byte, error) { return wire.AppendKinded(b, v) })
}

// AppendKinded is MarshalKinded appending to b.
func AppendKinded(b []byte, v any) ([]byte, error) { return wire.AppendKinded(b, v) }

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
	v, err := decodeKinded(data, reflect.TypeFor[T], func(v any) bool { _, ok := v.(T); return ok })
	if err != nil {
		var zero T
		return zero, err
	}
	return v.(T), nil
}

// decodeKindedAs is DecodeKinded for the interface type t; the codec calls
// it for interface values (see wirecodec.go).
func decodeKindedAs(data []byte, t reflect.Type) (any, error) {
	return decodeKinded(data, func() reflect.Type { return t }, func(v any) bool {
		return reflect.TypeOf(v).AssignableTo(t)
	})
}

// decodeKinded decodes data into a new value of its kind, which is
// must accept; typ names the wanted type in errors.
func decodeKinded(data []byte, typ func() reflect.Type, is func(any) bool) (any, error) {
	name, err := wire.FindKind(data)
	if err != nil {
		return nil, err
	}
	v, ok := wire.NewKind(name)
	if !ok {
		if alias, found := kindAliases.Load(name); found {
			v, ok = wire.NewKind(alias.(string))
		}
	}
	if !ok {
		if u, fits, err := decodeUnknown(data, name, typ()); fits {
			return u, err
		}
		return nil, fmt.Errorf("%w %q for %v", ErrUnknownKind, name, typ())
	}
	if !is(v) {
		return nil, fmt.Errorf("event: kind %q is not a %v", name, typ())
	}
	if d, ok := v.(kindDecoder); ok {
		err = d.decodeKind(name, data)
	} else {
		if d, ok := v.(Defaulter); ok {
			d.SetDefaults()
		}
		err = wire.DecodeKind(data, name, v)
	}
	if err != nil {
		return nil, fmt.Errorf("event: decoding %s: %w", name, err)
	}
	return v, nil
}
