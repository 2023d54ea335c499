package event

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/gohands/gohands/internal/wire"
)

// This file decodes the kinds a replay reads most (ActionEvent,
// ObservationEvent, MessageEvent, Condensation) without the reflective struct decoder:
// their top-level keys are matched by a switch and plain strings and
// empty lists are read directly; every other value goes to the same
// decoder the reflective path would call for that field. It takes only
// the inputs it fully handles: on anything else (an unknown, repeated or
// null key, a missing required one, a missing id or timestamp, a syntax
// error, trailing data) it gives up and the reflective decoder decodes the
// input afresh, so values and errors are the reflective decoder's
// (TestFastDecodeFixtures, FuzzFastDecode).

// errNotFast stops a fast decode that met something it leaves to the
// reflective decoder.
var errNotFast = errors.New("event: not for the fast decoder")

// fastDecoder is implemented by the kinds decoded here. decodeFast fills
// the fields of its receiver (already holding its defaults) from data, the
// event object of kind kind, and reports whether it did and the keys it
// saw; if not, the receiver may be partly filled. decodeKindKeys is
// decodeKind setting *seen to what the fast decoder saw, if it decoded data.
type fastDecoder interface {
	Event
	decodeFast(kind string, data []byte, strs *wire.Strings) (once, bool)
	decodeKindKeys(kind string, data []byte, seen *once, strs *wire.Strings) error
}

// decodeFields decodes data into e with the fast decoder, setting *seen
// (if not nil) to the keys it saw, or, if it gives up, with the reflective
// one from e's state before.
func decodeFields[E any, P interface {
	*E
	fastDecoder
}](e P, kind string, data []byte, seen *once, strs *wire.Strings) error {
	saved := *e
	if o, ok := decodeFast(e, kind, data, strs); ok {
		if seen != nil {
			*seen = o
		}
		return nil
	}
	*e = saved
	return wire.DecodeKind(data, kind, e)
}

// decodeFast runs e's fast decoder, which gives up, as well, on an empty
// id or timestamp: checkEvent replaces those with a fresh id or the time.
func decodeFast(e fastDecoder, kind string, data []byte, strs *wire.Strings) (once, bool) {
	o, ok := e.decodeFast(kind, data, strs)
	if !ok {
		return 0, false
	}
	b := e.EventBase()
	return o, b.ID != "" && b.Timestamp != ""
}

// Keys tells which of an event's top-level keys its JSON spelled, as
// UnmarshalKeys learnt it.
type Keys uint8

// Keys' bits.
const (
	// KeysKnown is set when the other bits are known: the event was read
	// by a decoder that saw every top-level key, each once and none null.
	// Without it, nothing is known of the keys.
	KeysKnown Keys = 1 << iota
	// KeySource is set when the JSON has a "source" (absent, the event
	// has its kind's default source).
	KeySource
)

// Strings holds the copies of decoded strings for UnmarshalKeys: events
// decoded one after another with the same Strings share a few blocks for
// their short strings instead of an allocation each (a replay decodes
// ~9 strings an event). A block is kept while any string in it is, so it
// is for events decoded together and kept together. The zero value is
// ready to use; a Strings is for one goroutine at a time.
type Strings = wire.Strings

// UnmarshalKeys is Unmarshal, and tells what it learnt of data's keys: the
// same event and error, so that a store reading an event file need not
// scan it again for what the decoded event does not say. The fast
// decoder takes its strings' copies from strs (nil: each its own).
func UnmarshalKeys(data []byte, strs *Strings) (Event, Keys, error) {
	kind, ok := wire.KindAtEnd(data)
	if !ok {
		e, err := Unmarshal(data)
		return e, 0, err
	}
	v, ok := wire.NewKind(kind)
	fe, fast := v.(fastDecoder)
	if !ok || !fast {
		e, err := Unmarshal(data)
		return e, 0, err
	}
	var seen once
	if err := fe.decodeKindKeys(kind, data, &seen, strs); err != nil {
		return nil, 0, fmt.Errorf("event: decoding %s: %w", kind, err)
	}
	if seen == 0 {
		return fe, 0, nil
	}
	keys := KeysKnown
	if seen&(1<<bitSource) != 0 {
		keys |= KeySource
	}
	return fe, keys, nil
}

