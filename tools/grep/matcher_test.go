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

func TestUnicodeClasses(t *testing.T) {
	for pattern, want := range map[string]string{
		`a\db`:          `a\p{Nd}b`,
		`[\d_]+`:        `[\p{Nd}_]+`,
		`\\d`:           `\\d`,
		`\Q\d\E\d`:      `\Q\d\E\p{Nd}`,
		`[]\d]`:         `[]\p{Nd}]`,
		`[^]\d]`:        `[^]\p{Nd}]`,
		`[[:alpha:]\d]`: `[[:alpha:]\p{Nd}]`,
		`x\w`:           "x[" + wordChars + "]",
		`[\W]`:          `[\W]`,
		`\S+`:           "[^" + spaceChars + "]+",
		`\x{41}\pL`:     `\x{41}\pL`,
	} {
		if got := unicodeClasses(pattern); got != want {
			t.Errorf("unicodeClasses(%q) = %q, want %q", pattern, got, want)
		}
		if _, err := newMatcher(pattern); err != nil {
			t.Errorf("%q: %v", pattern, err)
		}
	}
}
