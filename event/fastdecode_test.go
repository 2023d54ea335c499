package event

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
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
		if _, ok := decodeFast(fe, kind, data); !ok {
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
	ke, keys, kerr := UnmarshalKeys(data)
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
// as the reflective decoder does. Its seeds are the fixtures.
func FuzzFastDecode(f *testing.F) {
	for _, data := range fastFixtures(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFastDecode(t, data)
	})
}