func (e *ActionEvent) decodeKindKeys(kind string, data []byte, seen *once, strs *wire.Strings) error {
	return decodeEvent(e, kind, data, func() error { return decodeFields(e, kind, data, seen, strs) })
}

func (e *ObservationEvent) decodeKindKeys(kind string, data []byte, seen *once, strs *wire.Strings) error {
	return decodeEvent(e, kind, data, func() error { return decodeFields(e, kind, data, seen, strs) })
}

func (e *MessageEvent) decodeKindKeys(kind string, data []byte, seen *once, strs *wire.Strings) error {
	return decodeEvent(e, kind, data, func() error { return decodeFields(e, kind, data, seen, strs) })
}

func (e *Condensation) decodeKindKeys(kind string, data []byte, seen *once, strs *wire.Strings) error {
	return decodeEvent(e, kind, data, func() error { return decodeFields(e, kind, data, seen, strs) })
}

// fastObject decodes the event object data of kind kind, calling member
// for each key other than "kind" with d at its value; member returns
// errNotFast (or any error) to give up, as fastObject does on a null value
// (which some fields take as their zero value and others refuse). It
// reports whether the whole input was taken.
func fastObject(data []byte, kind string, strs *wire.Strings, member func(d *wire.Decoder, key []byte) error) bool {
	d := wire.Decoder{Data: data, Strings: strs}
	d.SkipSpace()
	if c, err := d.Peek(); err != nil || c != '{' {
		return false
	}
	err := d.Object(func(key []byte) error {
		if d.IsNullNext() {
			return errNotFast
		}
		if string(key) == "kind" {
			if k, err := d.Str(); err != nil || k != kind {
				return errNotFast
			}
			return nil
		}
		return member(&d, key)
	})
	if err != nil {
		return false
	}
	d.SkipSpace()
	return d.Pos == len(d.Data)
}

// once records the keys seen, one bit each: a repeated key gives up (the
// reflective decoder decodes it again into the same field).
type once uint32

func (o *once) see(bit uint) bool {
	if *o&(1<<bit) != 0 {
		return false
	}
	*o |= 1 << bit
	return true
}

// str decodes a string field seen once.
func str(d *wire.Decoder, o *once, bit uint, dst *string) error {
	if !o.see(bit) {
		return errNotFast
	}
	s, err := d.Str()
	*dst = s
	return err
}

// knownStr is d.Str for a string that is usually a or b: those are
// returned without allocating a copy.
func knownStr(d *wire.Decoder, a, b string) (string, error) {
	for _, k := range [...]string{a, b} {
		if end := d.Pos + len(k) + 2; end <= len(d.Data) && d.Data[d.Pos] == '"' &&
			d.Data[end-1] == '"' && string(d.Data[d.Pos+1:end-1]) == k {
			d.Pos = end
			return k, nil
		}
	}
	return d.Str()
}

// list decodes a list field seen once: [] directly (non-nil and without
// an array, as the slice decoder makes it), anything else by the field's
// decoder.
func list[T any](d *wire.Decoder, o *once, bit uint, dst *List[T]) error {
	if !o.see(bit) {
		return errNotFast
	}
	if emptyArray(d) {
		*dst = List[T]{}
		return nil
	}
	return wire.DecoderFor(reflect.TypeFor[List[T]]())(d, reflect.ValueOf(dst).Elem(), false)
}

// emptyArray consumes [] if it is next.
func emptyArray(d *wire.Decoder) bool {
	if p := d.Pos; p+1 < len(d.Data) && d.Data[p] == '[' && d.Data[p+1] == ']' {
		d.Pos += 2
		return true
	}
	return false
}

