package shadow

import (
	"reflect"
	"slices"
	"testing"
)

type named map[string]any

func TestCheck(t *testing.T) {
	type typ struct {
		A string         `json:"a"`
		B map[string]any `json:"b"`
		C int            `json:"c"`
		D string         `json:"d"`
	}
	type ok struct {
		A *string `json:"a"`
		B named   `json:"b"`
		C int     `json:"c"`
		D string  `json:"d,omitempty"`
	}
	if d := Check(reflect.TypeFor[typ](), reflect.TypeFor[ok]()); len(d) != 0 {
		t.Errorf("in step, got %v", d)
	}
	type bad struct {
		A *int   `json:"a"`
		B named  `json:"b"`
		X string `json:"x"`
		D string `json:"dd"`
	}
	d := Check(reflect.TypeFor[typ](), reflect.TypeFor[bad]())
	slices.Sort(d)
	want := []string{
		`A is string in typ but *int in bad`,
		`D is "d" in typ but "dd" in bad`,
		`bad.X has no field in typ`,
		`typ.C has no field in bad`,
	}
	if !slices.Equal(d, want) {
		t.Errorf("got %q\nwant %q", d, want)
	}
	if d := Check(reflect.TypeFor[typ](), reflect.TypeFor[bad](), "A", "C", "D", "X"); len(d) != 0 {
		t.Errorf("ignoring the differing keys, got %v", d)
	}
}
