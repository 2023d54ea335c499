package wire

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// This file is the JSON encoder. It writes what Pydantic
// writes: compact output, non-ASCII and U+2028/U+2029 left as they are, floats
// in Python's style (30.0, 1e+16, 1e-6), "kind" as the last key of every
// registered kind, and List/Map fields as [] and {} when empty. It appends to
// a caller's buffer and never re-scans its own output, which encoding/json
// does for every nested json.Marshaler; that is most of the cost of encoding
// an event with a few kilobytes of tool output.
//
// Struct fields follow encoding/json's rules for tags (name, omitempty,
// omitzero, "-") and embedding, so types written for encoding/json encode the
// same here except for the formatting above.

type encFunc = EncFunc

var encCache sync.Map // reflect.Type -> encFunc

// Append appends the JSON encoding of v to b.
func Append(b []byte, v any) ([]byte, error) {
	if v == nil {
		return append(b, "null"...), nil
	}
	rv := reflect.ValueOf(v)
	return encoderFor(rv.Type())(b, rv)
}

func encoderFor(t reflect.Type) encFunc {
	if f, ok := encCache.Load(t); ok {
		return f.(encFunc)
	}
	// Recursive types: publish an indirect encoder first, as encoding/json does.
	var (
		wg sync.WaitGroup
		f  encFunc
	)
	wg.Add(1)
	fi, loaded := encCache.LoadOrStore(t, encFunc(func(b []byte, v reflect.Value) ([]byte, error) {
		wg.Wait()
		return f(b, v)
	}))
	if loaded {
		return fi.(encFunc)
	}
	f = newEncoder(t, true)
	wg.Done()
	encCache.Store(t, f)
	return f
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	appenderType      = reflect.TypeFor[Appender]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	rawMessageType    = reflect.TypeFor[json.RawMessage]()
	durationType      = reflect.TypeFor[time.Duration]()
)

func newEncoder(t reflect.Type, allowAddr bool) encFunc {
	if t == rawMessageType {
		return encodeRaw
	}
	if f, ok := ext.Encoders[t]; ok {
		return f
	}
	if empty, ok := extEmpty(t); ok {
		var inner encFunc
		switch t.Kind() {
		case reflect.Slice:
			inner = newSliceEncoder(t)
		case reflect.Map:
			inner = newMapEncoder(t)
		}
		if inner != nil {
			return func(b []byte, v reflect.Value) ([]byte, error) {
				if v.IsNil() {
					return append(b, empty...), nil
				}
				return inner(b, v)
			}
		}
	}
	isEvent := extFielded(t) || extFielded(reflect.PointerTo(t))
	if isEvent && t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct {
		elem := t.Elem()
		return func(b []byte, v reflect.Value) ([]byte, error) {
			if v.IsNil() {
				return append(b, "null"...), nil
			}
			if ext.Prepare != nil {
				x, err := ext.Prepare(v.Interface())
				if err != nil {
					return nil, err
				}
				v = reflect.ValueOf(x)
			}
			return encoderFor(elem)(b, v.Elem())
		}
	}
	if !isEvent {
		// A registered kind with its own MarshalJSON still gets its kind.
		kt := t
		if kt.Kind() == reflect.Pointer {
			kt = kt.Elem()
		}
		kind, isKind := registeredKind(kt)
		withKind := func(f encFunc) encFunc {
			if !isKind {
				return f
			}
			return func(b []byte, v reflect.Value) ([]byte, error) {
				start := len(b)
				b, err := f(b, v)
				if err != nil || string(b[start:]) == "null" ||
					strings.HasSuffix(string(b[start:]), `"kind":"`+kind+`"}`) {
					return b, err
				}
				obj, err := appendKind(b[start:], kind)
				return append(b[:start], obj...), err
			}
		}
		if t.Kind() != reflect.Pointer && allowAddr && reflect.PointerTo(t).Implements(appenderType) {
			return condAddrEncoder(withKind(addrAppenderEncoder), newEncoder(t, false))
		}
		if t.Implements(appenderType) {
			return withKind(appenderEncoder)
		}
		if t.Kind() != reflect.Pointer && allowAddr && reflect.PointerTo(t).Implements(marshalerType) {
			return condAddrEncoder(withKind(addrMarshalerEncoder), newEncoder(t, false))
		}
		if t.Implements(marshalerType) {
			return withKind(marshalerEncoder)
		}
		if t.Kind() != reflect.Pointer && allowAddr && reflect.PointerTo(t).Implements(textMarshalerType) {
			return condAddrEncoder(addrTextEncoder, newEncoder(t, false))
		}
		if t.Implements(textMarshalerType) {
			return textEncoder
		}
	}
	switch t.Kind() {
	case reflect.Bool:
		return func(b []byte, v reflect.Value) ([]byte, error) { return strconv.AppendBool(b, v.Bool()), nil }
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(b []byte, v reflect.Value) ([]byte, error) { return strconv.AppendInt(b, v.Int(), 10), nil }
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return func(b []byte, v reflect.Value) ([]byte, error) { return strconv.AppendUint(b, v.Uint(), 10), nil }
	case reflect.Float32:
		return func(b []byte, v reflect.Value) ([]byte, error) { return AppendFloat(b, v.Float(), 32), nil }
	case reflect.Float64:
		return func(b []byte, v reflect.Value) ([]byte, error) { return AppendFloat(b, v.Float(), 64), nil }
	case reflect.String:
		return func(b []byte, v reflect.Value) ([]byte, error) { return AppendString(b, v.String()), nil }
	case reflect.Interface:
		return newInterfaceEncoder()
	case reflect.Pointer:
		enc := encoderFor(t.Elem())
		return func(b []byte, v reflect.Value) ([]byte, error) {
			if v.IsNil() {
				return append(b, "null"...), nil
			}
			return enc(b, v.Elem())
		}
	case reflect.Struct:
		return newStructEncoder(t)
	case reflect.Map:
		return newMapEncoder(t)
	case reflect.Slice:
		return newSliceEncoder(t)
	case reflect.Array:
		return newArrayEncoder(t)
	}
	return func(b []byte, v reflect.Value) ([]byte, error) {
		return nil, fmt.Errorf("json: unsupported type %v", t)
	}
}