// value decodes a field seen once of type T with its decoder, as the
// reflective struct decoder does.
func value[T any](d *wire.Decoder, o *once, bit uint, dst *T) error {
	if !o.see(bit) {
		return errNotFast
	}
	return wire.DecoderFor(reflect.TypeFor[T]())(d, reflect.ValueOf(dst).Elem(), false)
}

// actionDecoder is the decoder of ActionEvent.Action, tagged kinded; made
// on first use, after this package's init has taught the codec its types.
var actionDecoder = sync.OnceValue(func() wire.DecFunc { return wire.KindedDecoder(reflect.TypeFor[Action]()) })

// observationDecoder is the decoder of ObservationEvent.Observation, the
// reflective path's.
var observationDecoder = sync.OnceValue(func() wire.DecFunc { return wire.DecoderFor(reflect.TypeFor[Observation]()) })

// Bits of Base's keys in once; a kind's own keys follow from bitFirst.
const (
	bitID = iota
	bitTimestamp
	bitSource
	bitParentID
	bitFirst // the kind's own fields from here

	// baseRequired are the keys the fast decoder needs: without them the
	// event gets a fresh id or time, which only the reflective path makes.
	baseRequired = 1<<bitID | 1<<bitTimestamp
)

// baseOnce decodes the Base key key into b once, reporting whether key is
// one of Base's.
func baseOnce(d *wire.Decoder, o *once, key []byte, b *Base) (bool, error) {
	switch string(key) {
	case "id":
		return true, str(d, o, bitID, &b.ID)
	case "timestamp":
		return true, str(d, o, bitTimestamp, &b.Timestamp)
	case "parent_id":
		return true, str(d, o, bitParentID, &b.ParentID)
	case "source":
		if !o.see(bitSource) {
			return true, errNotFast
		}
		s, err := knownStr(d, string(SourceAgent), string(SourceEnvironment))
		b.Source = Source(s)
		return true, err
	}
	return false, nil
}

func (e *ActionEvent) decodeFast(kind string, data []byte, strs *wire.Strings) (once, bool) {
	const (
		thought = bitFirst + iota
		reasoning
		thinking
		responsesItem
		action
		toolName
		toolCallID
		toolCall
		llmResponseID
		securityRisk
		critic
		summary
	)
	var o once
	ok := fastObject(data, kind, strs, func(d *wire.Decoder, key []byte) error {
		if isBase, err := baseOnce(d, &o, key, &e.Base); isBase {
			return err
		}
		switch string(key) {
		case "thought":
			return list(d, &o, thought, &e.Thought)
		case "reasoning_content":
			return str(d, &o, reasoning, &e.ReasoningContent)
		case "thinking_blocks":
			return list(d, &o, thinking, &e.ThinkingBlocks)
		case "responses_reasoning_item":
			return value(d, &o, responsesItem, &e.ResponsesItem)
		case "action":
			if !o.see(action) {
				return errNotFast
			}
			return decodeNested(d, &e.Action, actionDecoder)
		case "tool_name":
			return str(d, &o, toolName, &e.ToolName)
		case "tool_call_id":
			return str(d, &o, toolCallID, &e.ToolCallID)
		case "tool_call":
			if !o.see(toolCall) {
				return errNotFast
			}
			return decodeToolCallFast(d, &e.ToolCall)
		case "llm_response_id":
			return str(d, &o, llmResponseID, &e.LLMResponseID)
		case "security_risk":
			if !o.see(securityRisk) {
				return errNotFast
			}
			s, err := knownStr(d, string(RiskUnknown), string(RiskLow))
			e.SecurityRisk = SecurityRisk(s)
			return err
		case "critic_result":
			return value(d, &o, critic, &e.CriticResult)
		case "summary":
			return str(d, &o, summary, &e.Summary)
		}
		return errNotFast
	})
	const required = baseRequired | 1<<thought | 1<<toolName | 1<<toolCallID | 1<<toolCall | 1<<llmResponseID
	return o, ok && o&required == required
}

