package wire

import (
	"encoding/json"
	"reflect"
	"testing"
)

type sliceTest struct {
	Empty []orderTest `json:"empty"`
	Some  []int       `json:"some"`
	Null  []int       `json:"null"`
}

// TestSliceDecode: an empty JSON array decodes to an empty slice that is
// not nil (it encodes back as []) and holds no array, which many events'
// empty lists would otherwise each allocate; null stays nil, and arrays
// that grow past the first allocation keep every element. encoding/json
// is the oracle for the values.
func TestSliceDecode(t *testing.T) {
	in := `{"empty":[],"some":[1,2,3,4,5,6,7,8,9],"null":null}`
	var got, want sliceTest
	if err := Decode([]byte(in), &got, false); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(in), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded %+v, encoding/json %+v", got, want)
	}
	if got.Empty == nil || cap(got.Empty) != 0 {
		t.Errorf("[] decoded to nil %v, cap %d; want an empty slice without an array", got.Empty == nil, cap(got.Empty))
	}
	if got.Null != nil {
		t.Errorf("null decoded to %v", got.Null)
	}
}
