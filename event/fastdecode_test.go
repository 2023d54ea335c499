package event

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/gohands/gohands/internal/wire"
)

// decodeBoth decodes data with the fast decoder alone (fast false if it
// gives up or data is not of a kind it decodes) and with the reflective
// decoder alone, each with the defaults and checks Unmarshal applies.
func decodeBoth(data []byte) (fastEv Event, fastErr error, fast bool, slowEv Event, slowErr error) {
	kind, err := wire.FindKind(data)
	if err != nil {
		return nil, nil, false, nil, nil
	}
	v, ok := wire.NewKind(kind)
	if !ok {
		return nil, nil, false, nil, nil
	}
	fe, ok := v.(fastDecoder)
	if !ok {
		return nil, nil, false, nil, nil
	}
	fastErr = decodeEvent(fe, kind, data, func() error {
		if _, ok := decodeFast(fe, kind, data, nil); !ok {
			return errNotFast
		}
		return nil
	})
	if errors.Is(fastErr, errNotFast) {
		return nil, nil, false, nil, nil
	}
	w, _ := wire.NewKind(kind)
	slowEv = w.(Event)
	slowErr = decodeEvent(slowEv, kind, data, func() error { return wire.DecodeKind(data, kind, w) })
	return fe, fastErr, true, slowEv, slowErr
}

// checkFastDecode fails t if the fast decoder takes data and gives other
// than the reflective decoder, or if Unmarshal does.
func checkFastDecode(t *testing.T, data []byte) bool {
	t.Helper()
	fe, ferr, fast, se, serr := decodeBoth(data)
	if !fast {
		return false
	}
	if (ferr == nil) != (serr == nil) || (ferr != nil && ferr.Error() != serr.Error()) {
		t.Fatalf("errors differ: fast %v, reflective %v\ninput: %q", ferr, serr, data)
	}
	if ferr == nil && !reflect.DeepEqual(fe, se) {
		t.Fatalf("values differ:\nfast       %#v\nreflective %#v\ninput: %q", fe, se, data)
	}
	ue, uerr := Unmarshal(data)
	if (uerr == nil) != (serr == nil) {
		t.Fatalf("Unmarshal: %v, reflective %v\ninput: %q", uerr, serr, data)
	}
	if uerr == nil && !reflect.DeepEqual(ue, se) {
		t.Fatalf("Unmarshal differs:\nUnmarshal  %#v\nreflective %#v\ninput: %q", ue, se, data)
	}
	ke, keys, kerr := UnmarshalKeys(data, nil)
	if (kerr == nil) != (serr == nil) || (kerr != nil && kerr.Error() != uerr.Error()) {
		t.Fatalf("UnmarshalKeys: %v, Unmarshal %v\ninput: %q", kerr, uerr, data)
	}
	if kerr == nil && !reflect.DeepEqual(ke, se) {
		t.Fatalf("UnmarshalKeys differs:\nUnmarshalKeys %#v\nreflective    %#v\ninput: %q", ke, se, data)
	}
	if _, atEnd := wire.KindAtEnd(data); kerr == nil && atEnd && keys&KeysKnown == 0 {
		t.Fatalf("UnmarshalKeys did not tell the keys the fast decoder saw\ninput: %q", data)
	}
	return true
}

// fastFixtures returns every event file under testdata: those the
// reference 1.43.1 and 1.58.2 wrote and gohands' goldens.
func fastFixtures(tb testing.TB) [][]byte {
	var out [][]byte
	for _, dir := range []string{"golden", "reference", "reference158"} {
		files, err := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
		if err != nil || len(files) == 0 {
			tb.Fatalf("no fixtures in testdata/%s: %v", dir, err)
		}
		for _, path := range files {
			data, err := os.ReadFile(path)
			if err != nil {
				tb.Fatal(err)
			}
			out = append(out, data)
		}
	}
	return out
}

// TestFastDecodeFixtures checks the fast decoder against the reflective
// one on every fixture, and on variants of them it must give up on or
// decode alike: a repeated, null or unknown key, another kind, trailing
// data, a missing id.
func TestFastDecodeFixtures(t *testing.T) {
	taken := map[string]int{}
	for _, data := range fastFixtures(t) {
		if checkFastDecode(t, data) {
			kind, _ := wire.FindKind(data)
			taken[kind]++
		}
		for _, v := range fastVariants(data) {
			checkFastDecode(t, v)
		}
	}
	for _, kind := range []string{KindAction, KindObservation, KindMessage, KindCondensation} {
		if taken[kind] == 0 {
			t.Errorf("the fast decoder took no %s fixture", kind)
		}
	}
	t.Logf("fixtures the fast decoder took: %v", taken)
}

