package event

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/gohands/gohands/internal/wire"
)

// Marshal encodes e as the reference writes it: compact, null fields
// omitted, "kind" last. Fields left empty that the reference always fills
// get its defaults: the kind's default source, security risk UNKNOWN, the
// user as the rejection source, and a ConversationErrorEvent's derived
// classification.
func Marshal(e Event) ([]byte, error) { return MarshalKinded(e) }

// Append is Marshal appending to b, for callers that reuse a buffer.
func Append(b []byte, e Event) ([]byte, error) { return AppendKinded(b, e) }

// Unmarshal decodes one event of any registered kind, applying the
// reference's defaults and checks: a missing source takes the kind's
// default (it is an error for kinds without one), a missing id or timestamp
// is generated, the reserved id "__root__" is rejected, and classifications
// are filled in.
func Unmarshal(data []byte) (Event, error) { return DecodeKinded[Event](data) }

// eventCodec marks event types for the encoder (see encode.go).
func (*Base) eventCodec() {}

// DefaultSource returns the source the reference gives events of e's kind
// when none is set, or "" for kinds that require one (MessageEvent,
// TokenEvent, ConversationErrorEvent, ServerErrorEvent).
func DefaultSource(e Event) Source {
	switch e.(type) {
	case *SystemPromptEvent, *ActionEvent, *AgentErrorEvent, *ACPToolCallEvent, *StreamingDeltaEvent:
		return SourceAgent
	case *ObservationEvent, *UserRejectObservation, *Condensation, *CondensationRequest,
		*CondensationSummaryEvent, *ConversationStateUpdateEvent, *LLMCompletionLogEvent,
		*SecurityAnalysisEvent:
		return SourceEnvironment
	case *PauseEvent, *InterruptEvent:
		return SourceUser
	case *HookExecutionEvent:
		return SourceHook
	}
	return ""
}

// encodeDefaulter is implemented by events with fields that get defaults
// when written. withDefaults returns e itself when nothing is missing, so
// the common case costs no copy.
type encodeDefaulter interface {
	withDefaults() Event
}

// prepareEvent returns e, or a copy of it with the reference's defaults
// filled in where e leaves them empty. It reports events the reference
// could not read back.
func prepareEvent(e Event) (Event, error) {
	if o, ok := e.(*ObservationEvent); ok && o.Observation == nil {
		return nil, fmt.Errorf("event: ObservationEvent %s has no observation", o.ID)
	}
	if d, ok := e.(encodeDefaulter); ok {
		e = d.withDefaults()
	}
	if e.EventBase().Source == "" {
		if s := DefaultSource(e); s != "" {
			e = cloneEvent(e)
			e.EventBase().Source = s
		} else {
			k, _ := KindOf(e)
			return nil, fmt.Errorf("event: %s %s has no source", k, e.EventBase().ID)
		}
	}
	return e, nil
}

func cloneEvent[E Event](e E) E {
	v := reflect.ValueOf(e)
	c := reflect.New(v.Type().Elem())
	c.Elem().Set(v.Elem())
	return c.Interface().(E)
}

func (e *ActionEvent) withDefaults() Event {
	if e.SecurityRisk != "" {
		return e
	}
	c := cloneEvent(e)
	c.SecurityRisk = RiskUnknown
	return c
}

func (e *UserRejectObservation) withDefaults() Event {
	if e.RejectionSource != "" {
		return e
	}
	c := cloneEvent(e)
	c.RejectionSource = RejectedByUser
	return c
}

func (e *AgentErrorEvent) withDefaults() Event {
	if e.Classification.Kind != "" {
		return e
	}
	c := cloneEvent(e)
	c.Classification = unknownError
	return c
}

func (e *ConversationErrorEvent) withDefaults() Event {
	if e.Classification != nil {
		return e
	}
	c := cloneEvent(e)
	cl := ClassifyError(e.Code, e.Detail)
	c.Classification = &cl
	return c
}

