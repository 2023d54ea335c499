package wire

import (
	"strings"
	"testing"
)

// TestStrings checks that a Strings' copies are the bytes given, stay so
// when the input is reused and after many more copies (new blocks), and
// that a nil Strings and a long string allocate on their own.
func TestStrings(t *testing.T) {
	var s Strings
	buf := make([]byte, 0, 512)
	var got, want []string
	for i := range 2000 {
		buf = append(buf[:0], strings.Repeat(string(rune('a'+i%26)), i%40)...)
		buf = append(buf, byte('0'+i%10))
		got = append(got, s.Copy(buf))
		want = append(want, string(buf))
		clear(buf)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("copy %d is %q, want %q", i, got[i], want[i])
		}
	}
	long := []byte(strings.Repeat("x", stringsMax+1))
	if c := s.Copy(long); c != string(long) || len(s.block) > stringsBlock {
		t.Fatalf("long copy %q", c)
	}
	var nilStrs *Strings
	if c := nilStrs.Copy([]byte("abc")); c != "abc" {
		t.Fatalf("nil Strings copy %q", c)
	}
	if c := s.Copy(nil); c != "" {
		t.Fatalf("empty copy %q", c)
	}
}

// TestDecoderStrings checks that a Decoder with Strings returns its
// strings from them, escaped ones included (copied out of the scratch
// buffer the next escaped string reuses).
func TestDecoderStrings(t *testing.T) {
	var s Strings
	in := []byte(`["plain","esc\"aped","é","\u00e9t\u00e9"]`)
	d := &Decoder{Data: in, Strings: &s}
	var out []string
	err := d.Array(func() error {
		v, err := d.Str()
		out = append(out, v)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	clear(in)
	if len(out) != 4 || out[0] != "plain" || out[1] != `esc"aped` || out[2] != "é" || out[3] != "été" {
		t.Fatalf("got %q", out)
	}
	if n := len("plain") + len(`esc"aped`) + len("é") + len("été"); len(s.block) != n {
		t.Fatalf("block holds %d bytes, want %d", len(s.block), n)
	}
}
