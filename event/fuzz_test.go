package event

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gohands/gohands/internal/wire"
)

// FuzzUnmarshal checks that decoding never panics, and that whatever
// decodes re-encodes to JSON that decodes to an equal value and encodes to
// the same bytes again.
func FuzzUnmarshal(f *testing.F) {
	for _, dir := range []string{"golden", "reference"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
		for _, path := range files {
			data, err := os.ReadFile(path)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	for _, ex := range referenceExamples {
		f.Add([]byte(ex))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := Unmarshal(data)
		if err != nil {
			return
		}
		enc, err := Marshal(e)
		if err != nil {
			t.Fatalf("decoded %T but cannot encode it: %v\ninput: %q", e, err, data)
		}
		back, err := Unmarshal(enc)
		if err != nil {
			t.Fatalf("cannot decode own encoding: %v\ninput: %q\nencoding: %s", err, data, enc)
		}
		if diff := cmp.Diff(e, back, fuzzCmpOpts...); diff != "" {
			t.Fatalf("value changed by a round trip (-first +second):\n%s\ninput: %q\nencoding: %s", diff, data, enc)
		}
		if h, err := readHeader(enc); err != nil || h != headerOf(e) {
			t.Fatalf("readHeader(%s) = %+v, %v; want %+v", enc, h, err, headerOf(e))
		}
		again, err := Marshal(back)
		if err != nil || !bytes.Equal(again, enc) {
			t.Fatalf("encoding not stable (%v):\nfirst:  %s\nsecond: %s", err, enc, again)
		}
	})
}

var fuzzCmpOpts = append([]cmp.Option{
	cmp.Comparer(func(a, b json.RawMessage) bool {
		var ca, cb bytes.Buffer
		if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
			return bytes.Equal(a, b)
		}
		return bytes.Equal(ca.Bytes(), cb.Bytes())
	}),
}, cmpOpts...)

// FuzzDecodeString compares the string decoder with encoding/json, which
// also turns each byte of invalid UTF-8 and each lone surrogate into U+FFFD.
func FuzzDecodeString(f *testing.F) {
	for _, s := range []string{
		`plain`, `a\nb\tc\"d\\e\/f`, `\u00e9\u4e2d\ud83d\ude00`, `\ud83d`, `\ud83dx`, `\ude00\ud83d`,
		"raw \xff\xfe bytes", "\xe2\x82\\u00ac", `bad \q escape`, `\u12`, "ctl \x01 char",
		"long " + strings.Repeat("line of output\\n", 40) + "é", `ends with \`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		data := append(append([]byte{'"'}, body...), '"')
		var want string
		werr := json.Unmarshal(data, &want)
		d := &wire.Decoder{Data: data}
		got, err := d.Str()
		if werr != nil {
			if err == nil && d.Pos == len(data) {
				t.Fatalf("%q: accepted as %q, encoding/json says %v", data, got, werr)
			}
			return
		}
		if err != nil || got != want || d.Pos != len(data) {
			t.Fatalf("%q: got %q, %v (pos %d of %d), want %q", data, got, err, d.Pos, len(data), want)
		}
	})
}
