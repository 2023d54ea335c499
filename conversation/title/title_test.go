package title

import (
	"encoding/json"
	"os"
	"testing"
)

// A title cut to its length ends as the reference ends it (the fallback
// titles of conversation/testdata/controls_reference.json, recorded from
// the reference; TestControlsReferenceFixture in conversation checks the
// recording is current).
func TestShortenMatchesReference(t *testing.T) {
	data, err := os.ReadFile("../testdata/controls_reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		FallbackTitles [][]any `json:"fallback_titles"`
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.FallbackTitles) == 0 {
		t.Fatal("no fallback titles recorded")
	}
	for _, c := range ref.FallbackTitles {
		msg, n, want := c[0].(string), int(c[1].(float64)), c[2].(string)
		if got := shorten(msg, n); got != want {
			t.Errorf("shorten(%q, %d) = %q, want %q", msg, n, got, want)
		}
	}
}
