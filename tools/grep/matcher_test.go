package grep

import "testing"

func TestRequiredLiteral(t *testing.T) {
	for pattern, want := range map[string]string{
		`func\s+needle`:  "needle",
		`Foo(bar)+`:      "foo",
		`(?:xy){2,}z`:    "xy",
		`(a|b)c`:         "",
		`colou?r`:        "colo",
		`x*`:             "",
		`grüße`:          "", // non-ASCII literals are not used
		`^PACKAGE main$`: "package main",
		`[abc]+`:         "",
	} {
		m, err := newMatcher(pattern)
		if err != nil {
			t.Fatal(err)
		}
		if string(m.literal) != want {
			t.Errorf("%q: literal %q, want %q", pattern, m.literal, want)
		}
	}
}

func TestMayMatch(t *testing.T) {
	m, err := newMatcher(`strange\s+kelvin`)
	if err != nil {
		t.Fatal(err)
	}
	for data, want := range map[string]bool{
		"a STRANGE thing":     true,
		"\u017ftrange kelvin": true, // long s folds to s
		"nothing here":        false,
		"stran ge":            false,
	} {
		if got := m.mayMatch([]byte(data)); got != want {
			t.Errorf("mayMatch(%q) = %v, want %v", data, got, want)
		}
	}
	k, _ := newMatcher(`kelvin`)
	if !k.mayMatch([]byte("\u212aELVIN")) {
		t.Error("the Kelvin sign does not fold to k")
	}
}
