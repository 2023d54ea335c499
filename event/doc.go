// Package event holds the event model of a gohands conversation: the events
// appended to a conversation's log, the LLM message types they carry, the
// "kind" registry, and the JSON codec that makes them wire compatible with
// the Python OpenHands SDK.
//
// # Kinds
//
// Every polymorphic value on the wire (events, tool actions and
// observations, confirmation policies, security analyzers, condensers, ...)
// carries a "kind" field naming its type. Concrete Go types are tied to
// their kind with [RegisterKind]. [Marshal] and [MarshalKinded] write a value
// with its kind last, as the reference does; [Unmarshal] and [DecodeKinded]
// read one back, rejecting unknown fields, and keeping unknown kinds where
// the place allows (see Reference releases).
//
// # Codec
//
// The package has its own JSON encoder and decoder (their machinery is in
// internal/wire), which follow
// encoding/json's struct-tag rules but write and read what Pydantic does:
//
//   - output is compact, with only quote, backslash and control characters
//     escaped, and floats in Python's form (30.0, 1e+16);
//   - a registered kind is tagged with "kind" wherever it appears, and an
//     interface field is read back through the kind registry;
//   - keys match field names exactly;
//   - the object being decoded as a kind (an event, action or observation)
//     rejects unknown keys, like the reference's extra="forbid" models,
//     while plain nested objects ignore them;
//   - an integral float (8.0) is accepted for an integer.
//
// Kinds registered by other packages follow these conventions, which map the
// reference's field declarations onto Go:
//
//   - T with default → `json:"name"`; a default other than Go's zero value
//     is set by a SetDefaults method ([Defaulter]), so an absent key keeps it;
//   - T | None = None → `json:"name,omitempty"` for strings and numbers
//     whose zero means "unset", a pointer with omitempty otherwise;
//   - list[T] | None = None → a slice with omitzero (nil is null, [] is kept);
//   - list[T] with a default → [List] (nil is written as []), likewise [Map];
//   - a required key → `required:"true"`, checked when decoding: the key
//     must be present, and not null unless the field is a pointer or raw
//     JSON;
//   - a required key that may be null → a pointer without omitempty, so it
//     is always written;
//   - T | None with a default, or where null and the empty value mean the
//     same → `json:"name" wire:"nullempty"`: an empty value ("", 0, false,
//     nil, len 0) is written as null, and null decodes as the empty value,
//     so it resets a default (without the option, null leaves a string,
//     number or bool as it was);
//   - list[T] or dict with a default, on a plain slice or map field →
//     `json:"name" wire:"emitempty"`: nil is written as [] or {}, as [List]
//     and [Map] do;
//   - a field holding one of the registered kinds: an interface type with
//     methods (security.Analyzer, []Observation) is written with its kind
//     and read by it; an `any` field does the same when tagged
//     `wire:"kinded"` (untagged, it reads generic JSON);
//   - a float number of seconds held as a [time.Duration] →
//     `wire:"format:sec"` (json/v2's spelling): written as seconds (30.0),
//     read from any number;
//   - Any → [encoding/json.RawMessage], which keeps key order and number
//     forms exactly.
//
// Defaults that are not Go zero values come from a SetDefaults method
// ([Defaulter]) on kinds; a type decoded by its own UnmarshalJSON sets them
// on the value it passes to [UnmarshalJSON], and checks or normalises the
// result there. Each wire object is declared once: such a method decodes
// into a copy of its type without methods (type plain T), never into a
// second list of the fields.
//
// # Reference releases
//
// The wire format is the reference 1.58.2's (the release gohands is
// compatible with); what 1.43.1 wrote still reads. Where they differ:
//
//   - SecurityAnalysisEvent is a reference kind since 1.58, with keys
//     analyzer, policy, risks {action id: risk} and details {action id:
//     object}, kept in order; gohands' own earlier event of that name
//     (confirmation_policy, ratings, requires_confirmation, error) is read
//     and converted, never written. A 1.43.1 reader cannot decode it.
//   - New tool kinds: AskOracleAction/Observation,
//     ClassifyAndSwitchLLMAction/Observation and
//     StartChildConversationAction/Observation (reftools.go).
//   - critic_result is written on the finishing event (a finish action or
//     a final reply); its message is read when absent (null).
//   - LLM configs gain stream_idle_timeout and fallback_strategy (package
//     llm).
//
// A kind neither release nor this build knows (a newer reference's) is
// not a reason to refuse a log: an event, an action, an observation or any
// kinded field holding one is kept as read ([UnknownEvent],
// [UnknownObservation], [Unknown]) and written back byte for byte; a
// package whose interface is wanted there says how to keep it
// ([RegisterUnknown]). Kinds renamed by gohands read under their former
// name ([RegisterKindAlias]).
//
// # Events and messages
//
// [LLMMessages] projects a list of events onto the messages sent to the
// model, joining parallel tool calls and consecutive user turns as the
// reference does.
package event