// SetDefaults implements Defaulter.
func (e *UserRejectObservation) SetDefaults() {
	if e.RejectionReason == "" {
		e.RejectionReason = DefaultRejectionReason
	}
	if e.RejectionSource == "" {
		e.RejectionSource = RejectedByUser
	}
}

// SetDefaults implements Defaulter.
func (e *LLMCompletionLogEvent) SetDefaults() {
	e.ModelName, e.UsageID = "unknown", "default"
}

// SetDefaults implements Defaulter.
func (e *ActionEvent) SetDefaults() { e.SecurityRisk = RiskUnknown }

// decodeEvent decodes data (an event without its "kind") into e with the
// reference's defaults and checks.
func decodeEvent(e Event, kind string, data []byte, decode func() error) error {
	b := e.EventBase()
	b.Source = DefaultSource(e)
	if d, ok := e.(Defaulter); ok {
		d.SetDefaults()
	}
	var err error
	if decode != nil {
		err = decode()
	} else {
		err = wire.DecodeKind(data, kind, e)
	}
	if err != nil {
		return err
	}
	return checkEvent(e)
}

// validator is implemented by events with checks beyond the base ones.
type validator interface {
	validate() error
}

func checkEvent(e Event) error {
	b := e.EventBase()
	switch {
	case b.ID == RootParentID:
		return fmt.Errorf("id may not be the reserved %q", RootParentID)
	case b.ID == "":
		b.ID = NewID()
	}
	if b.Timestamp == "" {
		b.Timestamp = Now()
	}
	switch b.Source {
	case SourceAgent, SourceUser, SourceEnvironment, SourceHook:
	case "":
		return errors.New("missing source")
	default:
		return fmt.Errorf("invalid source %q", b.Source)
	}
	if v, ok := e.(validator); ok {
		return v.validate()
	}
	return nil
}

// textOnly checks a list the reference types as list[TextContent].
func textOnly(field string, cs []Content) error {
	for _, c := range cs {
		if c.Type != ContentText {
			return fmt.Errorf("%s: only text content is allowed, got %q", field, c.Type)
		}
	}
	return nil
}

func (e *SystemPromptEvent) validate() error {
	if e.SystemPrompt.Type != ContentText {
		return errors.New("system_prompt: must be text content")
	}
	if e.DynamicContext != nil && e.DynamicContext.Type != ContentText {
		return errors.New("dynamic_context: must be text content")
	}
	if e.Tools == nil {
		return errors.New("missing tools")
	}
	return nil
}

func (e *MessageEvent) validate() error { return textOnly("extended_content", e.ExtendedContent) }

func (e *ObservationEvent) validate() error { return textOnly("extended_content", e.ExtendedContent) }

func (e *ActionEvent) validate() error {
	if !e.SecurityRisk.Valid() {
		return fmt.Errorf("invalid security_risk %q", e.SecurityRisk)
	}
	if err := textOnly("thought", e.Thought); err != nil {
		return err
	}
	if _, ok := e.Action.(Event); ok {
		k, _ := KindOf(e.Action)
		return fmt.Errorf("action: kind %q is an event, not an action", k)
	}
	if e.ToolCall.Arguments == argumentsInAction && e.Action != nil {
		args, err := ActionArguments(e)
		if err != nil {
			return fmt.Errorf("tool_call: arguments kept in the action: %w", err)
		}
		e.ToolCall.Arguments = args
	}
	return nil
}

func (e *UserRejectObservation) validate() error {
	if e.RejectionSource != RejectedByUser && e.RejectionSource != RejectedByHook {
		return fmt.Errorf("invalid rejection_source %q", e.RejectionSource)
	}
	return nil
}

func (e *AgentErrorEvent) validate() error {
	if e.Classification.Kind == "" {
		e.Classification = unknownError
	}
	return nil
}

func (e *ConversationErrorEvent) validate() error {
	if e.Classification == nil {
		c := ClassifyError(e.Code, e.Detail)
		e.Classification = &c
	}
	return nil
}