func condAddrEncoder(addr, plain encFunc) encFunc {
	return func(b []byte, v reflect.Value) ([]byte, error) {
		if v.CanAddr() {
			return addr(b, v)
		}
		return plain(b, v)
	}
}

func encodeRaw(b []byte, v reflect.Value) ([]byte, error) {
	raw := v.Bytes()
	if len(raw) == 0 {
		return append(b, "null"...), nil
	}
	return appendCompact(b, raw)
}

// appendCompact appends the JSON value raw with insignificant space removed
// and key order kept, reporting invalid JSON.
func appendCompact(b, raw []byte) ([]byte, error) {
	if isCompact(raw) {
		if !json.Valid(raw) {
			return nil, fmt.Errorf("json: invalid raw JSON %.40q", raw)
		}
		return append(b, raw...), nil
	}
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, raw); err != nil {
		return nil, fmt.Errorf("json: invalid raw JSON %.40q: %w", raw, err)
	}
	return buf.Bytes(), nil
}

// isCompact reports whether raw has no whitespace outside strings.
func isCompact(raw []byte) bool {
	inStr := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case inStr:
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == ' ' || c == '\n' || c == '\r' || c == '\t':
			return false
		}
	}
	return true
}

func marshalerEncoder(b []byte, v reflect.Value) ([]byte, error) {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return append(b, "null"...), nil
	}
	m, ok := v.Interface().(json.Marshaler)
	if !ok {
		return append(b, "null"...), nil
	}
	out, err := m.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("json: error calling MarshalJSON for type %v: %w", v.Type(), err)
	}
	return appendCompact(b, out)
}

func addrMarshalerEncoder(b []byte, v reflect.Value) ([]byte, error) {
	return marshalerEncoder(b, v.Addr())
}

// Appender is event.JSONAppender: a type that encodes itself by appending
// to a buffer, trusted to append exactly one compact JSON value.
type Appender interface {
	AppendJSON(b []byte) ([]byte, error)
}

// appenderEncoder appends what an Appender appends, unchecked: unlike a
// json.Marshaler's output, which is validated and compacted (most of the
// cost of encoding a long list that way), it is trusted to be compact JSON.
func appenderEncoder(b []byte, v reflect.Value) ([]byte, error) {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return append(b, "null"...), nil
	}
	out, err := v.Interface().(Appender).AppendJSON(b)
	if err != nil {
		return nil, fmt.Errorf("json: error calling AppendJSON for type %v: %w", v.Type(), err)
	}
	return out, nil
}