// fastVariants returns variants of the event object data: keys repeated,
// nulled, renamed or dropped, data cut short, trailing bytes.
func fastVariants(data []byte) [][]byte {
	var obj map[string]any
	if err := UnmarshalJSON(data, &obj); err != nil {
		return nil
	}
	var out [][]byte
	add := func(b []byte) { out = append(out, b) }
	add(append(append([]byte(nil), data...), " \n"...))
	add(append(append([]byte(nil), data...), "x"...))
	add(data[:len(data)/2])
	add(append([]byte(" \t"), data...))
	for key := range obj {
		// Drop, null, repeat (at the end) and rename the key.
		drop := map[string]any{}
		for k, v := range obj {
			if k != key {
				drop[k] = v
			}
		}
		if b, err := MarshalJSON(drop); err == nil {
			add(b)
			if key != "kind" {
				null, _ := MarshalJSON(nil)
				add(append(append(b[:len(b)-1:len(b)-1], []byte(`,"`+key+`":`)...), append(null, '}')...))
				val, _ := MarshalJSON(obj[key])
				add(append(append(data[:len(data)-1:len(data)-1], []byte(`,"`+key+`":`)...), append(val, '}')...))
				add(append(append(b[:len(b)-1:len(b)-1], []byte(`,"X`+key+`":`)...), append(val, '}')...))
				add(append(append(b[:len(b)-1:len(b)-1], []byte(`,"`+key+`" : `)...), append(val, '}')...))
			}
		}
	}
	return out
}

// FuzzFastDecode checks that whatever the fast decoder takes, it decodes
// as the reflective decoder does. Its seeds are the fixtures and the
// nested values' seeds.
func FuzzFastDecode(f *testing.F) {
	for _, data := range append(fastFixtures(f), nestedSeeds()...) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFastDecode(t, data)
	})
}

// Test-only tool kinds of the two shapes the nested fast decoder takes,
// and one it must leave alone.
type (
	fastThinkAction struct {
		Thought string `json:"thought" desc:"a thought"`
		Note    string `json:"note,omitempty" required:"true"`
	}
	fastThinkObservation struct{ ObservationBase }
	slowAction           struct {
		Thought string `json:"thought"`
		N       int    `json:"n"`
	}
)

func init() {
	RegisterKind[fastThinkAction]("FastThinkAction")
	RegisterKind[fastThinkObservation]("FastThinkObservation")
	RegisterKind[slowAction]("SlowAction")
}

// nestedSeeds are an ActionEvent and an ObservationEvent as 1.58.2 writes
// them for the think tool (bench/compare's replay events), of the kinds
// above, and variants of their nested values.
func nestedSeeds() [][]byte {
	action := func(v string) []byte {
		return []byte(`{"id":"2bdad1f9-b4e6-4644-896d-338dd8eaae59","timestamp":"2026-11-28T17:22:28.845067","source":"agent","parent_id":"af6d9c3d-3ba1-4c3b-a248-6d8a14b282ae","thought":[],"thinking_blocks":[],"action":` + v + `,"tool_name":"think","tool_call_id":"call_1_0","tool_call":{"id":"call_1_0","name":"think","arguments":"{\"thought\": \"step 1\"}","origin":"completion"},"llm_response_id":"chatcmpl-llmtest-1","security_risk":"UNKNOWN","summary":"think: {\"thought\": \"step 1\"}","kind":"ActionEvent"}`)
	}
	observation := func(v string) []byte {
		return []byte(`{"id":"86a96b25-9684-46bd-b421-08304e3bfef2","timestamp":"2026-11-28T17:22:28.848543","source":"environment","parent_id":"2bdad1f9-b4e6-4644-896d-338dd8eaae59","tool_name":"think","tool_call_id":"call_1_0","observation":` + v + `,"action_id":"2bdad1f9-b4e6-4644-896d-338dd8eaae59","extended_content":[],"kind":"ObservationEvent"}`)
	}
	var out [][]byte
	for _, v := range []string{
		`{"thought":"step 1","note":"n","kind":"FastThinkAction"}`,
		`{"note":"n","thought":"a \"quoted\" \u00e9 thought","kind":"FastThinkAction"}`,
		`{"thought":"step 1","kind":"FastThinkAction"}`,
		`{"note":"n","kind":"FastThinkAction"}`,
		`{"thought":"step 1","note":"n","note":"m","kind":"FastThinkAction"}`,
		`{"thought":null,"note":"n","kind":"FastThinkAction"}`,
		`{"thought":1,"note":"n","kind":"FastThinkAction"}`,
		`{"thought":"x","note":"n","other":1,"kind":"FastThinkAction"}`,
		`{"kind":"FastThinkAction","thought":"x","note":"n"}`,
		`{"thought":"x","note":"n","kind":"FastThinkAction","kind":"FastThinkAction"}`,
		`{"thought":"x","note":"n","kind":"FastThinkObservation"}`,
		`{"thought":"x","note":"n","kind":"NoSuchAction"}`,
		`{"thought":"x","n":2,"kind":"SlowAction"}`,
		`{"thought":"x","note":"n","kind":"FastThinkAction"`,
		`{"thought":"x" "note":"n","kind":"FastThinkAction"}`,
		`null`,
		`[]`,
	} {
		out = append(out, action(v))
	}
	for _, v := range []string{
		`{"content":[{"cache_prompt":false,"type":"text","text":"Your thought has been logged."}],"is_error":false,"kind":"FastThinkObservation"}`,
		`{"content":[{"type":"text","text":"a"},{"text":"b","type":"text","cache_prompt":true}],"is_error":true,"kind":"FastThinkObservation"}`,
		`{"content":[],"kind":"FastThinkObservation"}`,
		`{"kind":"FastThinkObservation"}`,
		`{"content":[{"text":"a"}],"kind":"FastThinkObservation"}`,
		`{"content":[{"type":"text"}],"kind":"FastThinkObservation"}`,
		`{"content":[{"type":"image","image_urls":["http://x/y.png"]}],"kind":"FastThinkObservation"}`,
		`{"content":[{"type":"text","text":"a","image_urls":[]}],"kind":"FastThinkObservation"}`,
		`{"content":[{"type":"text","text":"a","type":"text"}],"kind":"FastThinkObservation"}`,
		`{"content":[{"type":"text","text":null}],"kind":"FastThinkObservation"}`,
		`{"content":[{"type":"text","text":"a","cache_prompt":1}],"kind":"FastThinkObservation"}`,
		`{"content":[{"type":"audio","text":"a"}],"kind":"FastThinkObservation"}`,
		`{"content":[null],"kind":"FastThinkObservation"}`,
		`{"content":["a"],"kind":"FastThinkObservation"}`,
		`{"content":null,"is_error":false,"kind":"FastThinkObservation"}`,
		`{"content":{},"kind":"FastThinkObservation"}`,
		`{"content":[],"is_error":0,"kind":"FastThinkObservation"}`,
		`{"content":[],"is_error":false,"is_error":true,"kind":"FastThinkObservation"}`,
		`{"content":[],"extra":1,"kind":"FastThinkObservation"}`,
		`{"content":[],"kind":"FastThinkAction"}`,
		`{"content":[],"kind":"TerminalObservation"}`,
		`{"content":[] ,"kind" : "FastThinkObservation" }`,
	} {
		out = append(out, observation(v))
	}
	return out
}

