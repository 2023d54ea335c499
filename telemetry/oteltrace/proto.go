package oteltrace

import (
	"encoding/binary"
	"math"
)

// The protobuf encoding of OTLP's ExportTraceServiceRequest
// (opentelemetry/proto/collector/trace/v1/trace_service.proto), by hand:
// the messages gohands sends are few and flat, so a field appender is all
// the wire format needs. Field numbers are the .proto files'.

const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

func appendTag(b []byte, field, wire int) []byte {
	return binary.AppendUvarint(b, uint64(field)<<3|uint64(wire))
}

func appendBytesField(b []byte, field int, v []byte) []byte {
	b = appendTag(b, field, wireBytes)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// appendString appends a string field; proto3 leaves out an empty one.
func appendString(b []byte, field int, s string) []byte {
	if s == "" {
		return b
	}
	b = appendTag(b, field, wireBytes)
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendVarint(b []byte, field int, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = appendTag(b, field, wireVarint)
	return binary.AppendUvarint(b, v)
}

func appendFixed64(b []byte, field int, v uint64) []byte {
	b = appendTag(b, field, wireFixed64)
	return binary.LittleEndian.AppendUint64(b, v)
}

func appendFixed32(b []byte, field int, v uint32) []byte {
	b = appendTag(b, field, wireFixed32)
	return binary.LittleEndian.AppendUint32(b, v)
}

// message appends a length-delimited sub-message that enc writes. The
// length is not known before, so the message is written after a
// five-byte gap (room for any length below 2³²) and moved up.
func message(b []byte, field int, enc func([]byte) []byte) []byte {
	b = appendTag(b, field, wireBytes)
	start := len(b)
	b = append(b, 0, 0, 0, 0, 0)
	b = enc(b)
	n := len(b) - start - 5
	var lenBuf [binary.MaxVarintLen64]byte
	l := binary.PutUvarint(lenBuf[:], uint64(n))
	copy(b[start+l:], b[start+5:])
	copy(b[start:], lenBuf[:l])
	return b[:start+l+n]
}

// KeyValue: 1 key, 2 value (AnyValue: 1 string, 3 int, 4 double). The
// value is a oneof: it is written even when zero.
func appendAttr(b []byte, field int, a Attr) []byte {
	return message(b, field, func(b []byte) []byte {
		b = appendString(b, 1, a.Key)
		return message(b, 2, func(b []byte) []byte {
			switch a.Type {
			case AttrInt:
				b = appendTag(b, 3, wireVarint)
				return binary.AppendUvarint(b, uint64(a.Int))
			case AttrFloat:
				return appendFixed64(b, 4, math.Float64bits(a.Flt))
			}
			b = appendTag(b, 1, wireBytes)
			b = binary.AppendUvarint(b, uint64(len(a.Str)))
			return append(b, a.Str...)
		})
	})
}

// Span flags: the W3C trace flags (sampled) and whether the parent is
// remote (SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK, _IS_REMOTE_MASK).
func spanFlags(d *SpanData) uint32 {
	f := uint32(0x01 | 0x100)
	if d.RemoteParent {
		f |= 0x200
	}
	return f
}

// marshalProto appends spans to b as an ExportTraceServiceRequest:
// 1 resource_spans { 1 resource { 1 attributes }, 2 scope_spans { 1 scope
// { 1 name }, 2 spans } }.
func marshalProto(b []byte, r *Resource, spans []*SpanData) []byte {
	return message(b, 1, func(b []byte) []byte {
		b = message(b, 1, func(b []byte) []byte {
			for _, a := range r.Attrs {
				b = appendAttr(b, 1, a)
			}
			return b
		})
		return message(b, 2, func(b []byte) []byte {
			b = message(b, 1, func(b []byte) []byte { return appendString(b, 1, r.Scope) })
			for _, d := range spans {
				b = message(b, 2, func(b []byte) []byte { return appendSpan(b, d) })
			}
			return b
		})
	})
}

// Span: 1 trace_id, 2 span_id, 4 parent_span_id, 5 name, 6 kind,
// 7 start_time_unix_nano, 8 end_time_unix_nano, 9 attributes, 15 status
// { 2 message, 3 code }, 16 flags.
func appendSpan(b []byte, d *SpanData) []byte {
	b = appendBytesField(b, 1, d.TraceID[:])
	b = appendBytesField(b, 2, d.SpanID[:])
	if d.ParentSpanID != ([8]byte{}) {
		b = appendBytesField(b, 4, d.ParentSpanID[:])
	}
	b = appendString(b, 5, d.Name)
	b = appendVarint(b, 6, uint64(d.Kind))
	b = appendFixed64(b, 7, uint64(d.Start.UnixNano()))
	b = appendFixed64(b, 8, uint64(d.End.UnixNano()))
	for _, a := range d.Attrs {
		b = appendAttr(b, 9, a)
	}
	if d.Failed {
		b = message(b, 15, func(b []byte) []byte {
			b = appendString(b, 2, d.Message)
			return appendVarint(b, 3, 2) // STATUS_CODE_ERROR
		})
	}
	return appendFixed32(b, 16, spanFlags(d))
}
