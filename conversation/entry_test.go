package conversation_test

import (
	"os"
	"path/filepath"
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
