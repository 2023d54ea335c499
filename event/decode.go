package event

import (
	"encoding"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"reflect"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// This file is the event package's JSON decoder. It differs from
// encoding/json where the reference does:
//
//   - keys match field names exactly (Python is case-sensitive; encoding/json
//     would take "Source" for "source");
//   - unknown keys are an error only in the object being decoded strictly (an
//     event, a tool action or observation), and ignored in nested plain
//     objects, as Pydantic's extra="forbid" applies per model;
//   - an integral float such as 8.0 is accepted for an integer field, as
//     Pydantic's lax mode does.
//
// It also reads each value once: encoding/json scans a value before decoding
// it and again inside every nested json.Unmarshaler.

// decodeJSON decodes data into v (a non-nil pointer). When strict, keys of the
// top-level object that v does not declare are an error.
func decodeJSON(data []byte, v any, strict bool) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("json: decode into non-pointer %T", v)
	}
	d := &decodeState{data: data}
	d.skipSpace()
	if err := d.value(rv.Elem(), strict); err != nil {
		return err
	}
	d.skipSpace()
	if d.pos < len(d.data) {
		return d.errorf("trailing data after JSON value")
	}
	return nil
}

type decodeState struct {
	data  []byte
	pos   int
	depth int
	// kind, when set, is the kind of the object being decoded; its "kind"
	// key is checked against it rather than treated as a field.
	kind string
}

// unmarshalKinded decodes data, a JSON object whose "kind" is kind, into v
// strictly, as unmarshalStrict does, taking "kind" as known.
func unmarshalKinded(data []byte, kind string, v any) error {
	rv := reflect.ValueOf(v)
	d := &decodeState{data: data, kind: kind}
	d.skipSpace()
	if err := d.value(rv.Elem(), true); err != nil {
		return err
	}
	d.skipSpace()
	if d.pos < len(d.data) {
		return d.errorf("trailing data after JSON value")
	}
	return nil
}

// rawSpan is a JSON value as a slice of the input, not copied; for mirror
// structs whose raw parts are decoded further before the input goes away.
type rawSpan []byte

const maxDepth = 10000

var errUnexpectedEnd = errors.New("json: unexpected end of input")

func (d *decodeState) errorf(format string, args ...any) error {
	return fmt.Errorf("json: "+format+" at offset %d", append(args, d.pos)...)
}

func (d *decodeState) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decodeState) peek() (byte, error) {
	if d.pos >= len(d.data) {
		return 0, errUnexpectedEnd
	}
	return d.data[d.pos], nil
}

// literal consumes the literal word (true, false, null).
func (d *decodeState) literal(word string) error {
	if len(d.data)-d.pos < len(word) || string(d.data[d.pos:d.pos+len(word)]) != word {
		return d.errorf("invalid literal")
	}
	d.pos += len(word)
	return nil
}

// isNullNext consumes a null if one is next.
func (d *decodeState) isNullNext() bool {
	if d.pos < len(d.data) && d.data[d.pos] == 'n' {
		return d.literal("null") == nil
	}
	return false
}

// number consumes a JSON number and returns its text.
func (d *decodeState) number() ([]byte, error) {
	start := d.pos
	i := d.pos
	n := len(d.data)
	if i < n && d.data[i] == '-' {
		i++
	}
	switch {
	case i < n && d.data[i] == '0':
		i++
	case i < n && d.data[i] >= '1' && d.data[i] <= '9':
		for i < n && d.data[i] >= '0' && d.data[i] <= '9' {
			i++
		}
	default:
		return nil, d.errorf("invalid number")
	}
	if i < n && d.data[i] == '.' {
		i++
		if i >= n || d.data[i] < '0' || d.data[i] > '9' {
			return nil, d.errorf("invalid number")
		}
		for i < n && d.data[i] >= '0' && d.data[i] <= '9' {
			i++
		}
	}
	if i < n && (d.data[i] == 'e' || d.data[i] == 'E') {
		i++
		if i < n && (d.data[i] == '+' || d.data[i] == '-') {
			i++
		}
		if i >= n || d.data[i] < '0' || d.data[i] > '9' {
			return nil, d.errorf("invalid number")
		}
		for i < n && d.data[i] >= '0' && d.data[i] <= '9' {
			i++
		}
	}
	d.pos = i
	return d.data[start:i], nil
}

