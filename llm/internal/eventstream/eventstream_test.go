package eventstream

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// TestCorrupt: a flipped bit in the prelude, the headers or the payload,
// a stream cut inside a message and impossible lengths are errors, never
// messages.
func TestCorrupt(t *testing.T) {
	good := Encode([]byte(`{"role":"assistant"}`), ":event-type", "messageStart", ":message-type", "event")
	var n int
	for m, err := range Messages(bytes.NewReader(append(append([]byte{}, good...), good...))) {
		if err != nil || m.Headers[":event-type"] != "messageStart" || string(m.Payload) != `{"role":"assistant"}` {
			t.Fatalf("%+v, %v", m, err)
		}
		n++
	}
	if n != 2 {
		t.Fatalf("%d messages", n)
	}
	for name, tc := range map[string]struct {
		data []byte
		want error
	}{
		"prelude": {flip(good, 2), ErrCorrupt},
		"headers": {flip(good, 14), ErrCorrupt},
		"payload": {flip(good, len(good)-6), ErrCorrupt},
		"cut":     {good[:len(good)-3], io.ErrUnexpectedEOF},
		"length":  {Encode(nil)[:4], io.ErrUnexpectedEOF},
	} {
		var got error
		for _, err := range Messages(bytes.NewReader(tc.data)) {
			got = err
		}
		if !errors.Is(got, tc.want) {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}

func flip(b []byte, i int) []byte {
	c := append([]byte{}, b...)
	c[i] ^= 0x10
	return c
}
