package conversation_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/internal/convtest"
	"github.com/gohands/gohands/event"
)

// TestScanDecodedEntry: on events that decode, ScanDecodedEntry builds
// the entry ScanEntry does (every kind's golden file, and the realistic
// mix with its long outputs).
func TestScanDecodedEntry(t *testing.T) {
	var files [][]byte
	golden, err := filepath.Glob("../event/testdata/golden/*.json")
	if err != nil || len(golden) < 20 {
		t.Fatalf("golden events: %d files, %v", len(golden), err)
	}
	for _, p := range golden {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b)
	}
	for _, e := range convtest.RealisticEvents(82) {
		b, err := event.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b)
	}
	for i, b := range files {
		ev, err := event.Unmarshal(b)
		if err != nil {
			t.Fatalf("event %d does not decode: %v\n%s", i, err, b)
		}
		want, err := conversation.ScanEntry(i, b)
		if err != nil {
			t.Fatalf("ScanEntry(%d): %v\n%s", i, err, b)
		}
		got, err := conversation.ScanDecodedEntry(i, b, ev)
		if err != nil || got != want {
			t.Errorf("ScanDecodedEntry(%d) = %+v, %v; ScanEntry gives %+v", i, got, err, want)
		}
	}
}

// TestDecodedEntry: DecodedEntry, given the keys event.UnmarshalKeys saw,
// builds the entry ScanEntry does, on every event file under
// event/testdata, the realistic mix and variants of them without a
// "source" (the decoded event has its kind's default source; the entry has
// none) or spaced otherwise.
func TestDecodedEntry(t *testing.T) {
	var files [][]byte
	for _, dir := range []string{"golden", "reference", "reference158"} {
		paths, err := filepath.Glob(filepath.Join("../event/testdata", dir, "*.json"))
		if err != nil || len(paths) == 0 {
			t.Fatalf("%s events: %d files, %v", dir, len(paths), err)
		}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, b)
		}
	}
	for _, e := range convtest.RealisticEvents(82) {
		b, err := event.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b)
	}
	for _, b := range files[:len(files):len(files)] {
		files = append(files,
			bytes.Replace(b, []byte(`"source":"agent",`), nil, 1),
			bytes.Replace(b, []byte(`"source":"environment",`), nil, 1),
			bytes.Replace(b, []byte(`"source":"user",`), nil, 1),
			bytes.Replace(b, []byte(`":"`), []byte(`" : "`), 2),
			append([]byte(" "), b...))
	}
	known := 0
	for i, b := range files {
		ev, keys, err := event.UnmarshalKeys(b, nil)
		if ev2, err2 := event.Unmarshal(b); (err == nil) != (err2 == nil) || reflect.TypeOf(ev) != reflect.TypeOf(ev2) {
			t.Fatalf("UnmarshalKeys: %T, %v; Unmarshal %T, %v\n%s", ev, err, ev2, err2, b)
		}
		if err != nil {
			continue // a kind this package's tests do not register
		}
		want, err := conversation.ScanEntry(i, b)
		if err != nil {
			t.Fatalf("ScanEntry(%d): %v\n%s", i, err, b)
		}
		if keys&event.KeysKnown != 0 {
			known++
		}
		got, err := conversation.DecodedEntry(i, b, ev, keys)
		if err != nil || got != want {
			t.Errorf("DecodedEntry(%d, keys %b) = %+v, %v; ScanEntry gives %+v\n%s", i, keys, got, err, want, b)
		}
	}
	if known < 20 {
		t.Errorf("UnmarshalKeys knew the keys of %d events, want at least 20", known)
	}
}