// str consumes a JSON string and returns its value. Invalid UTF-8 and lone
// surrogates become U+FFFD, as in encoding/json.
func (d *decodeState) str() (string, error) {
	if d.pos >= len(d.data) || d.data[d.pos] != '"' {
		return "", d.errorf("expected a string")
	}
	start := d.pos + 1
	i, high := d.scanPlain(start)
	if i >= len(d.data) {
		return "", errUnexpectedEnd
	}
	if d.data[i] == '"' {
		seg := d.data[start:i]
		if high&msb == 0 || utf8.Valid(seg) {
			d.pos = i + 1
			return string(seg), nil
		}
	}
	return d.strEscaped(start, i, high)
}

// scanPlain returns the position of the first byte at or after i that is
// special in a JSON string ('"', '\\' or a control character), or
// len(d.data), and the OR of the bytes it passed (high bit set: not ASCII).
func (d *decodeState) scanPlain(i int) (int, uint64) {
	var high uint64
	for i < len(d.data) {
		if i+8 <= len(d.data) {
			w := binary.LittleEndian.Uint64(d.data[i:])
			high |= w
			m := specialBytes(w)
			if m == 0 {
				i += 8
				continue
			}
			return i + bits.TrailingZeros64(m)/8, high
		}
		c := d.data[i]
		if c < 0x20 || c == '"' || c == '\\' {
			break
		}
		high |= uint64(c)
		i++
	}
	return i, high
}

// strEscaped decodes the string whose text starts at start and whose first
// special byte is at i: the string has escapes, invalid UTF-8 or an error.
// high is the OR of the bytes before i.
func (d *decodeState) strEscaped(start, i int, high uint64) (string, error) {
	// Find the end first, so the value is allocated once: it is no longer
	// than its JSON text.
	end := i
	for {
		if end >= len(d.data) {
			return "", errUnexpectedEnd
		}
		c := d.data[end]
		if c == '"' {
			break
		}
		if c < 0x20 {
			d.pos = end
			return "", d.errorf("control character in string")
		}
		if c == '\\' {
			end += 2
		}
		var h uint64
		end, h = d.scanPlain(end)
		high |= h
	}
	buf := make([]byte, 0, end-start)
	buf = append(buf, d.data[start:i]...)
	for i < end {
		if d.data[i] != '\\' {
			j, _ := d.scanPlain(i)
			buf = append(buf, d.data[i:j]...)
			i = j
			continue
		}
		i++
		switch e := d.data[i]; e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := hex4(d.data[i+1:])
			if !ok {
				d.pos = i
				return "", d.errorf("invalid \\u escape")
			}
			i += 4
			if utf16.IsSurrogate(r) {
				r2, ok := rune(-1), false
				if i+2 < len(d.data) && d.data[i+1] == '\\' && d.data[i+2] == 'u' {
					r2, ok = hex4(d.data[i+3:])
				}
				if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
					r = dec
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			d.pos = i
			return "", d.errorf("invalid escape")
		}
		i++
	}
	d.pos = end + 1
	if high&msb != 0 && !utf8.Valid(buf) {
		// Escapes always decode to whole characters, so an invalid sequence
		// comes from the raw text.
		buf = replaceInvalid(buf)
	}
	// buf is not used again: the string can share its memory.
	return unsafe.String(unsafe.SliceData(buf), len(buf)), nil
}

// replaceInvalid returns b with each byte of an invalid UTF-8 sequence
// replaced by U+FFFD.
func replaceInvalid(b []byte) []byte {
	out := make([]byte, 0, len(b)+16)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			out = append(out, "\uFFFD"...)
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return out
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	return r, true
}

// key consumes an object key. Keys without escapes are returned as a slice
// of the input, saving an allocation per key.
func (d *decodeState) key() ([]byte, error) {
	if d.pos < len(d.data) && d.data[d.pos] == '"' {
		for i := d.pos + 1; i < len(d.data); i++ {
			c := d.data[i]
			if c == '"' {
				k := d.data[d.pos+1 : i]
				if utf8.Valid(k) {
					d.pos = i + 1
					return k, nil
				}
				break
			}
			if c == '\\' || c < 0x20 {
				break
			}
		}
	}
	s, err := d.str()
	return []byte(s), err
}

