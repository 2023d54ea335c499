package wire

import (
	"bytes"
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
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// This file is the JSON decoder. It differs from
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

// Decode decodes data into v (a non-nil pointer). When strict, keys of the
// top-level object that v does not declare are an error.
func Decode(data []byte, v any, strict bool) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("json: decode into non-pointer %T", v)
	}
	d := &Decoder{Data: data}
	d.SkipSpace()
	if err := d.Value(rv.Elem(), strict); err != nil {
		return err
	}
	d.SkipSpace()
	if d.Pos < len(d.Data) {
		return d.Errorf("trailing data after JSON value")
	}
	return nil
}

type Decoder struct {
	Data  []byte // the input
	Pos   int    // offset of the next byte to read
	depth int
	// kind, when set, is the kind of the object being decoded; its "kind"
	// key is checked against it rather than treated as a field.
	kind string
	// Strings, when set, holds the copies of the strings Str returns.
	Strings *Strings
}

// DecodeKind decodes data, a JSON object whose "kind" is kind, into v
// strictly, as Decode does, taking "kind" as known.
func DecodeKind(data []byte, kind string, v any) error {
	rv := reflect.ValueOf(v)
	d := &Decoder{Data: data, kind: kind}
	d.SkipSpace()
	if err := d.Value(rv.Elem(), true); err != nil {
		return err
	}
	d.SkipSpace()
	if d.Pos < len(d.Data) {
		return d.Errorf("trailing data after JSON value")
	}
	return nil
}

// RawSpan is a JSON value as a slice of the input, not copied; for mirror
// structs whose raw parts are decoded further before the input goes away.
type RawSpan []byte

const maxDepth = 10000

var errUnexpectedEnd = errors.New("json: unexpected end of input")

// Errorf returns an error naming the offset the decoder is at.
func (d *Decoder) Errorf(format string, args ...any) error {
	return fmt.Errorf("json: "+format+" at offset %d", append(args, d.Pos)...)
}

// SkipSpace consumes white space.
func (d *Decoder) SkipSpace() {
	for d.Pos < len(d.Data) {
		switch d.Data[d.Pos] {
		case ' ', '\t', '\n', '\r':
			d.Pos++
		default:
			return
		}
	}
}

// Peek returns the next byte without consuming it.
func (d *Decoder) Peek() (byte, error) {
	if d.Pos >= len(d.Data) {
		return 0, errUnexpectedEnd
	}
	return d.Data[d.Pos], nil
}

// Literal consumes the literal word (true, false, null).
func (d *Decoder) Literal(word string) error {
	if len(d.Data)-d.Pos < len(word) || string(d.Data[d.Pos:d.Pos+len(word)]) != word {
		return d.Errorf("invalid literal")
	}
	d.Pos += len(word)
	return nil
}

// IsNullNext consumes a null if one is next.
func (d *Decoder) IsNullNext() bool {
	if d.Pos < len(d.Data) && d.Data[d.Pos] == 'n' {
		return d.Literal("null") == nil
	}
	return false
}

// number consumes a JSON number and returns its text.
func (d *Decoder) number() ([]byte, error) {
	start := d.Pos
	i := d.Pos
	n := len(d.Data)
	if i < n && d.Data[i] == '-' {
		i++
	}
	switch {
	case i < n && d.Data[i] == '0':
		i++
	case i < n && d.Data[i] >= '1' && d.Data[i] <= '9':
		for i < n && d.Data[i] >= '0' && d.Data[i] <= '9' {
			i++
		}
	default:
		return nil, d.Errorf("invalid number")
	}
	if i < n && d.Data[i] == '.' {
		i++
		if i >= n || d.Data[i] < '0' || d.Data[i] > '9' {
			return nil, d.Errorf("invalid number")
		}
		for i < n && d.Data[i] >= '0' && d.Data[i] <= '9' {
			i++
		}
	}
	if i < n && (d.Data[i] == 'e' || d.Data[i] == 'E') {
		i++
		if i < n && (d.Data[i] == '+' || d.Data[i] == '-') {
			i++
		}
		if i >= n || d.Data[i] < '0' || d.Data[i] > '9' {
			return nil, d.Errorf("invalid number")
		}
		for i < n && d.Data[i] >= '0' && d.Data[i] <= '9' {
			i++
		}
	}
	d.Pos = i
	return d.Data[start:i], nil
}

