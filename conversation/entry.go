package conversation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/wire"
)

// Entry is what a store keeps in memory about one event: enough to look it
// up, search, walk the event tree and find unanswered actions without
// reading or decoding the event itself.
type Entry struct {
	Index     int
	ID        string
	Kind      string
	Source    event.Source
	Timestamp string
	// ParentID is the parent_id as written: "" when absent.
	ParentID string
	// ToolCallID is set for ActionEvent, ObservationEvent,
	// UserRejectObservation and AgentErrorEvent.
	ToolCallID string
	// ActionID is set for ObservationEvent and UserRejectObservation.
	ActionID string
	// HasAction is true for an ActionEvent whose action is not null.
	HasAction bool
	// Size is the length of the event's JSON.
	Size int
}

// entryOf builds the entry of event e, of the given kind and encoded in
// size bytes, about to be appended at index i.
func entryOf(i int, e event.Event, kind string, size int) Entry {
	b := e.EventBase()
	ent := Entry{
		Index: i, ID: b.ID, Kind: internKind(kind), Source: internSource(b.Source),
		Timestamp: b.Timestamp, ParentID: b.ParentID, Size: size,
	}
	switch v := e.(type) {
	case *event.ActionEvent:
		ent.ToolCallID, ent.HasAction = v.ToolCallID, v.Action != nil
	case *event.ObservationEvent:
		ent.ToolCallID, ent.ActionID = v.ToolCallID, v.ActionID
	case *event.UserRejectObservation:
		ent.ToolCallID, ent.ActionID = v.ToolCallID, v.ActionID
	case *event.AgentErrorEvent:
		ent.ToolCallID = v.ToolCallID
	}
	return ent
}

// ScanEntry builds the entry of the event JSON data found at index i,
// reading only the top-level fields it needs: how a store that keeps the
// events' JSON builds the entries its Load yields. It fails if data is not
// one complete JSON object with an id and a kind, which is how a store
// reading its log detects a torn write.
func ScanEntry(i int, data []byte) (Entry, error) {
	return scanEntry(i, data, false, &Entry{})
}

// ScanDecodedEntry is ScanEntry for data that has just decoded as e,
// which proves it well-formed: it does not check the JSON again, and
// takes e's strings where the JSON spells them rather than allocating
// copies. It is two to three times faster.
func ScanDecodedEntry(i int, data []byte, e event.Event) (Entry, error) {
	var known Entry
	if kind, ok := event.KindOf(e); ok {
		known = entryOf(i, e, kind, len(data))
	}
	return scanEntry(i, data, true, &known)
}

// DecodedEntry is ScanDecodedEntry for data that has just decoded as e
// with event.UnmarshalKeys, which told keys: when they are known, the
// entry is built from e alone, without scanning data again. The entry is
// ScanEntry's (TestDecodedEntry).
func DecodedEntry(i int, data []byte, e event.Event, keys event.Keys) (Entry, error) {
	kind, ok := event.KindOf(e)
	if keys&event.KeysKnown == 0 || !ok {
		return ScanDecodedEntry(i, data, e)
	}
	ent := entryOf(i, e, kind, len(data))
	if keys&event.KeySource == 0 {
		ent.Source = "" // the decoded event has its kind's default
	}
	return ent, nil
}