// skip consumes one JSON value, checking its syntax, and returns its bytes.
func (d *decodeState) skip() ([]byte, error) {
	start := d.pos
	if err := d.skipValue(); err != nil {
		return nil, err
	}
	return d.data[start:d.pos], nil
}

func (d *decodeState) skipValue() error {
	c, err := d.peek()
	if err != nil {
		return err
	}
	switch c {
	case '{':
		return d.object(func([]byte) error { return d.skipValue() })
	case '[':
		return d.array(func() error { return d.skipValue() })
	case '"':
		return d.skipString()
	case 't':
		return d.literal("true")
	case 'f':
		return d.literal("false")
	case 'n':
		return d.literal("null")
	}
	_, err = d.number()
	return err
}

// skipString consumes a string without building it.
func (d *decodeState) skipString() error {
	d.pos++ // opening quote
	for i := d.pos; i < len(d.data); i++ {
		for i+8 <= len(d.data) && stringWord(binary.LittleEndian.Uint64(d.data[i:])) {
			i += 8
		}
		if i >= len(d.data) {
			break
		}
		switch c := d.data[i]; {
		case c == '"':
			d.pos = i + 1
			return nil
		case c == '\\':
			i++
			if i >= len(d.data) {
				return errUnexpectedEnd
			}
			switch d.data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if _, ok := hex4(d.data[i+1:]); !ok {
					d.pos = i
					return d.errorf("invalid \\u escape")
				}
				i += 4
			default:
				d.pos = i
				return d.errorf("invalid escape")
			}
		case c < 0x20:
			d.pos = i
			return d.errorf("control character in string")
		}
	}
	return errUnexpectedEnd
}

// object consumes an object, calling member for each key with the decoder
// positioned at the value.
//
// The key is valid only during the call, before the value is read: it may
// alias the input.
func (d *decodeState) object(member func(key []byte) error) error {
	if d.depth++; d.depth > maxDepth {
		return d.errorf("nesting too deep")
	}
	defer func() { d.depth-- }()
	d.pos++ // {
	d.skipSpace()
	if c, err := d.peek(); err != nil {
		return err
	} else if c == '}' {
		d.pos++
		return nil
	}
	for {
		d.skipSpace()
		key, err := d.key()
		if err != nil {
			return err
		}
		d.skipSpace()
		if c, err := d.peek(); err != nil {
			return err
		} else if c != ':' {
			return d.errorf("expected ':' after object key")
		}
		d.pos++
		d.skipSpace()
		if err := member(key); err != nil {
			return err
		}
		d.skipSpace()
		c, err := d.peek()
		if err != nil {
			return err
		}
		d.pos++
		switch c {
		case ',':
		case '}':
			return nil
		default:
			d.pos--
			return d.errorf("expected ',' or '}' in object")
		}
	}
}

// array consumes an array, calling elem with the decoder positioned at each
// element.
func (d *decodeState) array(elem func() error) error {
	if d.depth++; d.depth > maxDepth {
		return d.errorf("nesting too deep")
	}
	defer func() { d.depth-- }()
	d.pos++ // [
	d.skipSpace()
	if c, err := d.peek(); err != nil {
		return err
	} else if c == ']' {
		d.pos++
		return nil
	}
	for {
		d.skipSpace()
		if err := elem(); err != nil {
			return err
		}
		d.skipSpace()
		c, err := d.peek()
		if err != nil {
			return err
		}
		d.pos++
		switch c {
		case ',':
		case ']':
			return nil
		default:
			d.pos--
			return d.errorf("expected ',' or ']' in array")
		}
	}
}

type decFunc func(d *decodeState, v reflect.Value, strict bool) error

var decCache sync.Map // reflect.Type -> decFunc

