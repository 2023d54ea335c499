package event

import (
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/gohands/gohands/internal/wire"
)

// The codec (internal/wire) learns here what it must know of this
// package's types: the hand-written content, thinking and message codecs,
// List and Map written as [] and {} when nil, and the event types, which
// implement json.Marshaler by calling the codec and so are encoded field by
// field, their defaults filled in first.
var _ = wire.Extend(wire.Extension{
	Encoders: map[reflect.Type]wire.EncFunc{
		reflect.TypeFor[Content](): func(b []byte, v reflect.Value) ([]byte, error) {
			if v.CanAddr() { // no copy into an interface
				return appendContent(b, v.Addr().Interface().(*Content))
			}
			c := v.Interface().(Content)
			return appendContent(b, &c)
		},
		reflect.TypeFor[ThinkingBlock](): func(b []byte, v reflect.Value) ([]byte, error) {
			if v.CanAddr() {
				return appendThinking(b, v.Addr().Interface().(*ThinkingBlock)), nil
			}
			t := v.Interface().(ThinkingBlock)
			return appendThinking(b, &t), nil
		},
	},
	Decoders: map[reflect.Type]wire.DecFunc{
		reflect.TypeFor[Content](): func(d *wire.Decoder, v reflect.Value, _ bool) error {
			return decodeContent(d, v.Addr().Interface().(*Content))
		},
		reflect.TypeFor[Message](): func(d *wire.Decoder, v reflect.Value, _ bool) error {
			return decodeMessage(d, v.Addr().Interface().(*Message))
		},
	},
	Empty: func(t reflect.Type) (string, bool) {
		if !t.Implements(emptyAsType) {
			return "", false
		}
		return reflect.Zero(t).Interface().(emptyAs).emptyJSON(), true
	},
	Fielded: func(t reflect.Type) bool { return t.Implements(codecEventType) },
	Prepare: func(v any) (any, error) {
		if e, ok := v.(Event); ok {
			return prepareEvent(e)
		}
		return v, nil
	},
	DecodeKinded: decodeKindedAs,
})

var (
	emptyAsType    = reflect.TypeFor[emptyAs]()
	codecEventType = reflect.TypeFor[eventCodec]()
)

// emptyAs is implemented by List and Map: nil encodes as their empty literal.
type emptyAs interface{ emptyJSON() string }

// eventCodec marks the package's event types. They implement json.Marshaler
// for the benefit of encoding/json users by calling the codec, so the codec
// must encode them field by field rather than call that method.
type eventCodec interface{ eventCodec() }

// decodeContent decodes a TextContent or ImageContent (see Content.UnmarshalJSON).
func decodeContent(d *wire.Decoder, c *Content) error {
	if c2, err := d.Peek(); err != nil {
		return err
	} else if c2 != '{' {
		return d.Errorf("expected an object for content")
	}
	var (
		typ, text       *string
		urls            []string
		hasURLs         bool
		cache           bool
		unknown         string
		typeStr, txtStr string
	)
	err := d.Object(func(keyb []byte) error {
		var err error
		key := fieldName(keyb)
		switch key {
		case "type":
			if d.IsNullNext() {
				typ = nil
				return nil
			}
			typeStr, err = knownStr(d, ContentText, ContentImage)
			typ = &typeStr
		case "text":
			if d.IsNullNext() {
				text = nil
				return nil
			}
			txtStr, err = d.Str()
			text = &txtStr
		case "cache_prompt":
			var b bool
			err = wire.DecoderFor(reflect.TypeFor[bool]())(d, reflect.ValueOf(&b).Elem(), false)
			cache = b
		case "image_urls":
			err = wire.DecoderFor(reflect.TypeFor[[]string]())(d, reflect.ValueOf(&urls).Elem(), false)
			hasURLs = urls != nil
		case "enable_truncation": // deprecated, dropped
			err = d.SkipValue()
		default:
			if unknown == "" {
				unknown = key
			}
			err = d.SkipValue()
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
			return fmt.Errorf("TextContent: %w", wire.UnknownFieldError{Key: unknown})
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

// decodeMessage decodes a Message (see Message.UnmarshalJSON).
func decodeMessage(d *wire.Decoder, m *Message) error {
	if c, err := d.Peek(); err != nil {
		return err
	} else if c != '{' {
		return d.Errorf("expected an object for a message")
	}
	*m = Message{}
	var contentSeen bool
	fields := messageFields()
	err := d.Object(func(key []byte) error {
		if string(key) == "content" {
			contentSeen = true
			c, err := d.Peek()
			if err != nil {
				return err
			}
			switch c {
			case 'n':
				m.Content = List[Content]{}
				return d.Literal("null")
			case '"':
				s, err := d.Str()
				m.Content = List[Content]{Text(s)}
				return err
			}
			var list []Content
			if err := wire.DecoderFor(reflect.TypeFor[[]Content]())(d, reflect.ValueOf(&list).Elem(), false); err != nil {
				return fmt.Errorf("content: %w", err)
			}
			m.Content = list
			return nil
		}
		f, ok := fields[string(key)]
		if !ok {
			return d.SkipValue() // Message ignores unknown keys
		}
		if err := wire.DecoderFor(f.Type)(d, reflect.ValueOf(m).Elem().FieldByIndex(f.Index), false); err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
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

var messageFields = sync.OnceValue(func() map[string]wire.Field {
	fields := map[string]wire.Field{}
	for _, f := range wire.Fields(reflect.TypeFor[Message]()) {
		fields[f.Name] = f
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