func (e *Condensation) validate() error {
	if e.SummaryOffset != nil && *e.SummaryOffset < 0 {
		return fmt.Errorf("summary_offset %d is negative", *e.SummaryOffset)
	}
	return nil
}

func (e *HookExecutionEvent) validate() error {
	switch e.HookEventType {
	case HookPreToolUse, HookPostToolUse, HookUserPromptSubmit, HookSessionStart, HookSessionEnd, HookStop:
	default:
		return fmt.Errorf("invalid hook_event_type %q", e.HookEventType)
	}
	e.HookInput = rawOrNil(e.HookInput)
	return nil
}

func (e *ACPToolCallEvent) validate() error {
	e.RawInput, e.RawOutput, e.Content = rawOrNil(e.RawInput), rawOrNil(e.RawOutput), rawOrNil(e.Content)
	return nil
}

func (e *MessageEvent) decodeKind(kind string, data []byte) error {
	return e.decodeKindKeys(kind, data, nil, nil)
}
func (e *SystemPromptEvent) decodeKind(kind string, data []byte) error {
	return decodeEvent(e, kind, data, nil)
}
func (e *UserRejectObservation) decodeKind(kind string, data []byte) error {
	return decodeEvent(e, kind, data, nil)
}
func (e *AgentErrorEvent) decodeKind(kind string, data []byte) error {
	return decodeEvent(e, kind, data, nil)
}
func (e *Condensation) decodeKind(kind string, data []byte) error {
	return e.decodeKindKeys(kind, data, nil, nil)
}
func (e *CondensationRequest) decodeKind(kind string, data []byte) error {
	return decodeEvent(e, kind, data, nil)
}
func (e *CondensationSummaryEvent) decodeKind(kind string, data []byte) error {
	return decodeEvent(e, kind, data, nil)
}
func (e *ConversationErrorEvent) decodeKind(kind string, data []byte) error {
	return decodeEvent(e, kind, data, nil)
}
func (e *PauseEvent) decodeKind(kind string, data []byte) error {
	return decodeEvent(e, kind, data, nil)
}
func (e *InterruptEvent) decodeKind(kind string, data []byte) error {
	return decodeEvent(e, kind, data, nil)
}
func (e *HookExecutionEvent) decodeKind(kind string, data []byte) error {
	return decodeEvent(e, kind, data, nil)
}
func (e *LLMCompletionLogEvent) decodeKind(kind string, data []byte) error {
	return decodeEvent(e, kind, data, nil)
}
func (e *TokenEvent) decodeKind(kind string, data []byte) error {
	return decodeEvent(e, kind, data, nil)
}
func (e *ACPToolCallEvent) decodeKind(kind string, data []byte) error {
	return decodeEvent(e, kind, data, nil)
}
func (e *StreamingDeltaEvent) decodeKind(kind string, data []byte) error {
	return decodeEvent(e, kind, data, nil)
}
func (e *ServerErrorEvent) decodeKind(kind string, data []byte) error {
	return decodeEvent(e, kind, data, nil)
}

func (e *ActionEvent) decodeKind(kind string, data []byte) error {
	return e.decodeKindKeys(kind, data, nil, nil)
}

func (e *ObservationEvent) decodeKind(kind string, data []byte) error {
	return e.decodeKindKeys(kind, data, nil, nil)
}

func (e *ConversationStateUpdateEvent) decodeKind(kind string, data []byte) error {
	return decodeEvent(e, kind, data, func() error { return e.decode(kind, data) })
}

// UnmarshalJSON implements json.Unmarshaler for encoding/json users; a
// "kind" key, if present, must be "ActionEvent". Prefer Unmarshal.
func (e *ActionEvent) UnmarshalJSON(data []byte) error { return unmarshalAs(e, KindAction, data) }

