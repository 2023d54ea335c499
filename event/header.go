package event

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/gohands/gohands/internal/wire"
)

// header is the part of an encoded event that stores need to index and
// filter it without decoding it.
type header struct {
	ID        string
	Timestamp string
	Source    Source
	ParentID  string
	Kind      string
}

// readHeader returns the header of an encoded event. For events written as
// the reference and this package write them (base fields first, "kind"
// last) it decodes only the start and the end of data, so its cost barely
// grows with the event's size; other key orders are handled by a full scan.
// It does not check the rest of the object (Unmarshal does), so for an
// object with duplicate keys it may report the first of them where
// Unmarshal takes the last.
func readHeader(data []byte) (header, error) {
	var h header
	d := &wire.Decoder{Data: data}
	d.SkipSpace()
	if c, err := d.Peek(); err != nil || c != '{' {
		return h, errors.New("event: expected a JSON object")
	}
	d.Pos++
	// Fast path: "id","timestamp","source"[,"parent_id"] in that order.
	fast := true
	for i, name := range [...]string{"id", "timestamp", "source", "parent_id"} {
		d.SkipSpace()
		if i > 0 {
			if c, err := d.Peek(); err != nil || c != ',' {
				fast = c == '}' && i == 3 // an event of base fields only
				break
			}
			d.Pos++
			d.SkipSpace()
		}
		start := d.Pos
		key, err := d.Key()
		if err != nil || string(key) != name {
			if i == 3 && err == nil {
				d.Pos = start // a subclass field follows source
				break
			}
			fast = false
			break
		}
		d.SkipSpace()
		if c, err := d.Peek(); err != nil || c != ':' {
			fast = false
			break
		}
		d.Pos++
		d.SkipSpace()
		if !h.setString(d, name) {
			fast = false
			break
		}
	}
	// A parent_id not in its usual place may still come later.
	if fast && h.ParentID == "" && bytes.Contains(data[d.Pos:], []byte(`"parent_id"`)) {
		fast = false
	}
	if fast {
		if kind, ok := wire.KindAtEnd(data); ok {
			h.Kind = kind
			return h, nil
		}
	}
	return readHeaderSlow(data)
}

// setString reads the string value of base field name into h.
func (h *header) setString(d *wire.Decoder, name string) bool {
	if name == "parent_id" && d.IsNullNext() {
		return true
	}
	s, err := d.Str()
	if err != nil {
		return false
	}
	switch name {
	case "id":
		h.ID = s
	case "timestamp":
		h.Timestamp = s
	case "source":
		h.Source = Source(s)
	case "parent_id":
		h.ParentID = s
	}
	return true
}

func readHeaderSlow(data []byte) (header, error) {
	var h header
	d := &wire.Decoder{Data: data}
	d.SkipSpace()
	if c, err := d.Peek(); err != nil || c != '{' {
		return h, errors.New("event: expected a JSON object")
	}
	err := d.Object(func(key []byte) error {
		switch name := string(key); name {
		case "id", "timestamp", "source", "parent_id", "kind":
			if name == "kind" {
				s, err := d.Str()
				h.Kind = s
				return err
			}
			if !h.setString(d, name) {
				return fmt.Errorf("%s is not a string", name)
			}
			return nil
		}
		return d.SkipValue()
	})
	if err != nil {
		return h, fmt.Errorf("event: %w", err)
	}
	if h.Kind == "" {
		return h, wire.ErrNoKind
	}
	return h, nil
}
