// Package sse reads server-sent event streams (text/event-stream), the
// framing every model provider streams replies in.
//
// It follows the WHATWG parsing rules: lines end with LF, CRLF or CR; a
// line starting with a colon is a comment; "data" lines of one event are
// joined with LF; a blank line ends the event; an event without data is not
// dispatched; an unknown field is ignored. Unlike a browser, a stream that
// ends inside an event is an error (ErrTruncated), not a silent loss: a
// reply cut off by a dropped connection must not pass for a whole one.
package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
)

// ErrTruncated is returned (wrapped, with io.ErrUnexpectedEOF) when the
// stream ends inside an event.
var ErrTruncated = errors.New("sse: stream ended inside an event")

// Event is one dispatched event.
type Event struct {
	// Name is the "event" field, "" when the event has none.
	Name string
	// Data is the event's data lines joined with LF. It is the caller's to
	// keep.
	Data []byte
	// ID is the "id" field, "" when the event has none.
	ID string
}

// Reader reads events from a stream.
type Reader struct {
	rd      io.Reader
	buf     []byte // buf[r:w] is read and not yet parsed
	r, w    int
	err     error // the read error that ended the stream
	skipLF  bool  // the previous line ended with CR: an LF next belongs to it
	pending bool  // a field of an undispatched event was read
	ev      Event
	data    []byte
	hasData bool
}

// NewReader returns a Reader of rd.
func NewReader(rd io.Reader) *Reader {
	return &Reader{rd: rd, buf: make([]byte, 8<<10)}
}

// Events returns the events of rd, ending with the error Next returns
// unless it is io.EOF.
func Events(rd io.Reader) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		r := NewReader(rd)
		for {
			ev, err := r.Next()
			if err == io.EOF {
				return
			}
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

// Next returns the next event. At the end of the stream it returns io.EOF,
// or an error wrapping ErrTruncated and io.ErrUnexpectedEOF when the
// stream ended inside an event. Read errors are returned as they are.
func (r *Reader) Next() (Event, error) {
	for {
		line, err := r.readLine()
		if err != nil {
			if err == io.EOF && r.pending {
				r.pending = false
				return Event{}, fmt.Errorf("%w: %w", ErrTruncated, io.ErrUnexpectedEOF)
			}
			return Event{}, err
		}
		if len(line) == 0 {
			if ev, ok := r.dispatch(); ok {
				return ev, nil
			}
			continue
		}
		if line[0] == ':' {
			continue // a comment, such as a keep-alive
		}
		r.pending = true
		field, value := line, []byte(nil)
		if before, after, ok := bytes.Cut(line, []byte{':'}); ok {
			field, value = before, after
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "event":
			r.ev.Name = string(value)
		case "data":
			if r.hasData {
				r.data = append(r.data, '\n')
			}
			r.data = append(r.data, value...)
			r.hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				r.ev.ID = string(value)
			}
		}
	}
}

// dispatch ends the current event, reporting whether it is one to return
// (it has data).
func (r *Reader) dispatch() (Event, bool) {
	ev, ok := r.ev, r.hasData
	if ok {
		ev.Data = bytes.Clone(r.data)
	}
	r.ev = Event{ID: r.ev.ID} // the last event id persists
	r.data, r.hasData, r.pending = r.data[:0], false, false
	return ev, ok
}

// readLine returns the next line without its terminator, valid until the
// next call. Text after the last terminator means the stream was cut
// inside a line: the event is marked pending and the read error returned.
func (r *Reader) readLine() ([]byte, error) {
	scanned := 0 // bytes of buf[r.r:] known to hold no terminator
	for {
		if r.skipLF && r.r < r.w {
			r.skipLF = false
			if r.buf[r.r] == '\n' {
				r.r++
			}
		}
		if i := bytes.IndexAny(r.buf[r.r+scanned:r.w], "\r\n"); i >= 0 {
			end := r.r + scanned + i
			line := r.buf[r.r:end]
			next := end + 1
			if r.buf[end] == '\r' {
				if next < r.w {
					if r.buf[next] == '\n' {
						next++
					}
				} else {
					r.skipLF = true
				}
			}
			r.r = next
			return line, nil
		}
		scanned = r.w - r.r
		if r.err != nil {
			if r.w > r.r {
				r.pending = true
				r.r = r.w
			}
			return nil, r.err
		}
		if r.r > 0 {
			r.w = copy(r.buf, r.buf[r.r:r.w])
			r.r = 0
		}
		if r.w == len(r.buf) {
			r.buf = append(r.buf, make([]byte, len(r.buf))...)
		}
		n, err := r.rd.Read(r.buf[r.w:])
		r.w += n
		if err != nil {
			r.err = err
		}
	}
}
