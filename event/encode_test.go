package event

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gohands/gohands/internal/wire"
)

// Pydantic's output for these floats, captured from the reference.
func TestAppendFloatMatchesPydantic(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		{30, "30.0"}, {1e20, "1e+20"}, {1e-7, "1e-7"}, {0.1, "0.1"}, {1e16, "1e+16"},
		{123456789012345, "123456789012345.0"}, {1.5e300, "1.5e+300"}, {math.Copysign(0, -1), "-0.0"},
		{1.0 / 3, "0.3333333333333333"}, {1e15, "1000000000000000.0"}, {9999999999999998, "9999999999999998.0"},
		{1.5e16, "1.5e+16"}, {1e-4, "0.0001"}, {1e-5, "0.00001"}, {0.0001234, "0.0001234"}, {1.5e-5, "0.000015"},
		{1e-6, "1e-6"}, {1.23e-7, "1.23e-7"}, {12345678.9, "12345678.9"}, {5e-324, "5e-324"},
		{math.MaxFloat64, "1.7976931348623157e+308"}, {math.Inf(1), "null"}, {math.NaN(), "null"}, {0, "0.0"}, {-2.5, "-2.5"},
	}
	for _, tt := range tests {
		if got := string(wire.AppendFloat(nil, tt.f, 64)); got != tt.want {
			t.Errorf("wire.AppendFloat(%v) = %s, want %s", tt.f, got, tt.want)
		}
		if b, _ := Float(tt.f).MarshalJSON(); string(b) != tt.want {
			t.Errorf("Float(%v).MarshalJSON = %s, want %s", tt.f, b, tt.want)
		}
	}
}

// Pydantic escapes only quote, backslash and control characters; U+2028,
// DEL, <, > and & are written as they are.
func TestAppendStringMatchesPydantic(t *testing.T) {
	tests := []struct{ in, want string }{
		{"\u2028\x7f\x1f\b\f é <>/&", `"` + "\u2028\x7f" + `\u001f\b\f é <>/&"`},
		{"tab\there \"q\" back\\slash\r\n", `"tab\there \"q\" back\\slash\r\n"`},
		{"\x00\x01", `"\u0000\u0001"`},
		{"bad \xff utf8", "\"bad \uFFFD utf8\""},
		{"0123456789abcdef0123456789\"abcdef", `"0123456789abcdef0123456789\"abcdef"`},
		{"", `""`},
	}
	for _, tt := range tests {
		if got := string(wire.AppendString(nil, tt.in)); got != tt.want {
			t.Errorf("wire.AppendString(%q) = %s, want %s", tt.in, got, tt.want)
		}
		var back string
		if err := json.Unmarshal(wire.AppendString(nil, tt.in), &back); err != nil {
			t.Errorf("encoding/json cannot read %q: %v", tt.in, err)
		}
	}
}

type inner struct {
	A string `json:"a"`
	B int    `json:"b,omitempty"`
}

type Embedded struct {
	E1 string `json:"e1"`
	E2 string `json:"shadowed"`
}

type encodeSample struct {
	Embedded
	*inner
	Name     string            `json:"name"`
	Shadowed string            `json:"shadowed"`
	Skip     string            `json:"-"`
	Untagged bool              //
	Ptr      *inner            `json:"ptr,omitempty"`
	PtrNil   *inner            `json:"ptr_nil"`
	Zero     time.Time         `json:"zero,omitzero"`
	When     time.Time         `json:"when"`
	Slice    []inner           `json:"slice,omitempty"`
	EmptyNZ  []string          `json:"empty_nz,omitzero"`
	Map      map[string]int    `json:"map"`
	IntMap   map[int]string    `json:"int_map"`
	Bytes    []byte            `json:"bytes"`
	Arr      [2]int            `json:"arr"`
	Any      any               `json:"any"`
	Raw      json.RawMessage   `json:"raw"`
	Nested   map[string][]bool `json:"nested,omitempty"`
	private  int
}

// Types written for encoding/json encode identically here, floats aside.
func TestEncoderMatchesEncodingJSON(t *testing.T) {
	v := encodeSample{
		Embedded: Embedded{E1: "e1", E2: "loses"}, inner: &inner{A: "promoted"},
		Name: "n <&>", Shadowed: "wins", Skip: "x", Untagged: true,
		Ptr: &inner{A: "p", B: 2}, When: time.Date(2026, 8, 22, 10, 15, 3, 482911000, time.UTC),
		Slice: []inner{{A: "s"}}, EmptyNZ: []string{}, Map: map[string]int{"z": 1, "a": 2}, IntMap: map[int]string{10: "x", 2: "y"},
		Bytes: []byte("hi"), Arr: [2]int{1, 2}, Any: map[string]any{"k": []any{"v", true, nil}}, Raw: json.RawMessage(`{"b":1,"a":[1, 2]}`),
		private: 1,
	}
	got, err := MarshalJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	// encoding/json keeps RawMessage as given; we compact it.
	wantS := bytes.Replace(bytes.TrimSpace(want.Bytes()), []byte(`[1, 2]`), []byte(`[1,2]`), 1)
	if !bytes.Equal(got, wantS) {
		t.Errorf("encoder differs from encoding/json\n got: %s\nwant: %s", got, wantS)
	}
	back := encodeSample{inner: &inner{}} // as with encoding/json, a nil embedded *inner cannot be set
	if err := wire.Decode(got, &back, false); err != nil {
		t.Fatal(err)
	}
	back.Skip, back.private, v.Skip, v.private = "", 0, "", 0
	v.Raw = json.RawMessage(`{"b":1,"a":[1,2]}`)
	v.Embedded.E2 = "" // shadowed: not encoded
	if diff := cmp.Diff(v, back, cmp.AllowUnexported(encodeSample{}), cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("decode differs (-want +got):\n%s", diff)
	}
}