// UnmarshalJSON implements json.Unmarshaler for encoding/json users; a
// "kind" key, if present, must be "ObservationEvent". Prefer Unmarshal.
func (e *ObservationEvent) UnmarshalJSON(data []byte) error {
	return unmarshalAs(e, KindObservation, data)
}

func (e *ConversationStateUpdateEvent) decode(kind string, data []byte) error {
	var m struct {
		Base
		Key   *string         `json:"key"`
		Value json.RawMessage `json:"value"`
	}
	m.Base = e.Base
	if err := wire.DecodeKind(data, kind, &m); err != nil {
		return err
	}
	*e = ConversationStateUpdateEvent{Base: m.Base}
	if m.Key != nil {
		e.Key = *m.Key
	} else {
		e.Key = NewID() // the reference's default is a random key
	}
	if isNull(m.Value) {
		e.Value = json.RawMessage("{}") // the reference's default
	} else {
		e.Value = m.Value
	}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler for encoding/json users; a
// "kind" key, if present, must be "ConversationStateUpdateEvent". Prefer
// Unmarshal.
func (e *ConversationStateUpdateEvent) UnmarshalJSON(data []byte) error {
	return unmarshalAs(e, KindConversationStateUpdate, data)
}

// unmarshalAs decodes data, with or without a "kind", into e of kind want.
func unmarshalAs(e kindDecoder, want string, data []byte) error {
	name, err := wire.FindKind(data)
	switch {
	case errors.Is(err, wire.ErrNoKind):
	case err != nil:
		return err
	case name != want:
		return fmt.Errorf("event: kind %q is not %s", name, want)
	}
	return e.decodeKind(want, data)
}

// UnmarshalJSON methods let encoding/json users read events as Unmarshal
// does, with the reference's defaults and checks; a "kind" key, if present,
// must name the type.

// UnmarshalJSON implements json.Unmarshaler.
func (e *SystemPromptEvent) UnmarshalJSON(data []byte) error {
	return unmarshalAs(e, KindSystemPrompt, data)
}

// UnmarshalJSON implements json.Unmarshaler.
func (e *MessageEvent) UnmarshalJSON(data []byte) error { return unmarshalAs(e, KindMessage, data) }

// UnmarshalJSON implements json.Unmarshaler.
func (e *UserRejectObservation) UnmarshalJSON(data []byte) error {
	return unmarshalAs(e, KindUserRejectObservation, data)
}

// UnmarshalJSON implements json.Unmarshaler.
func (e *AgentErrorEvent) UnmarshalJSON(data []byte) error {
	return unmarshalAs(e, KindAgentError, data)
}

// UnmarshalJSON implements json.Unmarshaler.
func (e *Condensation) UnmarshalJSON(data []byte) error {
	return unmarshalAs(e, KindCondensation, data)
}

// UnmarshalJSON implements json.Unmarshaler.
func (e *CondensationRequest) UnmarshalJSON(data []byte) error {
	return unmarshalAs(e, KindCondensationRequest, data)
}

// UnmarshalJSON implements json.Unmarshaler.
func (e *CondensationSummaryEvent) UnmarshalJSON(data []byte) error {
	return unmarshalAs(e, KindCondensationSummary, data)
}

// UnmarshalJSON implements json.Unmarshaler.
func (e *ConversationErrorEvent) UnmarshalJSON(data []byte) error {
	return unmarshalAs(e, KindConversationError, data)
}

// UnmarshalJSON implements json.Unmarshaler.
func (e *PauseEvent) UnmarshalJSON(data []byte) error { return unmarshalAs(e, KindPause, data) }

// UnmarshalJSON implements json.Unmarshaler.
func (e *InterruptEvent) UnmarshalJSON(data []byte) error {
	return unmarshalAs(e, KindInterrupt, data)
}

// UnmarshalJSON implements json.Unmarshaler.
func (e *HookExecutionEvent) UnmarshalJSON(data []byte) error {
	return unmarshalAs(e, KindHookExecution, data)
}

// UnmarshalJSON implements json.Unmarshaler.
func (e *LLMCompletionLogEvent) UnmarshalJSON(data []byte) error {
	return unmarshalAs(e, KindLLMCompletionLog, data)
}

// UnmarshalJSON implements json.Unmarshaler.
func (e *TokenEvent) UnmarshalJSON(data []byte) error { return unmarshalAs(e, KindToken, data) }

// UnmarshalJSON implements json.Unmarshaler.
func (e *ACPToolCallEvent) UnmarshalJSON(data []byte) error {
	return unmarshalAs(e, KindACPToolCall, data)
}

// UnmarshalJSON implements json.Unmarshaler.
func (e *StreamingDeltaEvent) UnmarshalJSON(data []byte) error {
	return unmarshalAs(e, KindStreamingDelta, data)
}

// UnmarshalJSON implements json.Unmarshaler.
func (e *ServerErrorEvent) UnmarshalJSON(data []byte) error {
	return unmarshalAs(e, KindServerError, data)
}

// MarshalJSON methods let encoding/json users (a server response holding
// events, say) write events as Marshal does, "kind" included.

// MarshalJSON implements json.Marshaler.
func (e *SystemPromptEvent) MarshalJSON() ([]byte, error) { return Marshal(e) }

// MarshalJSON implements json.Marshaler.
func (e *MessageEvent) MarshalJSON() ([]byte, error) { return Marshal(e) }

// MarshalJSON implements json.Marshaler.
func (e *ActionEvent) MarshalJSON() ([]byte, error) { return Marshal(e) }

// MarshalJSON implements json.Marshaler.
func (e *ObservationEvent) MarshalJSON() ([]byte, error) { return Marshal(e) }

// MarshalJSON implements json.Marshaler.
func (e *UserRejectObservation) MarshalJSON() ([]byte, error) { return Marshal(e) }

// MarshalJSON implements json.Marshaler.
func (e *AgentErrorEvent) MarshalJSON() ([]byte, error) { return Marshal(e) }

// MarshalJSON implements json.Marshaler.
func (e *Condensation) MarshalJSON() ([]byte, error) { return Marshal(e) }

// MarshalJSON implements json.Marshaler.
func (e *CondensationRequest) MarshalJSON() ([]byte, error) { return Marshal(e) }

// MarshalJSON implements json.Marshaler.
func (e *CondensationSummaryEvent) MarshalJSON() ([]byte, error) { return Marshal(e) }

// MarshalJSON implements json.Marshaler.
func (e *ConversationStateUpdateEvent) MarshalJSON() ([]byte, error) { return Marshal(e) }

// MarshalJSON implements json.Marshaler.
func (e *ConversationErrorEvent) MarshalJSON() ([]byte, error) { return Marshal(e) }

// MarshalJSON implements json.Marshaler.
func (e *PauseEvent) MarshalJSON() ([]byte, error) { return Marshal(e) }

// MarshalJSON implements json.Marshaler.
func (e *InterruptEvent) MarshalJSON() ([]byte, error) { return Marshal(e) }

// MarshalJSON implements json.Marshaler.
func (e *HookExecutionEvent) MarshalJSON() ([]byte, error) { return Marshal(e) }

// MarshalJSON implements json.Marshaler.
func (e *LLMCompletionLogEvent) MarshalJSON() ([]byte, error) { return Marshal(e) }

// MarshalJSON implements json.Marshaler.
func (e *TokenEvent) MarshalJSON() ([]byte, error) { return Marshal(e) }

// MarshalJSON implements json.Marshaler.
func (e *ACPToolCallEvent) MarshalJSON() ([]byte, error) { return Marshal(e) }

// MarshalJSON implements json.Marshaler.
func (e *StreamingDeltaEvent) MarshalJSON() ([]byte, error) { return Marshal(e) }

// MarshalJSON implements json.Marshaler.
func (e *ServerErrorEvent) MarshalJSON() ([]byte, error) { return Marshal(e) }