// decodeToolCallFast decodes a tool call object whose keys are all
// ToolCall's, each once and none null; it gives up on anything else.
func decodeToolCallFast(d *wire.Decoder, tc *ToolCall) error {
	if c, err := d.Peek(); err != nil || c != '{' {
		return errNotFast
	}
	const (
		id = iota
		itemID
		name
		arguments
		origin
	)
	var o once
	err := d.Object(func(key []byte) error {
		if d.IsNullNext() {
			return errNotFast
		}
		switch string(key) {
		case "id":
			return str(d, &o, id, &tc.ID)
		case "responses_item_id":
			return str(d, &o, itemID, &tc.ResponsesItemID)
		case "name":
			return str(d, &o, name, &tc.Name)
		case "arguments":
			return str(d, &o, arguments, &tc.Arguments)
		case "origin":
			if !o.see(origin) {
				return errNotFast
			}
			s, err := knownStr(d, OriginCompletion, OriginResponses)
			tc.Origin = s
			return err
		}
		return errNotFast
	})
	const required = 1<<id | 1<<name | 1<<arguments | 1<<origin
	if err != nil || o&required != required {
		return errNotFast
	}
	return nil
}

func (e *ObservationEvent) decodeFast(kind string, data []byte, strs *wire.Strings) (once, bool) {
	const (
		toolName = bitFirst + iota
		toolCallID
		observation
		actionID
		extended
	)
	var o once
	ok := fastObject(data, kind, strs, func(d *wire.Decoder, key []byte) error {
		if isBase, err := baseOnce(d, &o, key, &e.Base); isBase {
			return err
		}
		switch string(key) {
		case "tool_name":
			return str(d, &o, toolName, &e.ToolName)
		case "tool_call_id":
			return str(d, &o, toolCallID, &e.ToolCallID)
		case "observation":
			if !o.see(observation) {
				return errNotFast
			}
			return decodeNested(d, &e.Observation, observationDecoder)
		case "action_id":
			return str(d, &o, actionID, &e.ActionID)
		case "extended_content":
			return list(d, &o, extended, &e.ExtendedContent)
		}
		return errNotFast
	})
	const required = baseRequired | 1<<toolName | 1<<toolCallID | 1<<observation | 1<<actionID
	return o, ok && o&required == required
}

func (e *MessageEvent) decodeFast(kind string, data []byte, strs *wire.Strings) (once, bool) {
	const (
		llmMessage = bitFirst + iota
		llmResponseID
		skills
		extended
		sender
		critic
	)
	var o once
	ok := fastObject(data, kind, strs, func(d *wire.Decoder, key []byte) error {
		if isBase, err := baseOnce(d, &o, key, &e.Base); isBase {
			return err
		}
		switch string(key) {
		case "llm_message":
			return value(d, &o, llmMessage, &e.LLMMessage)
		case "llm_response_id":
			return str(d, &o, llmResponseID, &e.LLMResponseID)
		case "activated_skills":
			return list(d, &o, skills, &e.ActivatedSkills)
		case "extended_content":
			return list(d, &o, extended, &e.ExtendedContent)
		case "sender":
			return str(d, &o, sender, &e.Sender)
		case "critic_result":
			return value(d, &o, critic, &e.CriticResult)
		}
		return errNotFast
	})
	const required = baseRequired | 1<<llmMessage
	return o, ok && o&required == required
}

func (e *Condensation) decodeFast(kind string, data []byte, strs *wire.Strings) (once, bool) {
	const (
		forgotten = bitFirst + iota
		summary
		summaryOffset
		llmResponseID
	)
	var o once
	ok := fastObject(data, kind, strs, func(d *wire.Decoder, key []byte) error {
		if isBase, err := baseOnce(d, &o, key, &e.Base); isBase {
			return err
		}
		switch string(key) {
		case "forgotten_event_ids":
			if !o.see(forgotten) {
				return errNotFast
			}
			return decodeStringsFast(d, &e.ForgottenEventIDs)
		case "summary":
			if !o.see(summary) {
				return errNotFast
			}
			s, err := d.Str()
			e.Summary = &s
			return err
		case "summary_offset":
			return value(d, &o, summaryOffset, &e.SummaryOffset)
		case "llm_response_id":
			return str(d, &o, llmResponseID, &e.LLMResponseID)
		}
		return errNotFast
	})
	const required = baseRequired | 1<<llmResponseID
	return o, ok && o&required == required
}

