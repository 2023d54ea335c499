package event

import (
	"bytes"
	"errors"
	"fmt"
)

// Header is the part of an encoded event that stores need to index and
// filter it without decoding it.
type Header struct {
	ID        string
	Timestamp string
	Source    Source
	ParentID  string
	Kind      string
}

// ReadHeader returns the header of an encoded event. For events written as
// the reference and this package write them (base fields first, "kind"
// last) it decodes only the start and the end of data, so its cost barely
// grows with the event's size; other key orders are handled by a full scan.
// It does not check the rest of the object (Unmarshal does), so for an
// object with duplicate keys it may report the first of them where
// Unmarshal takes the last.
func ReadHeader(data []byte) (Header, error) {
	var h Header
	d := &decodeState{data: data}
	d.skipSpace()
	if c, err := d.peek(); err != nil || c != '{' {
		return h, errors.New("event: expected a JSON object")
	}
	d.pos++
	// Fast path: "id","timestamp","source"[,"parent_id"] in that order.
	fast := true
	for i, name := range [...]string{"id", "timestamp", "source", "parent_id"} {
		d.skipSpace()
		if i > 0 {
			if c, err := d.peek(); err != nil || c != ',' {
				fast = c == '}' && i == 3 // an event of base fields only
				break
			}
			d.pos++
			d.skipSpace()
		}
		start := d.pos
		key, err := d.key()
		if err != nil || string(key) != name {
			if i == 3 && err == nil {
				d.pos = start // a subclass field follows source
				break
			}
			fast = false
			break
		}
		d.skipSpace()
		if c, err := d.peek(); err != nil || c != ':' {
			fast = false
			break
		}
		d.pos++
		d.skipSpace()
		if !h.setString(d, name) {
			fast = false
			break
		}
	}
	// A parent_id not in its usual place may still come later.
	if fast && h.ParentID == "" && bytes.Contains(data[d.pos:], []byte(`"parent_id"`)) {
		fast = false
	}
	if fast {
		if kind, ok := kindAtEnd(data); ok {
			h.Kind = kind
			return h, nil
		}
	}
	return readHeaderSlow(data)
}

// setString reads the string value of base field name into h.
func (h *Header) setString(d *decodeState, name string) bool {
	if name == "parent_id" && d.isNullNext() {
		return true
	}
	s, err := d.str()
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

func readHeaderSlow(data []byte) (Header, error) {
	var h Header
	d := &decodeState{data: data}
	d.skipSpace()
	if c, err := d.peek(); err != nil || c != '{' {
		return h, errors.New("event: expected a JSON object")
	}
	err := d.object(func(key []byte) error {
		switch name := string(key); name {
		case "id", "timestamp", "source", "parent_id", "kind":
			if name == "kind" {
				s, err := d.str()
				h.Kind = s
				return err
			}
			if !h.setString(d, name) {
				return fmt.Errorf("%s is not a string", name)
			}
			return nil
		}
		return d.skipValue()
	})
	if err != nil {
		return h, fmt.Errorf("event: %w", err)
	}
	if h.Kind == "" {
		return h, errNoKind
	}
	return h, nil
}

// ErrStopScan may be returned by a ScanObject callback to end the scan
// early; ScanObject then returns nil.
var ErrStopScan = errors.New("event: stop scan")

// ScanObject calls fn with each top-level key and raw value of the JSON
// object data, in order, and checks that data is one complete, well-formed
// JSON object: a truncated or malformed one is an error. The key is valid
// only during the call. If fn returns ErrStopScan, the scan ends there and
// the rest of data is not checked.
func ScanObject(data []byte, fn func(key, value []byte) error) error {
	d := &decodeState{data: data}
	d.skipSpace()
	if c, err := d.peek(); err != nil || c != '{' {
		return errors.New("event: expected a JSON object")
	}
	err := d.object(func(key []byte) error {
		start := d.pos
		if err := d.skipValue(); err != nil {
			return err
		}
		return fn(key, d.data[start:d.pos])
	})
	if err == ErrStopScan {
		return nil
	}
	if err != nil {
		return err
	}
	d.skipSpace()
	if d.pos != len(data) {
		return d.errorf("data after the JSON object")
	}
	return nil
}
