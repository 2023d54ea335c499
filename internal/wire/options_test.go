package wire

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// optioned uses the field options that let a type be declared once: no
// second struct with pointers to write empty values as null.
type optioned struct {
	URL     string            `json:"url" wire:"nullempty"`
	Timeout float64           `json:"timeout" wire:"nullempty"`
	Budget  int               `json:"budget" wire:"nullempty"`
	Flag    bool              `json:"flag" wire:"nullempty"`
	Plain   string            `json:"plain"`
	List    []string          `json:"list" wire:"emitempty"`
	Dict    map[string]string `json:"dict" wire:"emitempty"`
	Bytes   []byte            `json:"bytes" wire:"emitempty"`
	Tags    []string          `json:"tags" wire:"nullempty"`
	Omitted string            `json:"omitted,omitempty" wire:"nullempty"`
}

// defaults are set before decoding, as an UnmarshalJSON method does.
func defaults() optioned {
	return optioned{URL: "http://x", Timeout: 300, Budget: 7, Flag: true, Plain: "p"}
}

func TestFieldOptionsEncode(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    optioned
		want string
	}{
		{"empty", optioned{},
			`{"url":null,"timeout":null,"budget":null,"flag":null,"plain":"","list":[],"dict":{},"bytes":"","tags":null}`},
		{"set", optioned{URL: "u", Timeout: 1.5, Budget: 2, Flag: true, Plain: "q", List: []string{"a"},
			Dict: map[string]string{"k": "v"}, Bytes: []byte("hi"), Tags: []string{"t"}, Omitted: "o"},
			`{"url":"u","timeout":1.5,"budget":2,"flag":true,"plain":"q","list":["a"],"dict":{"k":"v"},"bytes":"aGk=","tags":["t"],"omitted":"o"}`},
		// A non-nil empty slice is empty too: nullempty writes it as null,
		// emitempty keeps it.
		{"non-nil empty", optioned{List: []string{}, Tags: []string{}},
			`{"url":null,"timeout":null,"budget":null,"flag":null,"plain":"","list":[],"dict":{},"bytes":"","tags":null}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			back := defaults()
			if err := Decode(got, &back, true); err != nil {
				t.Fatal(err)
			}
			again, err := Marshal(back)
			if err != nil {
				t.Fatal(err)
			}
			if string(again) != tc.want {
				t.Errorf("round trip: got %s", again)
			}
		})
	}
}

func TestFieldOptionsDecode(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     func(*optioned)
	}{
		{"absent keys keep the defaults", `{}`, func(*optioned) {}},
		{"null resets a nullempty default", `{"url":null,"timeout":null,"budget":null,"flag":null}`,
			func(o *optioned) { o.URL, o.Timeout, o.Budget, o.Flag = "", 0, 0, false }},
		{"null leaves a plain field as it is", `{"plain":null}`, func(*optioned) {}},
		{"values", `{"url":"u","timeout":2,"budget":3.0,"flag":false,"list":[],"dict":null,"tags":null}`,
			func(o *optioned) { o.URL, o.Timeout, o.Budget, o.Flag, o.List = "u", 2, 3, false, []string{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := defaults()
			if err := Decode([]byte(tc.in), &got, false); err != nil {
				t.Fatal(err)
			}
			want := defaults()
			tc.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
	// The option does not loosen the value's type.
	var o optioned
	if err := Decode([]byte(`{"timeout":"x"}`), &o, false); err == nil {
		t.Error(`"timeout":"x" accepted`)
	}
}

// A field of interface type with methods cannot be read without the kind
// registry's extension (package event installs it); null is still nil.
func TestInterfaceFieldWithoutExtension(t *testing.T) {
	type holder struct {
		S interface{ String() string } `json:"s"`
		A any                          `json:"a" wire:"kinded"`
	}
	var h holder
	if err := Decode([]byte(`{"s":null,"a":null}`), &h, true); err != nil {
		t.Fatal(err)
	}
	if err := Decode([]byte(`{"s":{"kind":"X"}}`), &h, true); err == nil {
		t.Error("decoded an interface with no kind registry")
	}
}

// A required key must be present, and may be null only when its field is
// a pointer or raw JSON (T | None, Any), as in Pydantic.
func TestRequiredNull(t *testing.T) {
	type req struct {
		S   string          `json:"s" required:"true"`
		L   []int           `json:"l" required:"true"`
		P   *string         `json:"p" required:"true"`
		Raw json.RawMessage `json:"raw" required:"true"`
	}
	for in, want := range map[string]string{
		`{"s":"","l":[],"p":null,"raw":null}`:   "",
		`{"s":null,"l":[],"p":null,"raw":null}`: `required field "s" is null`,
		`{"s":"","l":null,"p":null,"raw":null}`: `required field "l" is null`,
		`{"s":"","l":[],"raw":null}`:            `missing required field "p"`,
	} {
		var r req
		err := Decode([]byte(in), &r, true)
		if got := fmt.Sprint(err); want == "" && err != nil || want != "" && got != want {
			t.Errorf("%s: err = %v, want %q", in, err, want)
		}
	}
}

// EachMember yields the members Marshal writes, one by one.
func TestEachMember(t *testing.T) {
	v := optioned{URL: "u", List: []string{"a"}}
	var b []byte
	err := EachMember(&v, func(key string, val []byte) error {
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = append(AppendString(b, key), ':')
		b = append(b, val...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Marshal(v)
	if got := "{" + string(b) + "}"; got != string(want) {
		t.Errorf("members %s\nMarshal %s", got, want)
	}
	if err := EachMember(3, func(string, []byte) error { return nil }); err == nil {
		t.Error("EachMember of an int: no error")
	}
}

// timed holds durations written as seconds, as the reference's float
// timeouts are.
type timed struct {
	Timeout time.Duration `json:"timeout,omitzero" wire:"format:sec"`
	Read    time.Duration `json:"read" wire:"format:sec"`
}

func TestFormatSec(t *testing.T) {
	for _, tc := range []struct {
		v    timed
		want string
	}{
		{timed{}, `{"read":0.0}`},
		{timed{Timeout: 30 * time.Second, Read: 1500 * time.Millisecond}, `{"timeout":30.0,"read":1.5}`},
		{timed{Timeout: time.Millisecond, Read: -2 * time.Second}, `{"timeout":0.001,"read":-2.0}`},
	} {
		got, err := Marshal(tc.v)
		if err != nil || string(got) != tc.want {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tc.v, got, err, tc.want)
			continue
		}
		var back timed
		if err := Decode(got, &back, true); err != nil || back != tc.v {
			t.Errorf("Decode(%s) = %+v, %v", got, back, err)
		}
	}
	for in, want := range map[string]timed{
		`{"timeout":30,"read":0.25}`: {Timeout: 30 * time.Second, Read: 250 * time.Millisecond},
		`{"timeout":null}`:           {Timeout: time.Minute}, // null leaves it as it is
	} {
		got := timed{Timeout: time.Minute}
		if err := Decode([]byte(in), &got, false); err != nil || got != want {
			t.Errorf("Decode(%s) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{`{"timeout":"30"}`, `{"timeout":1e10}`, `{"read":-1e300}`, `{"read":1e400}`} {
		var got timed
		if err := Decode([]byte(in), &got, false); err == nil {
			t.Errorf("Decode(%s) = %+v, want an error", in, got)
		}
	}
	// The option on another type is an error, not a silent no-op.
	type wrong struct {
		N int `json:"n" wire:"format:sec"`
	}
	if _, err := Marshal(wrong{N: 1}); err == nil {
		t.Error("format:sec on an int encoded")
	}
	if err := Decode([]byte(`{"n":1}`), &wrong{}, false); err == nil {
		t.Error("format:sec on an int decoded")
	}
}
