package event

import (
	"strings"
	"testing"
)

// Fields holding registered kinds are written with their kind and read
// back through the registry: an interface with methods always, an `any`
// field when tagged kinded.
func TestKindedFields(t *testing.T) {
	type holder struct {
		Obs   Observation   `json:"obs"`
		Act   Action        `json:"act" wire:"kinded"`
		Items []Observation `json:"items" wire:"emitempty"`
		Plain any           `json:"plain"`
	}
	in := holder{
		Obs:   &terminalObservation{Command: new("ls")},
		Act:   &terminalAction{Command: "ls"},
		Plain: map[string]any{"kind": "TerminalAction"},
	}
	data, err := MarshalJSON(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"obs":{"content":[],"is_error":false,"command":"ls","timeout":false,` +
		`"metadata":{"exit_code":0,"pid":0,"prefix":"","suffix":""},"kind":"TerminalObservation"},` +
		`"act":{"command":"ls","is_input":false,"reset":false,"kind":"TerminalAction"},"items":[],"plain":{"kind":"TerminalAction"}}`
	if string(data) != want {
		t.Errorf("got  %s\nwant %s", data, want)
	}
	var back holder
	if err := UnmarshalJSON(data, &back); err != nil {
		t.Fatal(err)
	}
	if o, ok := back.Obs.(*terminalObservation); !ok || *o.Command != "ls" {
		t.Errorf("obs = %#v", back.Obs)
	}
	if a, ok := back.Act.(*terminalAction); !ok || a.Command != "ls" {
		t.Errorf("act = %#v", back.Act)
	}
	if _, ok := back.Plain.(map[string]any); !ok {
		t.Errorf("an untagged any field read a kind: %#v", back.Plain)
	}

	for _, tc := range []struct{ in, err string }{
		{`{"obs":{"command":"ls","kind":"TerminalAction"}}`, `kind "TerminalAction" is not a event.Observation`},
		{`{"items":[{"content":[],"bogus":1,"kind":"TerminalObservation"}]}`, "bogus"},
		{`{"act":"ls"}`, "expected a JSON object"},
	} {
		var h holder
		err := UnmarshalJSON([]byte(tc.in), &h)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: err = %v, want %q", tc.in, err, tc.err)
		}
	}
	// A kind this build does not know is kept, not refused (unknown_test.go).
	var h holder
	if err := UnmarshalJSON([]byte(`{"obs":{"kind":"Nope"}}`), &h); err != nil {
		t.Errorf("unknown kind: %v", err)
	} else if o, ok := h.Obs.(*UnknownObservation); !ok || o.KindName != "Nope" {
		t.Errorf("unknown kind: got %#v", h.Obs)
	}
	if err := UnmarshalJSON([]byte(`{"obs":null,"act":null}`), &in); err != nil || in.Obs != nil || in.Act != nil {
		t.Errorf("null: %v %#v", err, in)
	}
}

// defaulted is a kind whose defaults come from SetDefaults; null resets a
// nullempty one, absence keeps it.
type defaulted struct {
	Effort  string  `json:"effort" wire:"nullempty"`
	Timeout float64 `json:"timeout" wire:"nullempty"`
}

func (d *defaulted) SetDefaults() { d.Effort, d.Timeout = "high", 300 }

func init() { RegisterKind[defaulted]("DefaultedKind") }

func TestNullEmptyResetsDefaults(t *testing.T) {
	for in, want := range map[string]defaulted{
		`{"kind":"DefaultedKind"}`:                               {"high", 300},
		`{"effort":null,"timeout":null,"kind":"DefaultedKind"}`:  {"", 0},
		`{"effort":"low","timeout":null,"kind":"DefaultedKind"}`: {"low", 0},
		`{"effort":null,"timeout":1.5,"kind":"DefaultedKind"}`:   {"", 1.5},
	} {
		got, err := DecodeKinded[*defaulted]([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if *got != want {
			t.Errorf("%s: got %+v, want %+v", in, *got, want)
		}
		out, err := MarshalKinded(got)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := DecodeKinded[*defaulted](out); err != nil || *back != want {
			t.Errorf("%s: round trip %s gives %+v, %v", in, out, back, err)
		}
	}
}
