package event

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"github.com/gohands/gohands/internal/wire"
)

// A newer reference writes kinds this build does not know (a new tool's
// action and observation, a new event). Refusing them would make a whole
// conversation unreadable, so where the place of the value allows (an
// event, an action, an observation, any field tagged kinded) the decoder
// keeps the object as it was read, in one of the types below, and the
// encoder writes it back byte for byte. Places typed by an interface with
// methods of its own (a security analyzer, a condenser) still refuse an
// unknown kind: gohands cannot run what it does not know.

// Unknown is a kinded value of a kind this build does not know, kept
// verbatim. It is what an ActionEvent's Action (or any kinded field) holds
// for such a kind.
type Unknown struct {
	KindName string
	// Raw is the whole object as read, "kind" included (compacted).
	Raw json.RawMessage
}

// Kind implements Kinded.
func (u *Unknown) Kind() string { return u.KindName }

// RawKinded implements wire.RawKinded: the object is written as it was read.
func (u *Unknown) RawKinded() []byte { return u.Raw }

// AppendJSON implements JSONAppender.
func (u *Unknown) AppendJSON(b []byte) ([]byte, error) { return append(b, u.Raw...), nil }

// UnknownObservation is an observation of a kind this build does not know.
// Its content and is_error, which every observation has, are read so that
// the model sees the result; the object is written back as it was read.
type UnknownObservation struct {
	base     ObservationBase
	KindName string
	Raw      json.RawMessage
}

// Obs implements Observation.
func (o *UnknownObservation) Obs() *ObservationBase { return &o.base }

// Kind implements Kinded.
func (o *UnknownObservation) Kind() string { return o.KindName }

// RawKinded implements wire.RawKinded.
func (o *UnknownObservation) RawKinded() []byte { return o.Raw }

// AppendJSON implements JSONAppender.
func (o *UnknownObservation) AppendJSON(b []byte) ([]byte, error) { return append(b, o.Raw...), nil }

// UnknownEvent is an event of a kind this build does not know. Its base
// fields (id, timestamp, source, parent_id) are read, so it takes its place
// in the log and the tree; it is never sent to the model, and it is written
// back as it was read.
type UnknownEvent struct {
	base     Base
	KindName string
	Raw      json.RawMessage
}

// EventBase implements Event. Changing the base does not change Raw.
func (e *UnknownEvent) EventBase() *Base { return &e.base }

// Kind implements Kinded.
func (e *UnknownEvent) Kind() string { return e.KindName }

// RawKinded implements wire.RawKinded.
func (e *UnknownEvent) RawKinded() []byte { return e.Raw }

// AppendJSON implements JSONAppender.
func (e *UnknownEvent) AppendJSON(b []byte) ([]byte, error) { return append(b, e.Raw...), nil }

// MarshalJSON implements json.Marshaler.
func (e *UnknownEvent) MarshalJSON() ([]byte, error) { return e.Raw, nil }

// IsUnknownKind reports whether v holds a value of a kind this build does
// not know (kept verbatim): one of the types above, or a wrapper that
// RegisterUnknown made.
func IsUnknownKind(v any) bool {
	_, ok := v.(wire.RawKinded)
	return ok
}

var (
	unknownType     = reflect.TypeFor[*Unknown]()
	eventType       = reflect.TypeFor[Event]()
	observationType = reflect.TypeFor[Observation]()
)

// decodeUnknown keeps data, an object of the unregistered kind name, as
// the unknown type that fits t, or returns false when none fits.
func decodeUnknown(data []byte, name string, t reflect.Type) (any, bool, error) {
	var raw bytes.Buffer
	if err := json.Compact(&raw, data); err != nil {
		return nil, true, fmt.Errorf("event: kind %s: %w", name, err)
	}
	switch {
	case t.Kind() == reflect.Interface && t.NumMethod() == 0: // an action, a kinded any
		return &Unknown{KindName: name, Raw: raw.Bytes()}, true, nil
	case t == eventType:
		e := &UnknownEvent{KindName: name, Raw: raw.Bytes()}
		// The base is read leniently; what the reference requires of every
		// event (an id that is not the root's, a known source) is checked.
		if err := wire.Decode(data, &e.base, false); err != nil {
			return nil, true, fmt.Errorf("event: kind %s: %w", name, err)
		}
		if e.base.ID == "" || e.base.ID == RootParentID {
			return nil, true, fmt.Errorf("event: kind %s: missing or reserved id %q", name, e.base.ID)
		}
		switch e.base.Source {
		case SourceAgent, SourceUser, SourceEnvironment, SourceHook, "":
		default:
			return nil, true, fmt.Errorf("event: kind %s: invalid source %q", name, e.base.Source)
		}
		return e, true, nil
	case t == observationType:
		o := &UnknownObservation{KindName: name, Raw: raw.Bytes()}
		var b struct {
			Content []json.RawMessage `json:"content"`
			IsError bool              `json:"is_error"`
		}
		if err := wire.Decode(data, &b, false); err == nil {
			o.base.IsError = b.IsError
			for _, c := range b.Content {
				var content Content
				if UnmarshalJSON(c, &content) == nil {
					o.base.Content = append(o.base.Content, content)
				}
			}
		}
		return o, true, nil
	case unknownType.AssignableTo(t):
		return &Unknown{KindName: name, Raw: raw.Bytes()}, true, nil
	}
	if f, ok := unknownMakers.Load(t); ok {
		return f.(func(*Unknown) any)(&Unknown{KindName: name, Raw: raw.Bytes()}), true, nil
	}
	return nil, false, nil
}

// unknownMakers holds, by interface type, what RegisterUnknown was given.
var unknownMakers sync.Map // reflect.Type → func(*Unknown) any

// RegisterUnknown tells the decoder how to keep a value of a kind this
// build does not know where the interface T is wanted (a security
// analyzer, a confirmation policy): make wraps it in a T that behaves
// safely and, by embedding *Unknown, is written back as it was read. Call
// it from an init function of the package that declares T.
func RegisterUnknown[T any](make func(*Unknown) T) {
	unknownMakers.Store(reflect.TypeFor[T](), func(u *Unknown) any { return make(u) })
}
