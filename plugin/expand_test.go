package plugin

import "testing"

// A registration's source and ref get the secrets' values; $NAME, unknown
// names and defaults stay as written; the registrations passed are not
// changed.
func TestExpandRegistrations(t *testing.T) {
	ref := "${BRANCH}"
	regs := []Registration{{Name: "m", Source: "https://x:${TOKEN}@example.com/$TOKEN/${NONE:-d}.git", Ref: &ref}}
	lookup := func(n string) (string, bool) {
		v, ok := map[string]string{"TOKEN": "t0k", "BRANCH": "dev"}[n]
		return v, ok
	}
	got := ExpandRegistrations(regs, lookup)
	if got[0].Source != "https://x:t0k@example.com/$TOKEN/${NONE:-d}.git" || *got[0].Ref != "dev" {
		t.Errorf("expanded: %q %q", got[0].Source, *got[0].Ref)
	}
	if regs[0].Source != "https://x:${TOKEN}@example.com/$TOKEN/${NONE:-d}.git" || *regs[0].Ref != "${BRANCH}" {
		t.Errorf("the input changed: %q %q", regs[0].Source, *regs[0].Ref)
	}
}
