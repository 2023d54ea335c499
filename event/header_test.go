package event

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func headerOf(e Event) Header {
	b := e.EventBase()
	k, _ := KindOf(e)
	return Header{ID: b.ID, Timestamp: b.Timestamp, Source: b.Source, ParentID: b.ParentID, Kind: k}
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
		got, err := ReadHeader(data)
		if err != nil || got != want {
			t.Errorf("%s: ReadHeader = %+v, %v; want %+v", path, got, err, want)
		}
	}
	const msg = `{"id":"m1","timestamp":"2026-01-02T03:04:05","source":"user","parent_id":"p0","llm_message":{"role":"user"},"kind":"MessageEvent"}`
	want := Header{ID: "m1", Timestamp: "2026-01-02T03:04:05", Source: SourceUser, ParentID: "p0", Kind: "MessageEvent"}
	for _, in := range []string{
		msg,
		`{"kind":"MessageEvent","parent_id":"p0","source":"user","timestamp":"2026-01-02T03:04:05","id":"m1"}`,
		" {\"id\" : \"m1\", \"timestamp\":\"2026-01-02T03:04:05\",\n\"source\":\"user\",\"parent_id\":\"p0\",\"kind\" : \"MessageEvent\" }\n",
		strings.Replace(msg, `"parent_id":"p0",`, `"x":{"parent_id":"no","kind":"Nested"},"parent_id":"p0",`, 1),
	} {
		if got, err := ReadHeader([]byte(in)); err != nil || got != want {
			t.Errorf("ReadHeader(%s) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{``, `[]`, `{"id":"x"}`, `{"id":1,"kind":"PauseEvent"}`, `{"id":"x","kind":"PauseEvent"`} {
		if h, err := ReadHeader([]byte(in)); err == nil {
			t.Errorf("ReadHeader(%s) = %+v, want an error", in, h)
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
		if _, err := ReadHeader(data); err != nil {
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