// A registered kind reached through an interface, or with its own
// MarshalJSON, is tagged with its kind; json.Marshal of an event is the same
// as Marshal.
func TestKindTagging(t *testing.T) {
	type holder struct {
		Items []any `json:"items"`
	}
	e := &PauseEvent{Base: Base{ID: "p1", Timestamp: goldenTime, Source: SourceUser}}
	got, err := MarshalJSON(holder{Items: []any{&terminalAction{Command: "ls"}, e, customKind{N: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"items":[{"command":"ls","is_input":false,"reset":false,"kind":"TerminalAction"},` +
		`{"id":"p1","timestamp":"2026-08-22T10:15:03.482911","source":"user","kind":"PauseEvent"},{"n":1,"kind":"CustomKind"}]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	std, err := json.Marshal([]Event{e})
	if err != nil {
		t.Fatal(err)
	}
	if own, _ := Marshal(e); string(std) != "["+string(own)+"]" {
		t.Errorf("json.Marshal = %s, Marshal = %s", std, own)
	}
	var back PauseEvent
	if err := json.Unmarshal(std[1:len(std)-1], &back); err != nil || back.ID != "p1" {
		t.Errorf("json.Unmarshal into *PauseEvent: %v %+v", err, back)
	}
}

type customKind struct{ N int }

func (c customKind) MarshalJSON() ([]byte, error) {
	return []byte(`{"n": ` + string(rune('0'+c.N)) + `}`), nil
}

func init() { RegisterKind[customKind]("CustomKind") }

func TestFormatTime(t *testing.T) {
	loc := time.FixedZone("X", 3600)
	tests := []struct {
		t    time.Time
		want string
	}{
		{time.Date(2026, 6, 16, 5, 39, 48, 701247000, loc), "2026-06-16T05:39:48.701247"},
		{time.Date(2026, 6, 16, 5, 39, 48, 0, loc), "2026-06-16T05:39:48"},
		{time.Date(2026, 6, 16, 5, 39, 48, 1000, loc), "2026-06-16T05:39:48.000001"},
		{time.Date(2026, 6, 16, 5, 39, 48, 999, loc), "2026-06-16T05:39:48"},
	}
	for _, tt := range tests {
		if got := FormatTime(tt.t.In(time.Local)); got != FormatTime(tt.t) {
			t.Errorf("FormatTime depends on the input's zone: %s", got)
		}
		local := tt.t.In(time.Local)
		want := local.Format("2006-01-02T15:04:05") + tt.want[19:]
		if got := FormatTime(tt.t); got != want {
			t.Errorf("FormatTime(%v) = %s, want %s", tt.t, got, want)
		}
		back, err := parseTime(want)
		if err != nil || !back.Equal(tt.t.Truncate(time.Microsecond)) {
			t.Errorf("parseTime(%s) = %v, %v", want, back, err)
		}
	}
}

// encoding/json users get the same decoding as Unmarshal.
func TestEncodingJSONUnmarshal(t *testing.T) {
	var evs []*AgentErrorEvent
	in := `[{"id":"a","timestamp":"t","tool_name":"x","tool_call_id":"c","error":"e","kind":"AgentErrorEvent"},` +
		`{"id":"b","timestamp":"t","tool_name":"x","tool_call_id":"c","error":"e"}]`
	if err := json.Unmarshal([]byte(in), &evs); err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Source != SourceAgent || e.Classification != unknownError {
			t.Errorf("defaults not applied: %+v", e)
		}
	}
	var e AgentErrorEvent
	for _, bad := range []string{
		`{"id":"a","timestamp":"t","tool_name":"x","tool_call_id":"c","error":"e","kind":"PauseEvent"}`,
		`{"id":"a","timestamp":"t","tool_name":"x","tool_call_id":"c","error":"e","Error":"E"}`,
		`{"id":"a","timestamp":"t","tool_name":"x","tool_call_id":"c"}`,
	} {
		if err := json.Unmarshal([]byte(bad), &e); err == nil {
			t.Errorf("json.Unmarshal(%s) succeeded, want an error", bad)
		}
	}
}

// appendOnly is a JSONAppender whose MarshalJSON must not be called.
type appendOnly struct{ n int }

func (a appendOnly) AppendJSON(b []byte) ([]byte, error) {
	return append(b, `{"n":`+string(rune('0'+a.n))+`}`...), nil
}

func (appendOnly) MarshalJSON() ([]byte, error) { return []byte(`"MarshalJSON called"`), nil }

type byPointer struct{ s string }

func (p *byPointer) AppendJSON(b []byte) ([]byte, error) { return wire.AppendString(b, p.s), nil }

// TestJSONAppender checks that the encoder appends what a JSONAppender
// appends, in preference to its MarshalJSON, wherever the value sits.
func TestJSONAppender(t *testing.T) {
	type outer struct {
		A  appendOnly            `json:"a"`
		P  *appendOnly           `json:"p"`
		L  []appendOnly          `json:"l"`
		M  map[string]appendOnly `json:"m"`
		BP byPointer             `json:"bp"`
		NP *byPointer            `json:"np"`
	}
	v := &outer{A: appendOnly{1}, P: &appendOnly{2}, L: []appendOnly{{3}, {4}}, M: map[string]appendOnly{"k": {5}}, BP: byPointer{"x"}}
	got, err := MarshalJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":{"n":1},"p":{"n":2},"l":[{"n":3},{"n":4}],"m":{"k":{"n":5}},"bp":"x","np":null}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