func decoderFor(t reflect.Type) decFunc {
	if f, ok := decCache.Load(t); ok {
		return f.(decFunc)
	}
	var (
		wg sync.WaitGroup
		f  decFunc
	)
	wg.Add(1)
	fi, loaded := decCache.LoadOrStore(t, decFunc(func(d *decodeState, v reflect.Value, strict bool) error {
		wg.Wait()
		return f(d, v, strict)
	}))
	if loaded {
		return fi.(decFunc)
	}
	f = newDecoder(t)
	wg.Done()
	decCache.Store(t, f)
	return f
}

// value decodes the next value into v, which must be settable.
func (d *decodeState) value(v reflect.Value, strict bool) error {
	return decoderFor(v.Type())(d, v, strict)
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	messageType         = reflect.TypeFor[Message]()
)

func newDecoder(t reflect.Type) decFunc {
	switch t {
	case reflect.TypeFor[rawSpan]():
		return func(d *decodeState, v reflect.Value, _ bool) error {
			raw, err := d.skip()
			if err != nil {
				return err
			}
			v.SetBytes(raw)
			return nil
		}
	case rawMessageType:
		return func(d *decodeState, v reflect.Value, _ bool) error {
			raw, err := d.skip()
			if err != nil {
				return err
			}
			v.SetBytes(append(json.RawMessage(nil), raw...))
			return nil
		}
	case contentType:
		return func(d *decodeState, v reflect.Value, _ bool) error {
			return d.content(v.Addr().Interface().(*Content))
		}
	case messageType:
		return func(d *decodeState, v reflect.Value, _ bool) error {
			return d.message(v.Addr().Interface().(*Message))
		}
	}
	// Event types implement json.Unmarshaler for encoding/json users by
	// calling this decoder; decode them field by field here.
	isEvent := t.Kind() == reflect.Struct && reflect.PointerTo(t).Implements(codecEventType)
	if !isEvent && t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(unmarshalerType) {
		return func(d *decodeState, v reflect.Value, _ bool) error {
			raw, err := d.skip()
			if err != nil {
				return err
			}
			return v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(raw)
		}
	}
	if t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return func(d *decodeState, v reflect.Value, _ bool) error {
			if d.isNullNext() {
				return nil
			}
			s, err := d.str()
			if err != nil {
				return err
			}
			return v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s))
		}
	}
	switch t.Kind() {
	case reflect.Bool:
		return func(d *decodeState, v reflect.Value, _ bool) error {
			switch c, err := d.peek(); {
			case err != nil:
				return err
			case c == 't':
				v.SetBool(true)
				return d.literal("true")
			case c == 'f':
				v.SetBool(false)
				return d.literal("false")
			case c == 'n':
				return d.literal("null")
			}
			return d.errorf("expected a boolean")
		}
	case reflect.String:
		return func(d *decodeState, v reflect.Value, _ bool) error {
			if d.isNullNext() {
				return nil
			}
			s, err := d.str()
			if err != nil {
				return err
			}
			v.SetString(s)
			return nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(d *decodeState, v reflect.Value, _ bool) error {
			if d.isNullNext() {
				return nil
			}
			num, err := d.number()
			if err != nil {
				return err
			}
			n, err := strconv.ParseInt(string(num), 10, 64)
			if err != nil {
				// Pydantic takes an integral float (8.0) for an int.
				f, ferr := strconv.ParseFloat(string(num), 64)
				if ferr != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<63 {
					return d.errorf("cannot read %s as an integer", num)
				}
				n = int64(f)
			}
			if v.OverflowInt(n) {
				return d.errorf("%s overflows %v", num, v.Type())
			}
			v.SetInt(n)
			return nil
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return func(d *decodeState, v reflect.Value, _ bool) error {
			if d.isNullNext() {
				return nil
			}
			num, err := d.number()
			if err != nil {
				return err
			}
			n, err := strconv.ParseUint(string(num), 10, 64)
			if err != nil || v.OverflowUint(n) {
				return d.errorf("cannot read %s as %v", num, v.Type())
			}
			v.SetUint(n)
			return nil
		}
	case reflect.Float32, reflect.Float64:
		bits := t.Bits()
		return func(d *decodeState, v reflect.Value, _ bool) error {
			if d.isNullNext() {
				return nil
			}
			num, err := d.number()
			if err != nil {
				return err
			}
			f, err := strconv.ParseFloat(string(num), bits)
			if err != nil {
				return d.errorf("cannot read %s as %v", num, v.Type())
			}
			v.SetFloat(f)
			return nil
		}
	case reflect.Pointer:
		elem := t.Elem()
		dec := decoderFor(elem)
		return func(d *decodeState, v reflect.Value, strict bool) error {
			if d.isNullNext() {
				v.SetZero()
				return nil
			}
			if v.IsNil() {
				v.Set(reflect.New(elem))
			}
			return dec(d, v.Elem(), strict)
		}
	case reflect.Interface:
		if t.NumMethod() > 0 {
			return func(d *decodeState, v reflect.Value, _ bool) error {
				if d.isNullNext() {
					v.SetZero()
					return nil
				}
				return d.errorf("cannot decode into interface %v", t)
			}
		}
		return func(d *decodeState, v reflect.Value, _ bool) error {
			x, err := d.anyValue()
			if err != nil {
				return err
			}
			if x == nil {
				v.SetZero()
			} else {
				v.Set(reflect.ValueOf(x))
			}
			return nil
		}
	case reflect.Slice:
		return newSliceDecoder(t)
	case reflect.Array:
		elem := t.Elem()
		return func(d *decodeState, v reflect.Value, _ bool) error {
			if d.isNullNext() {
				return nil
			}
			if c, err := d.peek(); err != nil {
				return err
			} else if c != '[' {
				return d.errorf("expected an array for %v", t)
			}
			i := 0
			dec := decoderFor(elem)
			err := d.array(func() error {
				if i >= v.Len() {
					_, err := d.skip()
					return err
				}
				i++
				return dec(d, v.Index(i-1), false)
			})
			for ; i < v.Len(); i++ {
				v.Index(i).SetZero()
			}
			return err
		}
	case reflect.Map:
		return newMapDecoder(t)
	case reflect.Struct:
		return newStructDecoder(t)
	}
	return func(d *decodeState, v reflect.Value, _ bool) error {
		return d.errorf("cannot decode into %v", t)
	}
}

func newSliceDecoder(t reflect.Type) decFunc {
	elem := t.Elem()
	if elem.Kind() == reflect.Uint8 && !reflect.PointerTo(elem).Implements(unmarshalerType) &&
		!reflect.PointerTo(elem).Implements(textUnmarshalerType) {
		return func(d *decodeState, v reflect.Value, _ bool) error {
			if d.isNullNext() {
				v.SetZero()
				return nil
			}
			s, err := d.str()
			if err != nil {
				return err
			}
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return d.errorf("invalid base64 for %v", t)
			}
			v.SetBytes(b)
			return nil
		}
	}
	return func(d *decodeState, v reflect.Value, _ bool) error {
		if d.isNullNext() {
			v.SetZero()
			return nil
		}
		if c, err := d.peek(); err != nil {
			return err
		} else if c != '[' {
			return d.errorf("expected an array for %v", t)
		}
		dec := decoderFor(elem)
		s := reflect.MakeSlice(t, 0, 4)
		n := 0
		err := d.array(func() error {
			if n == s.Cap() {
				s = reflect.AppendSlice(s, reflect.MakeSlice(t, n, n)).Slice(0, n)
			}
			s = s.Slice(0, n+1)
			n++
			return dec(d, s.Index(n-1), false)
		})
		if err != nil {
			return err
		}
		v.Set(s)
		return nil
	}
}