func addrAppenderEncoder(b []byte, v reflect.Value) ([]byte, error) {
	return appenderEncoder(b, v.Addr())
}

func textEncoder(b []byte, v reflect.Value) ([]byte, error) {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return append(b, "null"...), nil
	}
	out, err := v.Interface().(encoding.TextMarshaler).MarshalText()
	if err != nil {
		return nil, fmt.Errorf("json: error calling MarshalText for type %v: %w", v.Type(), err)
	}
	return AppendString(b, string(out)), nil
}

func addrTextEncoder(b []byte, v reflect.Value) ([]byte, error) { return textEncoder(b, v.Addr()) }

// newInterfaceEncoder returns an encoder of the dynamic value. Values
// reached through an interface are not addressable; a registered kind held
// as a pointer (the usual case: an Action or Observation) is encoded through
// the pointer so pointer-receiver methods apply. Each interface field
// remembers the last dynamic type it saw, which is nearly always the next
// one's, to skip the encoder cache.
func newInterfaceEncoder() encFunc {
	type typed struct {
		t reflect.Type
		f encFunc
	}
	var last atomic.Pointer[typed]
	return func(b []byte, v reflect.Value) ([]byte, error) {
		if v.IsNil() {
			return append(b, "null"...), nil
		}
		e := v.Elem()
		if e.Kind() == reflect.Float64 {
			// Generic JSON decoded into any: keep integers integers.
			return appendAnyFloat(b, e.Float()), nil
		}
		t := e.Type()
		if l := last.Load(); l != nil && l.t == t {
			return l.f(b, e)
		}
		f := encoderFor(t)
		last.Store(&typed{t, f})
		return f(b, e)
	}
}

func newSliceEncoder(t reflect.Type) encFunc {
	if t.Elem().Kind() == reflect.Uint8 && !reflect.PointerTo(t.Elem()).Implements(marshalerType) &&
		!reflect.PointerTo(t.Elem()).Implements(textMarshalerType) {
		return func(b []byte, v reflect.Value) ([]byte, error) {
			if v.IsNil() {
				return append(b, "null"...), nil
			}
			b = append(b, '"')
			b = base64.StdEncoding.AppendEncode(b, v.Bytes())
			return append(b, '"'), nil
		}
	}
	arr := newArrayEncoder(t)
	return func(b []byte, v reflect.Value) ([]byte, error) {
		if v.IsNil() {
			return append(b, "null"...), nil
		}
		return arr(b, v)
	}
}

