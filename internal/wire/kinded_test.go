package wire

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

type kindedTestIface interface{ kindedTest() }

type kindedTestObs struct {
	Text string         `json:"text"`
	N    int            `json:"n"`
	Sub  map[string]any `json:"sub"`
	List []string       `json:"list"`
}

func (*kindedTestObs) kindedTest() {}

// checkedOnly is kindedDecoder with its checked path alone.
func checkedOnly(t reflect.Type) decFunc {
	return func(d *Decoder, v reflect.Value, _ bool) error {
		if d.IsNullNext() {
			v.SetZero()
			return nil
		}
		return d.decodeKindedChecked(v, t)
	}
}

// TestKindedDecoderMatchesChecked corrupts a kinded value in every byte
// and every length, and checks that kindedDecoder, which finds the value's
// end by structure alone, gives the result and error of the checked path.
func TestKindedDecoderMatchesChecked(t *testing.T) {
	RegisterKind("KindedTestObs", reflect.TypeFor[kindedTestObs]())
	old := ext
	t.Cleanup(func() { Extend(old) })
	Extend(Extension{DecodeKinded: func(data []byte, t reflect.Type) (any, error) {
		name, err := FindKind(data)
		if err != nil {
			return nil, err
		}
		v, ok := NewKind(name)
		if !ok || !reflect.TypeOf(v).AssignableTo(t) {
			return nil, fmt.Errorf("kind %q is not a %v", name, t)
		}
		if err := DecodeKind(data, name, v); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", name, err)
		}
		return v, nil
	}})
	iface := reflect.TypeFor[kindedTestIface]()
	fast, checked := kindedDecoder(iface), checkedOnly(iface)
	decode := func(data []byte, dec decFunc) (string, error) {
		d := &Decoder{Data: data, depth: 1} // a field of an object
		var v kindedTestIface
		if err := dec(d, reflect.ValueOf(&v).Elem(), false); err != nil {
			return "", err
		}
		out, err := json.Marshal(v)
		return fmt.Sprintf("%d %s", d.Pos, out), err
	}
	valid := `{"text":"a \"b\" \\","n":3,"sub":{"x":[1,{"y":"}"}],"z":null},"list":["]","{"],"kind":"KindedTestObs"}`
	var inputs []string
	for n := range len(valid) + 1 {
		inputs = append(inputs, valid[:n], valid[:n]+`,"after":[1]}`)
	}
	for i := range valid {
		for _, c := range `"\{}[],:x 1` + "\x01" {
			s := valid[:i] + string(c) + valid[i+1:]
			inputs = append(inputs, s+`,"after":[]}`, valid[:i]+string(c)+valid[i:])
		}
	}
	for _, n := range []int{maxDepth - 1, maxDepth} { // the limit counts from the field's depth
		inputs = append(inputs, `{"sub":`+strings.Repeat(`{"a":`, n-1)+`1`+strings.Repeat("}", n-1)+`,"kind":"KindedTestObs"}`)
	}
	oks := 0
	for _, in := range inputs {
		got, gotErr := decode([]byte(in), fast)
		want, wantErr := decode([]byte(in), checked)
		if got != want || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Errorf("%.200q:\ngot  %.200s, %.200v\nwant %.200s, %.200v", in, got, gotErr, want, wantErr)
		}
		if wantErr == nil {
			oks++
		}
	}
	if oks == 0 || oks == len(inputs) {
		t.Fatalf("%d of %d inputs decoded: the corruptions test nothing", oks, len(inputs))
	}
}

// TestWrittenNew: writtenNew gives a new zero value of the type, whatever
// its size, as reflect.New does: its writes leave the bytes as they were.
func TestWrittenNew(t *testing.T) {
	type event struct {
		ID, Source string
		Tags       []string
		Next       *event
		Big        [600]byte
		Last       byte
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[event](), reflect.TypeFor[struct{}](), reflect.TypeFor[byte](), reflect.TypeFor[*event]()} {
		for range 100 { // fresh memory and reused
			v := writtenNew(typ)
			if v.Type() != reflect.PointerTo(typ) || !v.Elem().IsZero() {
				t.Fatalf("writtenNew(%v) = %v, not a pointer to a new zero value", typ, v)
			}
			if typ.Size() > 0 && v.UnsafePointer() == writtenNew(typ).UnsafePointer() {
				t.Fatalf("writtenNew(%v) gave one value twice", typ)
			}
		}
	}
}