func newMapDecoder(t reflect.Type) decFunc {
	kt, et := t.Key(), t.Elem()
	keyOf := func(s string) (reflect.Value, error) {
		k := reflect.New(kt).Elem()
		switch {
		case kt.Kind() == reflect.String:
			k.SetString(s)
		case reflect.PointerTo(kt).Implements(textUnmarshalerType):
			if err := k.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
				return k, err
			}
		case k.CanInt():
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || k.OverflowInt(n) {
				return k, fmt.Errorf("json: invalid map key %q", s)
			}
			k.SetInt(n)
		case k.CanUint():
			n, err := strconv.ParseUint(s, 10, 64)
			if err != nil || k.OverflowUint(n) {
				return k, fmt.Errorf("json: invalid map key %q", s)
			}
			k.SetUint(n)
		default:
			return k, fmt.Errorf("json: unsupported map key type %v", kt)
		}
		return k, nil
	}
	return func(d *decodeState, v reflect.Value, _ bool) error {
		if d.isNullNext() {
			v.SetZero()
			return nil
		}
		if c, err := d.peek(); err != nil {
			return err
		} else if c != '{' {
			return d.errorf("expected an object for %v", t)
		}
		if v.IsNil() {
			v.Set(reflect.MakeMap(t))
		}
		dec := decoderFor(et)
		return d.object(func(key []byte) error {
			k, err := keyOf(string(key))
			if err != nil {
				return err
			}
			e := reflect.New(et).Elem()
			if err := dec(d, e, false); err != nil {
				return err
			}
			v.SetMapIndex(k, e)
			return nil
		})
	}
}