// Str consumes a JSON string and returns its value. Invalid UTF-8 and lone
// surrogates become U+FFFD, as in encoding/json.
func (d *Decoder) Str() (string, error) { return d.strIn(d.Strings) }

// strIn is Str taking a plain string's copy from strs (nil: allocated on
// its own), for a string that is not kept.
func (d *Decoder) strIn(strs *Strings) (string, error) {
	if d.Pos >= len(d.Data) || d.Data[d.Pos] != '"' {
		return "", d.Errorf("expected a string")
	}
	start := d.Pos + 1
	i, high := d.scanPlain(start)
	if i >= len(d.Data) {
		return "", errUnexpectedEnd
	}
	if d.Data[i] == '"' {
		seg := d.Data[start:i]
		if high&msb == 0 || utf8.Valid(seg) {
			d.Pos = i + 1
			return strs.Copy(seg), nil
		}
	}
	return d.strEscaped(start, i, high, strs)
}

// scanPlain returns the position of the first byte at or after i that is
// special in a JSON string ('"', '\\' or a control character), or
// len(d.Data), and the OR of the bytes it passed (high bit set: not ASCII).
func (d *Decoder) scanPlain(i int) (int, uint64) {
	var high uint64
	for i < len(d.Data) {
		if i+8 <= len(d.Data) {
			w := binary.LittleEndian.Uint64(d.Data[i:])
			high |= w
			m := specialBytes(w)
			if m == 0 {
				i += 8
				continue
			}
			return i + bits.TrailingZeros64(m)/8, high
		}
		c := d.Data[i]
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
//
// It decodes in one pass into a pooled buffer and copies the result out:
// a copy is cheaper than scanning the text twice (once for its length),
// and the copy is not zeroed first as a make would be.
func (d *Decoder) strEscaped(start, i int, high uint64, strs *Strings) (string, error) {
	bp := strScratch.Get().(*[]byte)
	buf, err := d.unescape(append((*bp)[:0], d.Data[start:i]...), i, high)
	var s string
	if err == nil {
		s = strs.Copy(buf)
	}
	if cap(buf) <= maxStrScratch {
		*bp = buf
		strScratch.Put(bp)
	}
	return s, err
}

// strScratch holds the buffers strEscaped decodes into; one larger than
// maxStrScratch is left to the collector.
var strScratch = sync.Pool{New: func() any { return new([]byte) }}

const maxStrScratch = 64 << 10

// unescape appends to buf the string text from i to its closing quote,
// decoded, and consumes it. high is the OR of the bytes already in buf.
func (d *Decoder) unescape(buf []byte, i int, high uint64) ([]byte, error) {
	for {
		if i >= len(d.Data) {
			return buf, errUnexpectedEnd
		}
		switch c := d.Data[i]; {
		case c == '"':
			d.Pos = i + 1
			if high&msb != 0 && !utf8.Valid(buf) {
				// Escapes always decode to whole characters, so an
				// invalid sequence comes from the raw text.
				buf = replaceInvalid(buf)
			}
			return buf, nil
		case c < 0x20:
			d.Pos = i
			return buf, d.Errorf("control character in string")
		case c == '\\':
			i++
			if i >= len(d.Data) {
				return buf, errUnexpectedEnd
			}
			switch e := d.Data[i]; e {
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
				r, ok := hex4(d.Data[i+1:])
				if !ok {
					d.Pos = i
					return buf, d.Errorf("invalid \\u escape")
				}
				i += 4
				if utf16.IsSurrogate(r) {
					r2, ok := rune(-1), false
					if i+2 < len(d.Data) && d.Data[i+1] == '\\' && d.Data[i+2] == 'u' {
						r2, ok = hex4(d.Data[i+3:])
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
				d.Pos = i
				return buf, d.Errorf("invalid escape")
			}
			i++
		}
		j, h := d.scanPlain(i)
		high |= h
		buf = append(buf, d.Data[i:j]...)
		i = j
	}
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

// Key consumes an object key. Keys without escapes are returned as a slice
// of the input, saving an allocation per key.
func (d *Decoder) Key() ([]byte, error) {
	if d.Pos < len(d.Data) && d.Data[d.Pos] == '"' {
		for i := d.Pos + 1; i < len(d.Data); i++ {
			c := d.Data[i]
			if c == '"' {
				k := d.Data[d.Pos+1 : i]
				if utf8.Valid(k) {
					d.Pos = i + 1
					return k, nil
				}
				break
			}
			if c == '\\' || c < 0x20 {
				break
			}
		}
	}
	s, err := d.strIn(nil)
	return []byte(s), err
}

// Skip consumes one JSON value, checking its syntax, and returns its bytes.
func (d *Decoder) Skip() ([]byte, error) {
	start := d.Pos
	if err := d.SkipValue(); err != nil {
		return nil, err
	}
	return d.Data[start:d.Pos], nil
}

// SkipValue consumes one JSON value, checking its syntax.
func (d *Decoder) SkipValue() error {
	c, err := d.Peek()
	if err != nil {
		return err
	}
	switch c {
	case '{':
		return d.Object(func([]byte) error { return d.SkipValue() })
	case '[':
		return d.Array(func() error { return d.SkipValue() })
	case '"':
		return d.skipString()
	case 't':
		return d.Literal("true")
	case 'f':
		return d.Literal("false")
	case 'n':
		return d.Literal("null")
	}
	_, err = d.number()
	return err
}

// skipString consumes a string without building it, checking its
// escapes. It jumps from one special byte to the next, as scanPlain finds
// them a word at a time.
func (d *Decoder) skipString() error {
	i := d.Pos + 1 // after the opening quote
	for {
		i = d.nextSpecial(i)
		if i >= len(d.Data) {
			return errUnexpectedEnd
		}
		switch c := d.Data[i]; {
		case c == '"':
			d.Pos = i + 1
			return nil
		case c == '\\':
			i++
			if i >= len(d.Data) {
				return errUnexpectedEnd
			}
			switch d.Data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if _, ok := hex4(d.Data[i+1:]); !ok {
					d.Pos = i
					return d.Errorf("invalid \\u escape")
				}
				i += 4
			default:
				d.Pos = i
				return d.Errorf("invalid escape")
			}
			i++
		default:
			d.Pos = i
			return d.Errorf("control character in string")
		}
	}
}

// nextSpecial is scanPlain without the OR of the bytes passed.
func (d *Decoder) nextSpecial(i int) int {
	for ; i+8 <= len(d.Data); i += 8 {
		if m := specialBytes(binary.LittleEndian.Uint64(d.Data[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(d.Data); i++ {
		if c := d.Data[i]; c < 0x20 || c == '"' || c == '\\' {
			break
		}
	}
	return i
}

// skipValid consumes one JSON value known to be well-formed, by its
// structure alone (see ScanValidObject).
func (d *Decoder) skipValid() error {
	if d.Pos >= len(d.Data) {
		return errUnexpectedEnd
	}
	switch d.Data[d.Pos] {
	case '"':
		return d.skipValidString()
	case '{', '[':
		depth := 0
		for d.Pos < len(d.Data) {
			switch d.Data[d.Pos] {
			case '"':
				if err := d.skipValidString(); err != nil {
					return err
				}
				continue
			case '{', '[':
				if depth++; d.depth+depth > maxDepth {
					return d.Errorf("nesting too deep") // as Object and Array
				}
			case '}', ']':
				if depth--; depth == 0 {
					d.Pos++
					return nil
				}
			}
			d.Pos++
		}
		return errUnexpectedEnd
	}
	for d.Pos < len(d.Data) { // a number or a literal
		switch d.Data[d.Pos] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return nil
		}
		d.Pos++
	}
	return nil
}

// skipValidString consumes a well-formed string: it ends at the first
// quote after an even run of backslashes, found with bytes.IndexByte.
func (d *Decoder) skipValidString() error {
	start := d.Pos + 1
	for i := start; ; {
		j := bytes.IndexByte(d.Data[i:], '"')
		if j < 0 {
			return errUnexpectedEnd
		}
		q := i + j
		k := q
		for k > start && d.Data[k-1] == '\\' {
			k--
		}
		if (q-k)%2 == 0 {
			d.Pos = q + 1
			return nil
		}
		i = q + 1
	}
}

// Object consumes an object, calling member for each key with the decoder
// positioned at the value.
//
// The key is valid only during the call, before the value is read: it may
// alias the input.
func (d *Decoder) Object(member func(key []byte) error) error {
	if d.depth++; d.depth > maxDepth {
		return d.Errorf("nesting too deep")
	}
	defer func() { d.depth-- }()
	d.Pos++ // {
	d.SkipSpace()
	if c, err := d.Peek(); err != nil {
		return err
	} else if c == '}' {
		d.Pos++
		return nil
	}
	for {
		d.SkipSpace()
		key, err := d.Key()
		if err != nil {
			return err
		}
		d.SkipSpace()
		if c, err := d.Peek(); err != nil {
			return err
		} else if c != ':' {
			return d.Errorf("expected ':' after object key")
		}
		d.Pos++
		d.SkipSpace()
		if err := member(key); err != nil {
			return err
		}
		d.SkipSpace()
		c, err := d.Peek()
		if err != nil {
			return err
		}
		d.Pos++
		switch c {
		case ',':
		case '}':
			return nil
		default:
			d.Pos--
			return d.Errorf("expected ',' or '}' in object")
		}
	}
}

// Array consumes an array, calling elem with the decoder positioned at each
// element.
func (d *Decoder) Array(elem func() error) error {
	if d.depth++; d.depth > maxDepth {
		return d.Errorf("nesting too deep")
	}
	defer func() { d.depth-- }()
	d.Pos++ // [
	d.SkipSpace()
	if c, err := d.Peek(); err != nil {
		return err
	} else if c == ']' {
		d.Pos++
		return nil
	}
	for {
		d.SkipSpace()
		if err := elem(); err != nil {
			return err
		}
		d.SkipSpace()
		c, err := d.Peek()
		if err != nil {
			return err
		}
		d.Pos++
		switch c {
		case ',':
		case ']':
			return nil
		default:
			d.Pos--
			return d.Errorf("expected ',' or ']' in array")
		}
	}
}

type decFunc = DecFunc

var decCache sync.Map // reflect.Type -> decFunc

// DecoderFor returns the decoder of type t.
func DecoderFor(t reflect.Type) DecFunc {
	if f, ok := decCache.Load(t); ok {
		return f.(decFunc)
	}
	var (
		wg sync.WaitGroup
		f  decFunc
	)
	wg.Add(1)
	fi, loaded := decCache.LoadOrStore(t, decFunc(func(d *Decoder, v reflect.Value, strict bool) error {
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

// Value decodes the next value into v, which must be settable.
func (d *Decoder) Value(v reflect.Value, strict bool) error {
	return DecoderFor(v.Type())(d, v, strict)
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	rawSpanType         = reflect.TypeFor[RawSpan]()
)

func newDecoder(t reflect.Type) decFunc {
	switch t {
	case rawSpanType:
		return func(d *Decoder, v reflect.Value, _ bool) error {
			raw, err := d.Skip()
			if err != nil {
				return err
			}
			v.SetBytes(raw)
			return nil
		}
	case rawMessageType:
		return func(d *Decoder, v reflect.Value, _ bool) error {
			raw, err := d.Skip()
			if err != nil {
				return err
			}
			v.SetBytes(append(json.RawMessage(nil), raw...))
			return nil
		}
	}
	if f, ok := ext.Decoders[t]; ok {
		return f
	}
	// Event types implement json.Unmarshaler for encoding/json users by
	// calling this decoder; decode them field by field here.
	isEvent := t.Kind() == reflect.Struct && extFielded(reflect.PointerTo(t))
	if !isEvent && t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(unmarshalerType) {
		return func(d *Decoder, v reflect.Value, _ bool) error {
			raw, err := d.Skip()
			if err != nil {
				return err
			}
			return v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(raw)
		}
	}
	if t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return func(d *Decoder, v reflect.Value, _ bool) error {
			if d.IsNullNext() {
				return nil
			}
			s, err := d.Str()
			if err != nil {
				return err
			}
			return v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s))
		}
	}
	switch t.Kind() {
	case reflect.Bool:
		return func(d *Decoder, v reflect.Value, _ bool) error {
			switch c, err := d.Peek(); {
			case err != nil:
				return err
			case c == 't':
				v.SetBool(true)
				return d.Literal("true")
			case c == 'f':
				v.SetBool(false)
				return d.Literal("false")
			case c == 'n':
				return d.Literal("null")
			}
			return d.Errorf("expected a boolean")
		}
	case reflect.String:
		return func(d *Decoder, v reflect.Value, _ bool) error {
			if d.IsNullNext() {
				return nil
			}
			s, err := d.Str()
			if err != nil {
				return err
			}
			v.SetString(s)
			return nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(d *Decoder, v reflect.Value, _ bool) error {
			if d.IsNullNext() {
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
					return d.Errorf("cannot read %s as an integer", num)
				}
				n = int64(f)
			}
			if v.OverflowInt(n) {
				return d.Errorf("%s overflows %v", num, v.Type())
			}
			v.SetInt(n)
			return nil
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return func(d *Decoder, v reflect.Value, _ bool) error {
			if d.IsNullNext() {
				return nil
			}
			num, err := d.number()
			if err != nil {
				return err
			}
			n, err := strconv.ParseUint(string(num), 10, 64)
			if err != nil || v.OverflowUint(n) {
				return d.Errorf("cannot read %s as %v", num, v.Type())
			}
			v.SetUint(n)
			return nil
		}
	case reflect.Float32, reflect.Float64:
		bits := t.Bits()
		return func(d *Decoder, v reflect.Value, _ bool) error {
			if d.IsNullNext() {
				return nil
			}
			num, err := d.number()
			if err != nil {
				return err
			}
			f, err := strconv.ParseFloat(string(num), bits)
			if err != nil {
				return d.Errorf("cannot read %s as %v", num, v.Type())
			}
			v.SetFloat(f)
			return nil
		}
	case reflect.Pointer:
		elem := t.Elem()
		dec := DecoderFor(elem)
		return func(d *Decoder, v reflect.Value, strict bool) error {
			if d.IsNullNext() {
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
			// An interface with methods holds one of the registered kinds.
			return kindedDecoder(t)
		}
		return func(d *Decoder, v reflect.Value, _ bool) error {
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
		return func(d *Decoder, v reflect.Value, _ bool) error {
			if d.IsNullNext() {
				return nil
			}
			if c, err := d.Peek(); err != nil {
				return err
			} else if c != '[' {
				return d.Errorf("expected an array for %v", t)
			}
			i := 0
			dec := DecoderFor(elem)
			err := d.Array(func() error {
				if i >= v.Len() {
					_, err := d.Skip()
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
	return func(d *Decoder, v reflect.Value, _ bool) error {
		return d.Errorf("cannot decode into %v", t)
	}
}

func newSliceDecoder(t reflect.Type) decFunc {
	elem := t.Elem()
	if elem.Kind() == reflect.Uint8 && !reflect.PointerTo(elem).Implements(unmarshalerType) &&
		!reflect.PointerTo(elem).Implements(textUnmarshalerType) {
		return func(d *Decoder, v reflect.Value, _ bool) error {
			if d.IsNullNext() {
				v.SetZero()
				return nil
			}
			s, err := d.Str()
			if err != nil {
				return err
			}
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return d.Errorf("invalid base64 for %v", t)
			}
			v.SetBytes(b)
			return nil
		}
	}
	return func(d *Decoder, v reflect.Value, _ bool) error {
		if d.IsNullNext() {
			v.SetZero()
			return nil
		}
		if c, err := d.Peek(); err != nil {
			return err
		} else if c != '[' {
			return d.Errorf("expected an array for %v", t)
		}
		dec := DecoderFor(elem)
		// A new array, grown in place: v.Slice would allocate a slice
		// header per element. An empty one is not nil (it encodes as [])
		// but has no array: many events carry empty lists.
		v.Set(reflect.MakeSlice(t, 0, 0))
		n := 0
		return d.Array(func() error {
			if n == v.Cap() {
				v.Grow(max(n, 4))
			}
			v.SetLen(n + 1)
			n++
			return dec(d, v.Index(n-1), false)
		})
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
	return func(d *Decoder, v reflect.Value, _ bool) error {
		if d.IsNullNext() {
			v.SetZero()
			return nil
		}
		if c, err := d.Peek(); err != nil {
			return err
		} else if c != '{' {
			return d.Errorf("expected an object for %v", t)
		}
		if v.IsNil() {
			v.Set(reflect.MakeMap(t))
		}
		dec := DecoderFor(et)
		return d.Object(func(key []byte) error {
			k, err := keyOf(string(key))
			if err != nil {
				return err
			}
			e := reflect.New(et).Elem()
			if err := dec(d, e, false); err != nil {
				return fmt.Errorf("%v: %w", k, err) // k, not key: the value was read
			}
			v.SetMapIndex(k, e)
			return nil
		})
	}
}

// KindedDecoder returns the decoder of a field of interface type t tagged
// kinded: what a struct's decoder calls for that field.
func KindedDecoder(t reflect.Type) DecFunc { return kindedDecoder(t) }

// kindedDecoder returns the decoder of a value of interface type t that
// is a JSON object naming its kind (or null), decoded by the extension's
// DecodeKinded.
func kindedDecoder(t reflect.Type) decFunc {
	return func(d *Decoder, v reflect.Value, _ bool) error {
		if d.IsNullNext() {
			v.SetZero()
			return nil
		}
		if ext.DecodeKinded == nil {
			return d.Errorf("cannot decode into interface %v", t)
		}
		// The object's end is found by its structure alone, then it is
		// decoded once, strictly: decoding checks every byte of it, so a
		// success means Skip would have ended at the same place. Otherwise
		// the checked path below reports the error as it always has.
		start := d.Pos
		if d.skipValid() == nil && setKinded(v, d.Data[start:d.Pos], t) == nil {
			return nil
		}
		d.Pos = start
		return d.decodeKindedChecked(v, t)
	}
}

// decodeKindedChecked is kindedDecoder's checked path: the value is
// skipped with its syntax checked, then decoded.
func (d *Decoder) decodeKindedChecked(v reflect.Value, t reflect.Type) error {
	raw, err := d.Skip()
	if err != nil {
		return err
	}
	return setKinded(v, raw, t)
}

// setKinded decodes the kinded object raw into v, which it leaves as it is
// on error.
func setKinded(v reflect.Value, raw []byte, t reflect.Type) error {
	x, err := ext.DecodeKinded(raw, t)
	if err != nil {
		return err
	}
	v.Set(reflect.ValueOf(x))
	return nil
}

// secondsDecoder reads a time.Duration written as a number of seconds
// (json/v2's format:sec). null leaves it as it is, as for other numbers.
func secondsDecoder(t reflect.Type) decFunc {
	if t != durationType {
		return func(d *Decoder, _ reflect.Value, _ bool) error {
			return d.Errorf("format:sec on %v, not a time.Duration", t)
		}
	}
	float := DecoderFor(reflect.TypeFor[float64]())
	return func(d *Decoder, v reflect.Value, _ bool) error {
		if d.IsNullNext() {
			return nil
		}
		var s float64
		if err := float(d, reflect.ValueOf(&s).Elem(), false); err != nil {
			return err
		}
		ns := s * float64(time.Second)
		if ns >= math.MaxInt64 || ns < math.MinInt64 {
			return d.Errorf("%v seconds is out of a duration's range", s)
		}
		v.SetInt(int64(ns))
		return nil
	}
}

type decField struct {
	name      string
	index     []int
	typ       reflect.Type
	dec       decFunc
	req       int  // position among the required fields, or -1
	nullEmpty bool // null decodes as the zero value
	nonNull   bool // required and not nullable: null is an error
}

// nullable reports whether a required field of type t may be null: a
// pointer (T | None) or raw JSON (Any). Pydantic rejects null for the other
// required fields.
func nullable(t reflect.Type) bool {
	return t.Kind() == reflect.Pointer || t == rawMessageType || t == rawSpanType
}

func newStructDecoder(t reflect.Type) decFunc {
	// fields in their order, which is the order they are written in; index
	// finds a field by its name when the next one in order is not it.
	var fields []decField
	index := map[string]int{}
	var required []string
	for _, f := range structFields(t) {
		dec := DecoderFor(f.typ)
		if f.kinded && f.typ.Kind() == reflect.Interface {
			dec = kindedDecoder(f.typ)
		}
		if f.formatSec {
			dec = secondsDecoder(f.typ)
		}
		df := decField{f.name, f.index, f.typ, dec, -1, f.nullEmpty, f.required && !nullable(f.typ)}
		if f.required {
			df.req = len(required)
			required = append(required, f.name)
		}
		if i, ok := index[f.name]; ok {
			fields[i] = df
		} else {
			index[f.name] = len(fields)
			fields = append(fields, df)
		}
	}
	return func(d *Decoder, v reflect.Value, strict bool) error {
		if d.IsNullNext() {
			return nil
		}
		if c, err := d.Peek(); err != nil {
			return err
		} else if c != '{' {
			return d.Errorf("expected an object for %v", t)
		}
		var seen []bool
		if len(required) > 0 {
			seen = make([]bool, len(required))
		}
		next := 0 // the field expected next
		err := d.Object(func(key []byte) error {
			// Keys come in the fields' order, some left out: look a few
			// fields ahead before hashing the key.
			i := -1
			for j := next; j < min(next+8, len(fields)); j++ {
				if fields[j].name == string(key) {
					i = j
					break
				}
			}
			if i < 0 {
				if j, ok := index[string(key)]; ok {
					i = j
				}
			}
			ok := i >= 0
			var f *decField
			if ok {
				f, next = &fields[i], i+1
			}
			if ok && f.req >= 0 {
				seen[f.req] = true
			}
			if !ok {
				if string(key) == "kind" && strict && d.kind != "" {
					k, err := d.strIn(nil)
					if err == nil && k != d.kind {
						err = fmt.Errorf("kind %q does not match %q", k, d.kind)
					}
					return err
				}
				if strict {
					return UnknownFieldError{string(key)}
				}
				return d.SkipValue()
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
			if f.nonNull && d.Pos < len(d.Data) && d.Data[d.Pos] == 'n' {
				return fmt.Errorf("required field %q is null", f.name)
			}
			if f.nullEmpty && d.IsNullNext() {
				fv.SetZero() // null resets a default
				return nil
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
func (d *Decoder) anyValue() (any, error) {
	c, err := d.Peek()
	if err != nil {
		return nil, err
	}
	switch c {
	case '{':
		m := map[string]any{}
		err := d.Object(func(key []byte) error {
			k := string(key)
			x, err := d.anyValue()
			m[k] = x
			return err
		})
		return m, err
	case '[':
		s := []any{}
		err := d.Array(func() error {
			x, err := d.anyValue()
			s = append(s, x)
			return err
		})
		return s, err
	case '"':
		return d.Str()
	case 't':
		return true, d.Literal("true")
	case 'f':
		return false, d.Literal("false")
	case 'n':
		return nil, d.Literal("null")
	}
	num, err := d.number()
	if err != nil {
		return nil, err
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil {
		return nil, d.Errorf("number %s out of range", num)
	}
	return f, nil
}

// Field is a JSON field of a struct type: its key, index path and type.
type Field struct {
	Name  string
	Index []int
	Type  reflect.Type
}

// Fields lists the JSON fields of struct type t, by encoding/json's rules.
func Fields(t reflect.Type) []Field {
	var out []Field
	for _, f := range structFields(t) {
		out = append(out, Field{f.name, f.index, f.typ})
	}
	return out
}