func newArrayEncoder(t reflect.Type) encFunc {
	elem := t.Elem()
	return func(b []byte, v reflect.Value) ([]byte, error) {
		enc := encoderFor(elem)
		b = append(b, '[')
		n := v.Len()
		for i := range n {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = enc(b, v.Index(i)); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
}

func newMapEncoder(t reflect.Type) encFunc {
	kt := t.Key()
	switch kt.Kind() {
	case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
	default:
		if !kt.Implements(textMarshalerType) {
			return func(b []byte, v reflect.Value) ([]byte, error) {
				return nil, fmt.Errorf("json: unsupported map key type %v", kt)
			}
		}
	}
	elem := t.Elem()
	return func(b []byte, v reflect.Value) ([]byte, error) {
		if v.IsNil() {
			return append(b, "null"...), nil
		}
		type kv struct {
			k string
			v reflect.Value
		}
		items := make([]kv, 0, v.Len())
		iter := v.MapRange()
		for iter.Next() {
			k, err := mapKey(iter.Key())
			if err != nil {
				return nil, err
			}
			items = append(items, kv{k, iter.Value()})
		}
		slices.SortFunc(items, func(a, b kv) int { return strings.Compare(a.k, b.k) })
		enc := encoderFor(elem)
		b = append(b, '{')
		for i, it := range items {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, it.k)
			b = append(b, ':')
			var err error
			if b, err = enc(b, it.v); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
}

func mapKey(k reflect.Value) (string, error) {
	if k.Kind() == reflect.String {
		return k.String(), nil
	}
	if tm, ok := k.Interface().(encoding.TextMarshaler); ok {
		if k.Kind() == reflect.Pointer && k.IsNil() {
			return "", nil
		}
		out, err := tm.MarshalText()
		return string(out), err
	}
	switch k.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(k.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(k.Uint(), 10), nil
	}
	return "", fmt.Errorf("json: unexpected map key type %v", k.Type())
}

// field is one encoded struct field.
type field struct {
	name      string
	key       []byte // `"name":`
	index     []int
	omitEmpty bool
	omitZero  bool
	zeroer    bool // the type has an IsZero method
	required  bool // decoding: the key must be present (tag required:"true")
	nullEmpty bool // an empty value is written as null; null decodes as empty
	emitEmpty bool // a nil slice or map is written as [] or {}
	kinded    bool // an interface value is written and read with its kind
	formatSec bool // a time.Duration is written and read as seconds
	plain     bool // no option that leaves it out or writes null, no pointer on its path
	tagged    bool
	typ       reflect.Type
}

func newStructEncoder(t reflect.Type) encFunc {
	fields := structFields(t)
	kind, isKind := registeredKind(t)
	var kindTail []byte
	if isKind {
		kindTail = AppendString([]byte(`"kind":`), kind)
	}
	// Field encoders are looked up once, as encoding/json does; a recursive
	// type gets the indirect encoder encoderFor publishes first.
	encs := make([]encFunc, len(fields))
	for i := range fields {
		encs[i] = fieldEncoder(&fields[i])
	}
	return func(b []byte, v reflect.Value) ([]byte, error) {
		b = append(b, '{')
		first := true
		for i := range fields {
			f := &fields[i]
			var fv reflect.Value
			if f.plain { // the common case, without the calls below
				fv = v.Field(f.index[0])
				for _, x := range f.index[1:] {
					fv = fv.Field(x)
				}
			} else {
				var ok bool
				if fv, ok = f.written(v); !ok {
					continue
				}
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(b, f.key...)
			var err error
			if f.plain {
				b, err = encs[i](b, fv)
			} else {
				b, err = f.appendValue(b, fv, encs[i])
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.name, err)
			}
		}
		if isKind {
			if !first {
				b = append(b, ',')
			}
			b = append(b, kindTail...)
		}
		return append(b, '}'), nil
	}
}

// written returns f's value in the struct v and whether it is written: not
// inside a nil embedded pointer, nor left out by omitempty or omitzero.
func (f *field) written(v reflect.Value) (reflect.Value, bool) {
	fv, ok := fieldByIndex(v, f.index)
	if !ok || f.omitEmpty && isEmptyValue(fv) || f.omitZero && isZeroValue(fv, f.zeroer) {
		return fv, false
	}
	return fv, true
}

// appendValue appends the encoding of fv, f's value, by enc: null for an
// empty value of a nullempty field.
func (f *field) appendValue(b []byte, fv reflect.Value, enc encFunc) ([]byte, error) {
	if f.nullEmpty && isEmptyValue(fv) {
		return append(b, "null"...), nil
	}
	return enc(b, fv)
}

// memberCache holds, per struct type, its fields and their encoders, for
// EachMember.
var memberCache sync.Map // reflect.Type -> *members

type members struct {
	fields []field
	encs   []encFunc
}

// EachMember calls fn with the key and encoding of each member of the
// object the struct v (or a pointer to one) encodes as, in order, without
// its kind: for callers that keep or compare members one by one. val is
// valid only during the call.
func EachMember(v any, fn func(key string, val []byte) error) error {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return fmt.Errorf("json: EachMember of %T, not a struct", v)
	}
	t := rv.Type()
	mi, ok := memberCache.Load(t)
	if !ok {
		fields := structFields(t)
		m := &members{fields: fields, encs: make([]encFunc, len(fields))}
		for i := range fields {
			m.encs[i] = fieldEncoder(&fields[i])
		}
		mi, _ = memberCache.LoadOrStore(t, m)
	}
	m := mi.(*members)
	bp := scratchPool.Get().(*[]byte)
	b := *bp
	defer func() {
		if cap(b) <= 1<<20 { // as WithScratch
			*bp = b[:0]
			scratchPool.Put(bp)
		}
	}()
	for i := range m.fields {
		f := &m.fields[i]
		fv, ok := f.written(rv)
		if !ok {
			continue
		}
		var err error
		if b, err = f.appendValue(b[:0], fv, m.encs[i]); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		if err := fn(f.name, b); err != nil {
			return err
		}
	}
	return nil
}

// fieldEncoder returns the encoder of f's values, with its emitempty,
// kinded and format:sec options applied.
func fieldEncoder(f *field) encFunc {
	switch {
	case f.formatSec:
		if f.typ != durationType {
			return func([]byte, reflect.Value) ([]byte, error) {
				return nil, fmt.Errorf("format:sec on %v, not a time.Duration", f.typ)
			}
		}
		return func(b []byte, v reflect.Value) ([]byte, error) {
			return AppendFloat(b, time.Duration(v.Int()).Seconds(), 64), nil
		}
	case f.kinded && f.typ.Kind() == reflect.Interface:
		return func(b []byte, v reflect.Value) ([]byte, error) {
			if v.IsNil() {
				return append(b, "null"...), nil
			}
			return AppendKinded(b, v.Interface())
		}
	case f.emitEmpty && (f.typ.Kind() == reflect.Slice || f.typ.Kind() == reflect.Map):
		empty := "[]"
		switch {
		case f.typ.Kind() == reflect.Map:
			empty = "{}"
		case f.typ.Elem().Kind() == reflect.Uint8:
			empty = `""` // a []byte is a base64 string
		}
		enc := encoderFor(f.typ)
		return func(b []byte, v reflect.Value) ([]byte, error) {
			if v.IsNil() {
				return append(b, empty...), nil
			}
			return enc(b, v)
		}
	}
	return encoderFor(f.typ)
}

// fieldByIndex is v.FieldByIndex that reports false for a field inside a nil
// embedded pointer.
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

type isZeroer interface{ IsZero() bool }

var isZeroerType = reflect.TypeFor[isZeroer]()

// isZeroValue is omitzero's test; zeroer says whether v's type has an
// IsZero method, known when the encoder is built, so that other values are
// not boxed into an interface to find out.
func isZeroValue(v reflect.Value, zeroer bool) bool {
	if zeroer {
		if v.Kind() == reflect.Pointer && v.IsNil() {
			return true
		}
		return v.Interface().(isZeroer).IsZero()
	}
	return v.IsZero()
}

// structFields lists the JSON fields of t in encoding/json's order, with
// its rules for embedded structs and name conflicts.
func structFields(t reflect.Type) []field {
	type cand struct {
		field
		depth int
	}
	var all []cand
	var walk func(t reflect.Type, index []int, depth int, seen map[reflect.Type]bool, viaPtr bool)
	walk = func(t reflect.Type, index []int, depth int, seen map[reflect.Type]bool, viaPtr bool) {
		if seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			ft := sf.Type
			if sf.Anonymous {
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if !sf.IsExported() && ft.Kind() != reflect.Struct {
					continue
				}
			} else if !sf.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			// The codec's own options are in a tag of their own, which
			// encoding/json and vet's tag checks leave alone.
			wopts := sf.Tag.Get("wire")
			idx := append(slices.Clone(index), i)
			if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
				walk(ft, idx, depth+1, seen, viaPtr || sf.Type.Kind() == reflect.Pointer)
				continue
			}
			tagged := name != ""
			if name == "" {
				name = sf.Name
			}
			f := field{
				name: name, index: idx, tagged: tagged, typ: sf.Type,
				omitEmpty: hasOpt(opts, "omitempty"), omitZero: hasOpt(opts, "omitzero"),
				nullEmpty: hasOpt(wopts, "nullempty"), emitEmpty: hasOpt(wopts, "emitempty"),
				kinded: hasOpt(wopts, "kinded"), formatSec: hasOpt(wopts, "format:sec"),
				required: sf.Tag.Get("required") == "true",
				zeroer:   sf.Type.Implements(isZeroerType),
			}
			f.key = append(AppendString(nil, name), ':')
			f.plain = !viaPtr && !f.omitEmpty && !f.omitZero && !f.nullEmpty
			all = append(all, cand{f, depth})
		}
		delete(seen, t)
	}
	walk(t, nil, 0, map[reflect.Type]bool{}, false)

	// Resolve name conflicts: the shallowest field wins; among equally deep
	// ones a single tagged field wins; otherwise all are dropped.
	byName := map[string][]int{}
	for i, c := range all {
		byName[c.name] = append(byName[c.name], i)
	}
	drop := map[int]bool{}
	for _, idxs := range byName {
		if len(idxs) < 2 {
			continue
		}
		minDepth := math.MaxInt
		for _, i := range idxs {
			minDepth = min(minDepth, all[i].depth)
		}
		var best []int
		for _, i := range idxs {
			if all[i].depth == minDepth {
				best = append(best, i)
			}
		}
		if len(best) > 1 {
			var tagged []int
			for _, i := range best {
				if all[i].tagged {
					tagged = append(tagged, i)
				}
			}
			best = tagged
		}
		for _, i := range idxs {
			if len(best) != 1 || i != best[0] {
				drop[i] = true
			}
		}
	}
	out := make([]field, 0, len(all))
	for i, c := range all {
		if !drop[i] {
			out = append(out, c.field)
		}
	}
	// encoding/json orders fields by their index sequence.
	slices.SortStableFunc(out, func(a, b field) int { return slices.Compare(a.index, b.index) })
	return out
}

