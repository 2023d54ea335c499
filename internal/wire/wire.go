// Package wire is the JSON codec behind package event: an encoder and a
// decoder that follow encoding/json's struct-tag rules but write and read
// what the Python reference (Pydantic) does, and the registry of "kind"
// names. Package event documents the rules and is the API; this package is
// its machinery, shared with the few packages of the module that scan JSON
// objects without decoding them (ScanObject).
//
// What the codec knows of event's types (content blocks, messages, events,
// List and Map) it learns through [Extend], so it imports none of them.
package wire

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"sync"
)

// EncFunc appends the encoding of v to b.
type EncFunc func(b []byte, v reflect.Value) ([]byte, error)

// DecFunc decodes the next value of d into v, which is settable. strict
// rejects keys v's type does not declare (see Decode).
type DecFunc func(d *Decoder, v reflect.Value, strict bool) error

// Extension teaches the codec about the types of the package that owns the
// wire format.
type Extension struct {
	// Encoders and Decoders replace the codec's own for the given types
	// (hand-written, faster or stricter ones).
	Encoders map[reflect.Type]EncFunc
	Decoders map[reflect.Type]DecFunc
	// Empty returns the literal written for a nil value of t ("[]" for a
	// list with a default), or false when nil is written as null.
	Empty func(t reflect.Type) (string, bool)
	// Fielded reports whether t implements json.Marshaler and
	// json.Unmarshaler by calling this codec, so that the codec must encode
	// and decode it field by field rather than call those methods.
	Fielded func(t reflect.Type) bool
	// Prepare is called on a non-nil pointer to a Fielded struct before it
	// is encoded; it returns the value to encode (defaults filled in).
	Prepare func(v any) (any, error)
	// DecodeKinded decodes data, a JSON object naming its kind, into a new
	// value of that kind, which must be assignable to t (an interface
	// type). It decodes interfaces with methods and fields tagged kinded.
	DecodeKinded func(data []byte, t reflect.Type) (any, error)
}

var ext Extension

// Extend installs x. It is called once, from the initialization of the
// package that owns the types, before anything is encoded.
func Extend(x Extension) bool {
	ext = x
	encCache.Clear()
	decCache.Clear()
	memberCache.Clear()
	return true
}

func extEmpty(t reflect.Type) (string, bool) {
	if ext.Empty == nil {
		return "", false
	}
	return ext.Empty(t)
}

func extFielded(t reflect.Type) bool { return ext.Fielded != nil && ext.Fielded(t) }

// Marshal encodes v with the codec into a right-sized slice.
func Marshal(v any) ([]byte, error) {
	return WithScratch(func(b []byte) ([]byte, error) { return Append(b, v) })
}

var scratchPool = sync.Pool{New: func() any { return new([]byte) }}

// WithScratch runs enc on a pooled buffer and returns a right-sized copy of
// the result: one allocation, and no growing of a fresh slice.
func WithScratch(enc func([]byte) ([]byte, error)) ([]byte, error) {
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

// ErrUnknownField is returned (wrapped) when an object decoded strictly has
// a key its type does not declare. Package event exports it.
var ErrUnknownField = errors.New("event: unknown field")

// UnknownFieldError names the key; it matches ErrUnknownField without
// repeating its prefix inside the decoding error that wraps it.
type UnknownFieldError struct{ Key string }

func (e UnknownFieldError) Error() string { return fmt.Sprintf("unknown field %q", e.Key) }
func (e UnknownFieldError) Unwrap() error { return ErrUnknownField }

// ErrStopScan may be returned by a ScanObject callback to end the scan
// early; ScanObject then returns nil.
var ErrStopScan = errors.New("event: stop scan")

// ScanObject calls fn with each top-level key and raw value of the JSON
// object data, in order, and checks that data is one complete, well-formed
// JSON object: a truncated or malformed one is an error. The key is valid
// only during the call. If fn returns ErrStopScan, the scan ends there and
// the rest of data is not checked.
func ScanObject(data []byte, fn func(key, value []byte) error) error {
	return scanObject(data, fn, (*Decoder).SkipValue)
}

// ScanValidObject is ScanObject for data known to be one well-formed JSON
// object, such as one that has just been decoded: it steps over values by
// their structure alone (a string ends at its first unescaped quote)
// without checking them, two to three times faster on events. On
// malformed data it may return wrong values or an error, never panic.
func ScanValidObject(data []byte, fn func(key, value []byte) error) error {
	return scanObject(data, fn, (*Decoder).skipValid)
}

func scanObject(data []byte, fn func(key, value []byte) error, skip func(*Decoder) error) error {
	d := &Decoder{Data: data}
	d.SkipSpace()
	if c, err := d.Peek(); err != nil || c != '{' {
		return errors.New("event: expected a JSON object")
	}
	err := d.Object(func(key []byte) error {
		start := d.Pos
		if err := skip(d); err != nil {
			return err
		}
		return fn(key, d.Data[start:d.Pos])
	})
	if err == ErrStopScan {
		return nil
	}
	if err != nil {
		return err
	}
	d.SkipSpace()
	if d.Pos != len(data) {
		return d.Errorf("data after the JSON object")
	}
	return nil
}
