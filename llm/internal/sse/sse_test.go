package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func collect(t *testing.T, r io.Reader) ([]Event, error) {
	t.Helper()
	var evs []Event
	for ev, err := range Events(r) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []Event
	}{
		{"chat framing", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []Event{{Data: []byte(`{"a":1}`)}, {Data: []byte("[DONE]")}}},
		{"named events", "event: response.created\ndata: {}\n\nevent: error\ndata: {\"x\":2}\n\n", []Event{{Name: "response.created", Data: []byte("{}")}, {Name: "error", Data: []byte(`{"x":2}`)}}},
		{"multi-line data", "data: one\ndata:two\ndata:  three\n\n", []Event{{Data: []byte("one\ntwo\n three")}}},
		{"comments and keep-alives", ": ping\n\n:\ndata: x\n: inside\n\n", []Event{{Data: []byte("x")}}},
		{"CRLF", "event: e\r\ndata: a\r\n\r\ndata: b\r\n\r\n", []Event{{Name: "e", Data: []byte("a")}, {Data: []byte("b")}}},
		{"lone CR", "data: a\r\rdata: b\r\r", []Event{{Data: []byte("a")}, {Data: []byte("b")}}},
		{"no data is not dispatched", "event: nothing\n\ndata: y\n\n", []Event{{Data: []byte("y")}}},
		{"empty data is dispatched", "data\n\ndata:\n\n", []Event{{Data: []byte("")}, {Data: []byte("")}}},
		{"unknown fields and retry ignored", "retry: 10\nfoo: bar\ndata: z\n\n", []Event{{Data: []byte("z")}}},
		{"id persists", "id: 7\ndata: a\n\ndata: b\n\n", []Event{{ID: "7", Data: []byte("a")}, {ID: "7", Data: []byte("b")}}},
		{"colon in value", "data: {\"k\": \"v:w\"}\n\n", []Event{{Data: []byte(`{"k": "v:w"}`)}}},
		{"blank lines only", "\n\n\r\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// One byte at a time too, so every line and CRLF spans reads.
			for _, r := range []io.Reader{strings.NewReader(tc.in), iotest.OneByteReader(strings.NewReader(tc.in))} {
				got, err := collect(t, r)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(tc.want) {
					t.Fatalf("got %d events %q, want %d", len(got), got, len(tc.want))
				}
				for i := range got {
					if got[i].Name != tc.want[i].Name || string(got[i].Data) != string(tc.want[i].Data) || got[i].ID != tc.want[i].ID {
						t.Errorf("event %d = %+v (data %q), want %+v (data %q)", i, got[i], got[i].Data, tc.want[i], tc.want[i].Data)
					}
				}
			}
		})
	}
}

func TestLongLine(t *testing.T) {
	long := strings.Repeat("x", 100_000)
	got, err := collect(t, strings.NewReader("data: "+long+"\n\ndata: short\n\n"))
	if err != nil || len(got) != 2 || string(got[0].Data) != long || string(got[1].Data) != "short" {
		t.Fatalf("err %v, %d events", err, len(got))
	}
}

// TestDataIsKept: an event's data stays intact after later events are read.
func TestDataIsKept(t *testing.T) {
	r := NewReader(strings.NewReader("data: first\n\ndata: second\n\n"))
	a, _ := r.Next()
	b, _ := r.Next()
	if string(a.Data) != "first" || string(b.Data) != "second" {
		t.Errorf("%q %q", a.Data, b.Data)
	}
}

func TestTruncated(t *testing.T) {
	for _, in := range []string{
		"data: {\"a\":1}\n\ndata: {\"b\":",     // cut inside a line
		"data: {\"a\":1}\n\ndata: {\"b\":2}\n", // cut before the blank line
		"data: {\"a\":1}\n\nevent: x\n",        // cut after a field without data
	} {
		got, err := collect(t, strings.NewReader(in))
		if !errors.Is(err, ErrTruncated) || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%q: err = %v, want ErrTruncated", in, err)
		}
		if len(got) != 1 || string(got[0].Data) != `{"a":1}` {
			t.Errorf("%q: events before the cut = %q", in, got)
		}
	}
	// A comment left unterminated carries no event: a clean end.
	if _, err := collect(t, strings.NewReader("data: a\n\n: keep-alive\n")); err != nil {
		t.Errorf("comment at the end: %v", err)
	}
}

func TestReadError(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom)))
	if ev, err := r.Next(); err != nil || string(ev.Data) != "a" {
		t.Fatalf("first: %q %v", ev.Data, err)
	}
	if _, err := r.Next(); !errors.Is(err, boom) {
		t.Errorf("err = %v, want the read error", err)
	}
	if _, err := r.Next(); !errors.Is(err, boom) {
		t.Errorf("again: err = %v, want the read error", err)
	}
}

func TestBreakStopsReading(t *testing.T) {
	n := 0
	for range Events(strings.NewReader("data: 1\n\ndata: 2\n\ndata: 3\n\n")) {
		if n++; n == 2 {
			break
		}
	}
	if n != 2 {
		t.Errorf("n = %d", n)
	}
}

func BenchmarkReader(b *testing.B) {
	var sb strings.Builder
	for range 1000 {
		sb.WriteString("data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"word \"}}]}\n\n")
	}
	in := sb.String()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		r := NewReader(strings.NewReader(in))
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	}
}
