package tool

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzParseObject checks the hand-written member scanner against
// encoding/json: same members, same values, and errors exactly when the
// input is not a JSON object.
func FuzzParseObject(f *testing.F) {
	for _, s := range []string{`{}`, ` { "a" : 1 , "b":[1,{"c":"]}"}], "a":"x\"y"} `, `{"k\u00e9y":"v","\\":null}`,
		`[1]`, `"s"`, `{"a":}`, `{"a":1}}`, `{"a":-1.5e3,"b":true,"c":false,"d":null}`, "{\"a\":\"\\\\\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := parseObject(data)
		var want map[string]json.RawMessage
		werr := json.Unmarshal(data, &want)
		if werr != nil || want == nil {
			if err == nil {
				t.Fatalf("parseObject(%q) accepted what encoding/json rejects (%v)", data, werr)
			}
			return
		}
		if err != nil {
			t.Fatalf("parseObject(%q): %v", data, err)
		}
		if len(o) != len(want) {
			t.Fatalf("parseObject(%q): %d members, want %d", data, len(o), len(want))
		}
		for _, m := range o {
			w, ok := want[m.key]
			if !ok {
				t.Fatalf("parseObject(%q): unexpected key %q", data, m.key)
			}
			var a, b bytes.Buffer
			if json.Compact(&a, m.val) != nil || json.Compact(&b, w) != nil || !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Fatalf("parseObject(%q): %q = %s, want %s", data, m.key, m.val, w)
			}
		}
	})
}