// TestFastDecodeNested checks the hand-decoded nested actions and
// observations against the reflective decoder, and that it takes the
// think tool's values as 1.58.2 writes them.
func TestFastDecodeNested(t *testing.T) {
	for _, data := range nestedSeeds() {
		checkFastDecode(t, data)
		for _, v := range fastVariants(data) {
			checkFastDecode(t, v)
		}
	}
	for _, tc := range []struct {
		target reflect.Type
		value  string
	}{
		{reflect.TypeFor[Action](), `{"thought":"step 1","note":"n","kind":"FastThinkAction"}`},
		{reflect.TypeFor[Observation](), `{"content":[{"cache_prompt":false,"type":"text","text":"Your thought has been logged."}],"is_error":false,"kind":"FastThinkObservation"}`},
	} {
		d := wire.Decoder{Data: []byte(tc.value)}
		if _, ok := nestedFast(&d, tc.target); !ok || d.Pos != len(d.Data) {
			t.Errorf("the nested fast decoder did not take %s", tc.value)
		}
	}
	for _, kind := range []string{"SlowAction", "TerminalAction", "TerminalObservation"} {
		if p := planFor(reflect.TypeFor[any](), kind); p != nil {
			t.Errorf("%s has a nested plan; its fields are not all strings", kind)
		}
	}
}

// TestUnmarshalKeysStrings decodes every fixture and its variants with
// one Strings, keeping the events, then wipes the inputs: each event must
// still equal the one decoded with its strings allocated on their own,
// so the shared copies neither alias the input nor overwrite each other.
func TestUnmarshalKeysStrings(t *testing.T) {
	var inputs [][]byte
	for _, data := range fastFixtures(t) {
		inputs = append(inputs, data)
		inputs = append(inputs, fastVariants(data)...)
	}
	var strs Strings
	shared := make([]Event, len(inputs))
	own := make([]Event, len(inputs))
	decoded := 0
	for i, data := range inputs {
		// An event given a fresh id or time differs between decodings:
		// own and again bracket the shared one to leave those out.
		own[i], _, _ = UnmarshalKeys(slices.Clone(data), nil)
		e, _, err := UnmarshalKeys(data, &strs)
		again, _, _ := UnmarshalKeys(slices.Clone(data), nil)
		if err == nil && reflect.DeepEqual(own[i], again) {
			shared[i] = e
			decoded++
		}
	}
	for _, data := range inputs {
		clear(data)
	}
	for i, e := range shared {
		if e != nil && !reflect.DeepEqual(e, own[i]) {
			t.Fatalf("event %d decoded with shared strings changed:\nshared %#v\nown    %#v", i, e, own[i])
		}
	}
	if decoded < 100 {
		t.Fatalf("only %d of %d inputs decoded", decoded, len(inputs))
	}
}
