package event

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
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
		if h, err := ReadHeader(enc); err != nil || h != headerOf(e) {
			t.Fatalf("ReadHeader(%s) = %+v, %v; want %+v", enc, h, err, headerOf(e))
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
