package openai

import (
	"strings"
	"testing"
)

func TestClip(t *testing.T) {
	if got := clip("short", 100); got != "short" {
		t.Errorf("clip of a short text = %q", got)
	}
	s := strings.Repeat("h", 500) + strings.Repeat("t", 500)
	got := clip(s, 200)
	if len(got) != 200 || !strings.HasPrefix(got, "hhh") || !strings.HasSuffix(got, "ttt") || !strings.Contains(got, clipNotice) {
		t.Errorf("clip(%d chars, 200) = %q (%d chars); want head, notice and tail in 200", len(s), got, len(got))
	}
}
