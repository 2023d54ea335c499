package event

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gohands/gohands/internal/wire"
)

func headerOf(e Event) header {
	b := e.EventBase()
	k, _ := KindOf(e)
	return header{ID: b.ID, Timestamp: b.Timestamp, Source: b.Source, ParentID: b.ParentID, Kind: k}
}

func TestReadHeader(t *testing.T) {
	var files []string
	for _, dir := range []string{"golden", "reference"} {
		f, _ := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
		files = append(files, f...)
	}
	if len(files) < 50 {
		t.Fatalf("found only %d test files", len(files))
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		e, err := Unmarshal(data)
		if err != nil {
			t.Fatal(err)
		}
		want := headerOf(e)
		got, err := readHeader(data)
		if err != nil || got != want {
			t.Errorf("%s: ReadHeader = %+v, %v; want %+v", path, got, err, want)
		}
	}
	const msg = `{"id":"m1","timestamp":"2026-01-02T03:04:05","source":"user","parent_id":"p0","llm_message":{"role":"user"},"kind":"MessageEvent"}`
	want := header{ID: "m1", Timestamp: "2026-01-02T03:04:05", Source: SourceUser, ParentID: "p0", Kind: "MessageEvent"}
	for _, in := range []string{
		msg,
		`{"kind":"MessageEvent","parent_id":"p0","source":"user","timestamp":"2026-01-02T03:04:05","id":"m1"}`,
		" {\"id\" : \"m1\", \"timestamp\":\"2026-01-02T03:04:05\",\n\"source\":\"user\",\"parent_id\":\"p0\",\"kind\" : \"MessageEvent\" }\n",
		strings.Replace(msg, `"parent_id":"p0",`, `"x":{"parent_id":"no","kind":"Nested"},"parent_id":"p0",`, 1),
	} {
		if got, err := readHeader([]byte(in)); err != nil || got != want {
			t.Errorf("readHeader(%s) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{``, `[]`, `{"id":"x"}`, `{"id":1,"kind":"PauseEvent"}`, `{"id":"x","kind":"PauseEvent"`} {
		if h, err := readHeader([]byte(in)); err == nil {
			t.Errorf("readHeader(%s) = %+v, want an error", in, h)
		}
	}
}

func BenchmarkReadHeader(b *testing.B) {
	data, err := Marshal(benchEvents()["observation"])
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := readHeader(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadHeaderFullScan(b *testing.B) {
	data, _ := Marshal(benchEvents()["observation"])
	for b.Loop() {
		readHeaderSlow(data)
	}
}

func TestScanObject(t *testing.T) {
	var keys []string
	err := wire.ScanObject([]byte(` {"id":"x","n":[1,{"a":"b\"}"}],"s":"\u00e9"} `), func(k, v []byte) error {
		keys = append(keys, string(k)+"="+string(v))
		return nil
	})
	if want := []string{`id="x"`, `n=[1,{"a":"b\"}"}]`, `s="\u00e9"`}; err != nil || !slices.Equal(keys, want) {
		t.Fatalf("got %q, %v; want %q", keys, err, want)
	}
	for _, bad := range []string{``, `[]`, `{"id":"x"`, `{"id":"x",}`, `{"id":tru}`, `{"id":"x"} {}`, `{"id":"a` + "\x01" + `"}`, `{"n":01}`} {
		if err := wire.ScanObject([]byte(bad), func(k, v []byte) error { return nil }); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	// A stop ends the scan: what follows is not looked at.
	n := 0
	err = wire.ScanObject([]byte(`{"a":1,"b":2,"c":`), func(k, v []byte) error {
		if n++; string(k) == "b" {
			return wire.ErrStopScan
		}
		return nil
	})
	if err != nil || n != 2 {
		t.Errorf("stop: %d calls, %v", n, err)
	}
}