// scanEntry builds the entry of data, taking the strings of known (an
// entry built otherwise, or empty) where the JSON spells them; valid says
// data is known to be well-formed JSON. The scanners are called directly,
// not through a func value, so that the callback and the entries it
// fills stay on the stack (two allocations per event of a replay).
func scanEntry(i int, data []byte, valid bool, known *Entry) (Entry, error) {
	ent := Entry{Index: i, Size: len(data)}
	hasAction := false
	field := func(key, val []byte) error {
		var dst *string
		var k string
		switch string(key) {
		case "id":
			dst, k = &ent.ID, known.ID
		case "kind":
			dst, k = &ent.Kind, known.Kind
		case "timestamp":
			dst, k = &ent.Timestamp, known.Timestamp
		case "parent_id":
			dst, k = &ent.ParentID, known.ParentID
		case "tool_call_id":
			dst, k = &ent.ToolCallID, known.ToolCallID
		case "action_id":
			dst, k = &ent.ActionID, known.ActionID
		case "source":
			s, err := knownString(val, string(known.Source))
			if err != nil {
				return fmt.Errorf("source: %w", err)
			}
			ent.Source = internSource(event.Source(s))
			return nil
		case "action":
			hasAction = !bytes.Equal(val, []byte("null"))
			return nil
		default:
			return nil
		}
		v, err := knownString(val, k)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		*dst = v
		return nil
	}
	var err error
	if valid {
		err = wire.ScanValidObject(data, field)
	} else {
		err = wire.ScanObject(data, field)
	}
	if err != nil {
		return Entry{}, err
	}
	if ent.ID == "" || ent.Kind == "" {
		return Entry{}, errors.New(`event has no "id" or no "kind"`)
	}
	ent.Kind = internKind(ent.Kind)
	ent.HasAction = hasAction && ent.Kind == event.KindAction
	return ent, nil
}

// knownString is jsonString taking k when val is k as a JSON string
// without escapes (the only way its bytes can spell k).
func knownString(val []byte, k string) (string, error) {
	if k != "" && len(val) == len(k)+2 && val[0] == '"' && string(val[1:len(val)-1]) == k && bytes.IndexByte(val, '\\') < 0 {
		return k, nil
	}
	return stringValue(val)
}

// jsonString decodes the JSON string (or null) val into dst.
func jsonString(val []byte, dst *string) error {
	v, err := stringValue(val)
	if err == nil {
		*dst = v
	}
	return err
}

// stringValue decodes the JSON string (or null) val; strings with
// escapes, rare in an event's top-level fields, go through
// encoding/json.
func stringValue(val []byte) (string, error) {
	if len(val) == 0 || bytes.Equal(val, []byte("null")) {
		return "", nil
	}
	if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' && bytes.IndexByte(val, '\\') < 0 {
		return string(val[1 : len(val)-1]), nil
	}
	return unmarshalString(val)
}

func unmarshalString(val []byte) (string, error) {
	var v string
	err := json.Unmarshal(val, &v)
	return v, err
}

// topField returns the raw value of the top-level key of the JSON object
// data, or nil.
func topField(data []byte, key string) []byte {
	var out []byte
	_ = wire.ScanObject(data, func(k, v []byte) error {
		if string(k) == key {
			out = v
			return wire.ErrStopScan
		}
		return nil
	})
	return out
}

// Kinds and sources repeat on every event; interning them keeps one copy.
var knownKinds = func() map[string]string {
	m := make(map[string]string)
	for _, k := range []string{event.KindAction, event.KindObservation, event.KindUserRejectObservation, event.KindAgentError,
		event.KindConversationStateUpdate, event.KindConversationError, event.KindMessage, event.KindSystemPrompt, event.KindCondensation,
		event.KindCondensationRequest, event.KindPause, event.KindInterrupt, event.KindHookExecution,
		event.KindLLMCompletionLog, event.KindToken, event.KindACPToolCall} {
		m[k] = k
	}
	return m
}()

// intern makes e's Kind and Source share the one copy of the names every
// event repeats, as the entries entryOf and ScanEntry build do: LoadLog
// interns what a store loads (from a cache of its own, say).
func (e *Entry) intern() {
	e.Kind, e.Source = internKind(e.Kind), internSource(e.Source)
}

func internKind(k string) string {
	if s, ok := knownKinds[k]; ok {
		return s
	}
	return k
}

func internSource(s event.Source) event.Source {
	switch s {
	case event.SourceAgent:
		return event.SourceAgent
	case event.SourceUser:
		return event.SourceUser
	case event.SourceEnvironment:
		return event.SourceEnvironment
	case event.SourceHook:
		return event.SourceHook
	}
	return s
}