func hasOpt(opts, name string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == name {
			return true
		}
	}
	return false
}

// AppendString appends s as a JSON string escaped the way Pydantic escapes:
// quote, backslash and control characters only. Invalid UTF-8 becomes
// U+FFFD.
func AppendString(b []byte, s string) []byte {
	if !utf8.ValidString(s) {
		return appendInvalidString(b, s)
	}
	b = append(b, '"')
	i := 0 // s[i:j] needs no escaping
	for j := 0; j < len(s); {
		// Eight bytes at a time; the lowest flagged byte is the first special one.
		if j+8 <= len(s) {
			m := specialBytes(binary.LittleEndian.Uint64([]byte(s[j : j+8])))
			if m == 0 {
				j += 8
				continue
			}
			j += bits.TrailingZeros64(m) / 8
		} else if c := s[j]; c >= 0x20 && c != '"' && c != '\\' {
			j++
			continue
		}
		b = append(b, s[i:j]...)
		b = appendEscape(b, s[j])
		j++
		i = j
	}
	b = append(b, s[i:]...)
	return append(b, '"')
}

// appendInvalidString is appendString for text with invalid UTF-8, whose
// bad bytes come out as U+FFFD.
func appendInvalidString(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s {
		if r < 0x20 || r == '"' || r == '\\' {
			b = appendEscape(b, byte(r))
		} else {
			b = utf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}

func appendEscape(b []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(b, '\\', c)
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	}
	const hex = "0123456789abcdef"
	return append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// specialBytes flags (with its high bit) each byte of w that ends or
// escapes a JSON string or is a control character: '"', '\\' or a byte <
// 0x20. Bytes >= 0x80 are not flagged. A flag can be spurious only above a
// true one, so the lowest flag is exact.
func specialBytes(w uint64) uint64 {
	// Each term underflows in the bytes that are < 0x20, equal to '"', or
	// equal to '\\'; masking with ^w drops bytes >= 0x80 (the three
	// targets are all < 0x80, so x^'"' and x^'\\' keep x's high bit).
	return ((w - lsb*0x20) | ((w ^ lsb*'"') - lsb) | ((w ^ lsb*'\\') - lsb)) & ^w & msb
}

// AppendFloat appends f as Pydantic writes a float: the shortest
// representation, always with a fraction or exponent ("30.0"), positional
// for decimal exponents in [-5, 16) and otherwise scientific ("1e+16",
// "1.5e-7"). NaN and infinities are written as null, as Pydantic does.
func AppendFloat(b []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	if f == 0 {
		if math.Signbit(f) {
			return append(b, "-0.0"...)
		}
		return append(b, "0.0"...)
	}
	var buf [32]byte
	sci := strconv.AppendFloat(buf[:0], f, 'e', -1, bits) // -d.ddde±XX
	mant, exps, _ := strings.Cut(string(sci), "e")
	exp, _ := strconv.Atoi(exps)
	if exp >= -5 && exp < 16 {
		start := len(b)
		b = strconv.AppendFloat(b, f, 'f', -1, bits)
		if !slices.Contains(b[start:], '.') {
			b = append(b, '.', '0')
		}
		return b
	}
	b = append(b, mant...)
	b = append(b, 'e')
	if exp >= 0 {
		b = append(b, '+')
	}
	return strconv.AppendInt(b, int64(exp), 10)
}

// appendAnyFloat writes a float64 held in an interface. Such values almost
// always come from decoding generic JSON, where 3 and 3.0 both became 3, so
// an integral value is written as an integer.
func appendAnyFloat(b []byte, f float64) []byte {
	if f == math.Trunc(f) && math.Abs(f) < 1e16 {
		return strconv.AppendInt(b, int64(f), 10)
	}
	return AppendFloat(b, f, 64)
}