// decodeStringsFast decodes an array of strings (no null among them) into
// a new list, non-nil when empty as the slice decoder makes it.
func decodeStringsFast(d *wire.Decoder, dst *List[string]) error {
	if c, err := d.Peek(); err != nil || c != '[' {
		return errNotFast
	}
	list := List[string]{}
	err := d.Array(func() error {
		if d.IsNullNext() {
			return errNotFast
		}
		s, err := d.Str()
		list = append(list, s)
		return err
	})
	*dst = list
	return err
}

// The action and observation inside an ActionEvent or ObservationEvent
// are of a kind registered by a tool package. Two shapes cover most tools'
// values and are decoded here without the reflective decoder: a struct of
// plain string fields (ThinkAction, FinishAction...) and a struct that is
// only an embedded ObservationBase (ThinkObservation...). The same rule as
// above holds: on anything else (another shape, an unknown, repeated or
// null key, a missing required key, a kind not last) the value is left to
// the reflective decoder from its start.

// nestedPlan is how a registered kind's value is decoded by hand.
type nestedPlan struct {
	typ reflect.Type // the struct type; its pointer is the value
	// fields are the string fields' names, at their field indexes; nil
	// for an embedded ObservationBase.
	fields   []string
	required once // the fields that are required, by index
	obs      bool // the struct is only an embedded ObservationBase
}

// nestedPlans caches the plan of each kind per target interface type
// (Action, Observation): a *nestedPlan, nil when it has none.
var nestedPlans sync.Map // nestedKey → *nestedPlan

type nestedKey struct {
	target reflect.Type
	kind   string
}

var (
	observationBaseType = reflect.TypeFor[ObservationBase]()
	stringType          = reflect.TypeFor[string]()
	defaulterType       = reflect.TypeFor[Defaulter]()
	kindDecoderType     = reflect.TypeFor[kindDecoder]()
	jsonUnmarshalerType = reflect.TypeFor[interface{ UnmarshalJSON([]byte) error }]()
	textUnmarshalerType = reflect.TypeFor[interface{ UnmarshalText([]byte) error }]()
)

// planFor returns the plan of kind as a value of interface type target,
// or nil.
func planFor(target reflect.Type, kind string) *nestedPlan {
	key := nestedKey{target, kind}
	if p, ok := nestedPlans.Load(key); ok {
		return p.(*nestedPlan)
	}
	p := makePlan(target, kind)
	nestedPlans.Store(key, p)
	return p
}

func makePlan(target reflect.Type, kind string) *nestedPlan {
	v, ok := wire.NewKind(kind)
	if !ok {
		return nil
	}
	pt := reflect.TypeOf(v)
	if pt.Kind() != reflect.Pointer || pt.Elem().Kind() != reflect.Struct || !pt.Implements(target) ||
		pt.Implements(defaulterType) || pt.Implements(kindDecoderType) ||
		pt.Implements(jsonUnmarshalerType) || pt.Implements(textUnmarshalerType) {
		return nil
	}
	t := pt.Elem()
	if t.NumField() == 1 {
		if f := t.Field(0); f.Anonymous && f.Type == observationBaseType && f.Tag == "" {
			return &nestedPlan{typ: t, obs: true}
		}
	}
	if t.NumField() > 32 {
		return nil
	}
	p := &nestedPlan{typ: t, fields: make([]string, t.NumField())}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous || !f.IsExported() || f.Type != stringType || name == "" || name == "-" ||
			name == "kind" || slices.Contains(p.fields, name) || f.Tag.Get("wire") != "" ||
			(opts != "" && opts != "omitempty" && opts != "omitzero") {
			return nil
		}
		p.fields[i] = name
		if f.Tag.Get("required") == "true" {
			p.required |= 1 << i
		}
	}
	return p
}

