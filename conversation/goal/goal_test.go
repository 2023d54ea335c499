package goal

import "testing"

// A judge's reply is read as the reference reads it: JSON alone or inside
// text, score clamped to [0, 1], complete defaulting to score >= 1, and
// anything else a conservative "not done".
func TestParseVerdict(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Verdict
	}{
		{`{"score": 0.7, "complete": false, "missing": "docs"}`, Verdict{0.7, false, "docs"}},
		{"Here it is:\n```json\n{\"score\": 1}\n```", Verdict{1, true, ""}},
		{`{"score": 3, "complete": 0}`, Verdict{1, false, ""}},
		{`{"score": "high", "complete": "yes", "missing": null}`, Verdict{0, true, ""}},
		{`{"score": "0.5"}`, Verdict{0.5, false, ""}},
		{`{"score": -1}`, Verdict{0, false, ""}},
		{`I think it is done.`, Verdict{0, false, "Judge verdict could not be parsed."}},
		{`[1, 2]`, Verdict{0, false, "Judge verdict could not be parsed."}},
	} {
		if got := parseVerdict(c.in); got != c.want {
			t.Errorf("parseVerdict(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

func TestNewControllerChecks(t *testing.T) {
	if _, err := NewController("  ", nil, 0); err == nil {
		t.Error("empty objective accepted")
	}
	if _, err := NewController("x", nil, 0); err == nil {
		t.Error("no judge accepted")
	}
}
