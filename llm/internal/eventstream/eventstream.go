// Package eventstream reads and writes the AWS event stream encoding
// (application/vnd.amazon.eventstream), the binary framing of Bedrock's
// ConverseStream replies. Each message is a prelude (total length, headers
// length, the prelude's CRC-32), typed headers, a payload and the CRC-32
// of all of it; both checksums are verified.
package eventstream

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"iter"
)

// ContentType is the media type of an event stream.
const ContentType = "application/vnd.amazon.eventstream"

// Limits of one message, as the AWS SDKs enforce them.
const (
	maxHeaders = 128 << 10
	maxPayload = 16 << 20
	prelude    = 12
	minMessage = prelude + 4
)

// Message is one decoded message. Only string header values are kept
// (the only type Bedrock sends); others are checked and skipped.
type Message struct {
	Headers map[string]string
	Payload []byte
}

// ErrCorrupt means the stream is not a valid event stream: a checksum
// does not match or a length is out of bounds.
var ErrCorrupt = errors.New("eventstream: corrupt message")

// Messages reads messages from r until it ends. A stream that ends inside
// a message yields io.ErrUnexpectedEOF; a corrupt one ErrCorrupt.
func Messages(r io.Reader) iter.Seq2[Message, error] {
	return func(yield func(Message, error) bool) {
		var pre [prelude]byte
		for {
			if _, err := io.ReadFull(r, pre[:]); err != nil {
				if err != io.EOF {
					yield(Message{}, fmt.Errorf("eventstream: %w", err))
				}
				return
			}
			total := binary.BigEndian.Uint32(pre[0:4])
			hlen := binary.BigEndian.Uint32(pre[4:8])
			if crc32.ChecksumIEEE(pre[:8]) != binary.BigEndian.Uint32(pre[8:12]) {
				yield(Message{}, fmt.Errorf("%w: prelude checksum", ErrCorrupt))
				return
			}
			if total < minMessage || hlen > maxHeaders || total-minMessage < hlen || total-minMessage-hlen > maxPayload {
				yield(Message{}, fmt.Errorf("%w: lengths %d and %d", ErrCorrupt, total, hlen))
				return
			}
			buf := make([]byte, total)
			copy(buf, pre[:])
			if _, err := io.ReadFull(r, buf[prelude:]); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				yield(Message{}, fmt.Errorf("eventstream: %w", err))
				return
			}
			if crc32.ChecksumIEEE(buf[:total-4]) != binary.BigEndian.Uint32(buf[total-4:]) {
				yield(Message{}, fmt.Errorf("%w: message checksum", ErrCorrupt))
				return
			}
			h, err := headers(buf[prelude : prelude+hlen])
			if err != nil {
				yield(Message{}, err)
				return
			}
			if !yield(Message{Headers: h, Payload: buf[prelude+hlen : total-4]}, nil) {
				return
			}
		}
	}
}

// Header value types.
const (
	typeTrue = iota
	typeFalse
	typeByte
	typeShort
	typeInt
	typeLong
	typeBytes
	typeString
	typeTimestamp
	typeUUID
)

// fixedSize are the sizes of the fixed-size header values.
var fixedSize = map[byte]int{typeTrue: 0, typeFalse: 0, typeByte: 1, typeShort: 2, typeInt: 4, typeLong: 8, typeTimestamp: 8, typeUUID: 16}

func headers(b []byte) (map[string]string, error) {
	h := map[string]string{}
	bad := fmt.Errorf("%w: headers", ErrCorrupt)
	for len(b) > 0 {
		n := int(b[0])
		if len(b) < 1+n+1 {
			return nil, bad
		}
		name := string(b[1 : 1+n])
		typ := b[1+n]
		b = b[2+n:]
		if size, ok := fixedSize[typ]; ok {
			if len(b) < size {
				return nil, bad
			}
			b = b[size:]
			continue
		}
		if typ != typeBytes && typ != typeString || len(b) < 2 {
			return nil, bad
		}
		l := int(binary.BigEndian.Uint16(b))
		if len(b) < 2+l {
			return nil, bad
		}
		if typ == typeString {
			h[name] = string(b[2 : 2+l])
		}
		b = b[2+l:]
	}
	return h, nil
}

// Encode returns one message with string headers, in the order given
// (name, value, name, value, ...).
func Encode(payload []byte, headers ...string) []byte {
	var hb bytes.Buffer
	for i := 0; i+1 < len(headers); i += 2 {
		hb.WriteByte(byte(len(headers[i])))
		hb.WriteString(headers[i])
		hb.WriteByte(typeString)
		hb.Write(binary.BigEndian.AppendUint16(nil, uint16(len(headers[i+1]))))
		hb.WriteString(headers[i+1])
	}
	total := prelude + hb.Len() + len(payload) + 4
	out := make([]byte, 0, total)
	out = binary.BigEndian.AppendUint32(out, uint32(total))
	out = binary.BigEndian.AppendUint32(out, uint32(hb.Len()))
	out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out))
	out = append(out, hb.Bytes()...)
	out = append(out, payload...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out))
}
