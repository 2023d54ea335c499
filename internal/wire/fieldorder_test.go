package wire

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

type orderTest struct {
	A, B, C, D, E, F, G, H, I, J, K, L int
}

// TestStructKeysInAnyOrder decodes objects whose keys come in every kind of
// order, some left out or repeated, as the struct decoder looks fields up
// from the one expected next; encoding/json is the oracle.
func TestStructKeysInAnyOrder(t *testing.T) {
	names := Fields(reflect.TypeFor[orderTest]())
	if len(names) != 12 {
		t.Fatalf("got %d fields", len(names))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var keys []string
		for range r.IntN(20) {
			keys = append(keys, fmt.Sprintf("%q:%d", names[r.IntN(len(names))].Name, r.IntN(100)))
		}
		if r.IntN(2) == 0 { // in order, some left out
			keys = keys[:0]
			for i, f := range names {
				if r.IntN(3) > 0 {
					keys = append(keys, fmt.Sprintf("%q:%d", f.Name, i))
				}
			}
		}
		data := []byte("{" + strings.Join(keys, ",") + "}")
		var got, want orderTest
		if err := Decode(data, &got, true); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("%s:\ngot  %+v\nwant %+v", data, got, want)
		}
	}
}