// decodeNested decodes the kinded value at d into *dst (an Action or an
// Observation) by its kind's plan, or else with slow, the field's
// reflective decoder, from the value's start.
func decodeNested[T any](d *wire.Decoder, dst *T, slow func() wire.DecFunc) error {
	start := d.Pos
	if v, ok := nestedFast(d, reflect.TypeFor[T]()); ok {
		if x, ok := v.(T); ok {
			*dst = x
			return nil
		}
	}
	d.Pos = start
	return slow()(d, reflect.ValueOf(dst).Elem(), false)
}

// nestedFast decodes the object at d as a value of target by its kind's
// plan, reporting whether it did.
func nestedFast(d *wire.Decoder, target reflect.Type) (any, bool) {
	if c, err := d.Peek(); err != nil || c != '{' {
		return nil, false
	}
	raw, err := d.Skip()
	if err != nil {
		return nil, false
	}
	kind, ok := wire.KindAtEnd(raw)
	if !ok {
		return nil, false
	}
	p := planFor(target, kind)
	if p == nil {
		return nil, false
	}
	pv := reflect.New(p.typ)
	v := pv.Elem()
	var o once
	const (
		content = iota
		isError
	)
	var b *ObservationBase
	if p.obs {
		b = v.Field(0).Addr().Interface().(*ObservationBase)
	}
	ok = fastObject(raw, kind, d.Strings, func(d *wire.Decoder, key []byte) error {
		if b != nil {
			switch string(key) {
			case "content":
				if !o.see(content) {
					return errNotFast
				}
				return textContentsFast(d, &b.Content)
			case "is_error":
				if !o.see(isError) {
					return errNotFast
				}
				return boolFast(d, &b.IsError)
			}
			return errNotFast
		}
		for i, name := range p.fields {
			if name == string(key) {
				var s string
				err := str(d, &o, uint(i), &s)
				v.Field(i).SetString(s)
				return err
			}
		}
		return errNotFast
	})
	if !ok || o&p.required != p.required {
		return nil, false
	}
	return pv.Interface(), true
}

// textContentsFast decodes a list of text contents, each an object of
// "type" ("text"), "text" and optionally "cache_prompt", each key once and
// none null; it gives up on anything else (image contents included).
func textContentsFast(d *wire.Decoder, dst *List[Content]) error {
	if emptyArray(d) {
		*dst = List[Content]{}
		return nil
	}
	if c, err := d.Peek(); err != nil || c != '[' {
		return errNotFast
	}
	list := List[Content]{}
	err := d.Array(func() error {
		if c, err := d.Peek(); err != nil || c != '{' {
			return errNotFast
		}
		const (
			typ = iota
			text
			cache
		)
		var o once
		c := Content{Type: ContentText}
		err := d.Object(func(key []byte) error {
			if d.IsNullNext() {
				return errNotFast
			}
			switch string(key) {
			case "type":
				if !o.see(typ) {
					return errNotFast
				}
				if s, err := knownStr(d, ContentText, ContentImage); err != nil || s != ContentText {
					return errNotFast
				}
				return nil
			case "text":
				return str(d, &o, text, &c.Text)
			case "cache_prompt":
				if !o.see(cache) {
					return errNotFast
				}
				return boolFast(d, &c.CachePrompt)
			}
			return errNotFast
		})
		if err != nil || o&(1<<typ|1<<text) != 1<<typ|1<<text {
			return errNotFast
		}
		list = append(list, c)
		return nil
	})
	*dst = list
	return err
}

// boolFast decodes true or false.
func boolFast(d *wire.Decoder, dst *bool) error {
	for _, lit := range [...]string{"false", "true"} {
		if end := d.Pos + len(lit); end <= len(d.Data) && string(d.Data[d.Pos:end]) == lit {
			d.Pos = end
			*dst = lit == "true"
			return nil
		}
	}
	return errNotFast
}