type decField struct {
	name  string
	index []int
	typ   reflect.Type
	dec   decFunc
	req   int // position among the required fields, or -1
}

func newStructDecoder(t reflect.Type) decFunc {
	fields := map[string]decField{}
	var required []string
	for _, f := range structFields(t) {
		df := decField{f.name, f.index, f.typ, decoderFor(f.typ), -1}
		if f.required {
			df.req = len(required)
			required = append(required, f.name)
		}
		fields[f.name] = df
	}
	return func(d *decodeState, v reflect.Value, strict bool) error {
		if d.isNullNext() {
			return nil
		}
		if c, err := d.peek(); err != nil {
			return err
		} else if c != '{' {
			return d.errorf("expected an object for %v", t)
		}
		var seen []bool
		if len(required) > 0 {
			seen = make([]bool, len(required))
		}
		err := d.object(func(key []byte) error {
			f, ok := fields[string(key)]
			if ok && f.req >= 0 {
				seen[f.req] = true
			}
			if !ok {
				if string(key) == "kind" && strict && d.kind != "" {
					k, err := d.str()
					if err == nil && k != d.kind {
						err = fmt.Errorf("kind %q does not match %q", k, d.kind)
					}
					return err
				}
				if strict {
					return unknownFieldError{string(key)}
				}
				return d.skipValue()
			}
			fv := v
			for i, x := range f.index {
				if i > 0 && fv.Kind() == reflect.Pointer {
					if fv.IsNil() {
						if !fv.CanSet() {
							return fmt.Errorf("%s: cannot set embedded pointer to unexported struct %v", f.name, fv.Type().Elem())
						}
						fv.Set(reflect.New(fv.Type().Elem()))
					}
					fv = fv.Elem()
				}
				fv = fv.Field(x)
			}
			if err := f.dec(d, fv, false); err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for i, ok := range seen {
			if !ok {
				return fmt.Errorf("missing required field %q", required[i])
			}
		}
		return nil
	}
}

// anyValue decodes generic JSON as encoding/json does into an any.
func (d *decodeState) anyValue() (any, error) {
	c, err := d.peek()
	if err != nil {
		return nil, err
	}
	switch c {
	case '{':
		m := map[string]any{}
		err := d.object(func(key []byte) error {
			k := string(key)
			x, err := d.anyValue()
			m[k] = x
			return err
		})
		return m, err
	case '[':
		s := []any{}
		err := d.array(func() error {
			x, err := d.anyValue()
			s = append(s, x)
			return err
		})
		return s, err
	case '"':
		return d.str()
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return nil, d.literal("null")
	}
	num, err := d.number()
	if err != nil {
		return nil, err
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil {
		return nil, d.errorf("number %s out of range", num)
	}
	return f, nil
}

// content decodes a TextContent or ImageContent (see Content.UnmarshalJSON).
func (d *decodeState) content(c *Content) error {
	if c2, err := d.peek(); err != nil {
		return err
	} else if c2 != '{' {
		return d.errorf("expected an object for content")
	}
	var (
		typ, text       *string
		urls            []string
		hasURLs         bool
		cache           bool
		unknown         string
		typeStr, txtStr string
	)
	err := d.object(func(keyb []byte) error {
		var err error
		key := fieldName(keyb)
		switch key {
		case "type":
			if d.isNullNext() {
				typ = nil
				return nil
			}
			typeStr, err = d.str()
			typ = &typeStr
		case "text":
			if d.isNullNext() {
				text = nil
				return nil
			}
			txtStr, err = d.str()
			text = &txtStr
		case "cache_prompt":
			var b bool
			err = decoderFor(reflect.TypeFor[bool]())(d, reflect.ValueOf(&b).Elem(), false)
			cache = b
		case "image_urls":
			err = decoderFor(reflect.TypeFor[[]string]())(d, reflect.ValueOf(&urls).Elem(), false)
			hasURLs = urls != nil
		case "enable_truncation": // deprecated, dropped
			err = d.skipValue()
		default:
			if unknown == "" {
				unknown = key
			}
			err = d.skipValue()
		}
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("content: %w", err)
	}
	return c.set(typ, text, urls, hasURLs, cache, unknown)
}

// set fills c from the keys of a content object, by the reference's rules:
// text content is strict, image content ignores unknown keys, and a block
// without "type" is text if it validates as text, else an image.
func (c *Content) set(typ, text *string, urls []string, hasURLs, cache bool, unknown string) error {
	t := ""
	if typ != nil {
		t = *typ
	}
	if t == "" {
		t = ContentText
		if (text == nil || unknown != "" || hasURLs) && hasURLs {
			t = ContentImage
		}
	}
	switch t {
	case ContentImage:
		if !hasURLs {
			return errors.New("ImageContent: missing image_urls")
		}
		*c = Content{Type: ContentImage, ImageURLs: urls, CachePrompt: cache}
	case ContentText:
		if unknown == "" && hasURLs {
			unknown = "image_urls"
		}
		if unknown != "" {
			return fmt.Errorf("TextContent: %w", unknownFieldError{unknown})
		}
		if text == nil {
			return errors.New("TextContent: missing text")
		}
		*c = Content{Type: ContentText, Text: *text, CachePrompt: cache}
	default:
		return fmt.Errorf("content: unknown type %q", t)
	}
	return nil
}

// message decodes a Message (see Message.UnmarshalJSON).
func (d *decodeState) message(m *Message) error {
	if c, err := d.peek(); err != nil {
		return err
	} else if c != '{' {
		return d.errorf("expected an object for a message")
	}
	*m = Message{}
	var contentSeen bool
	fields := messageFields()
	err := d.object(func(key []byte) error {
		if string(key) == "content" {
			contentSeen = true
			c, err := d.peek()
			if err != nil {
				return err
			}
			switch c {
			case 'n':
				m.Content = List[Content]{}
				return d.literal("null")
			case '"':
				s, err := d.str()
				m.Content = List[Content]{Text(s)}
				return err
			}
			var list []Content
			if err := decoderFor(reflect.TypeFor[[]Content]())(d, reflect.ValueOf(&list).Elem(), false); err != nil {
				return fmt.Errorf("content: %w", err)
			}
			m.Content = list
			return nil
		}
		f, ok := fields[string(key)]
		if !ok {
			return d.skipValue() // Message ignores unknown keys
		}
		if err := decoderFor(f.typ)(d, reflect.ValueOf(m).Elem().FieldByIndex(f.index), false); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("message: %w", err)
	}
	if !contentSeen || m.Content == nil {
		m.Content = List[Content]{}
	}
	switch m.Role {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool:
	default:
		return fmt.Errorf("message: invalid role %q", m.Role)
	}
	return nil
}

var messageFields = sync.OnceValue(func() map[string]decField {
	fields := map[string]decField{}
	for _, f := range structFields(messageType) {
		fields[f.name] = decField{name: f.name, index: f.index, typ: f.typ, req: -1}
	}
	return fields
})

// fieldName returns the content-block key k as a string, without allocating
// for the keys a content block normally has.
func fieldName(k []byte) string {
	for _, name := range [...]string{"type", "text", "cache_prompt", "image_urls", "enable_truncation"} {
		if string(k) == name {
			return name
		}
	}
	return string(k)
}
