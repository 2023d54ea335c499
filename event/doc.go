// Package event holds the event model of a gohands conversation: the events
// appended to a conversation's log, the LLM message types they carry, and the
// "kind" registry and JSON codec that make them wire compatible with the Python
// OpenHands SDK.
//
// Every polymorphic value on the wire (events, tool actions and observations,
// confirmation policies, security analyzers, condensers, ...) carries a "kind"
// field naming its type. Concrete Go types are tied to their kind with
// [RegisterKind]; [MarshalKinded] writes a value with its kind last, as the
// reference does, and [DecodeKinded] reads one back, rejecting unknown kinds
// and unknown fields.
package event
