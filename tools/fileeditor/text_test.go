package fileeditor

import "testing"

func TestNumbered(t *testing.T) {
	for _, c := range []struct {
		lines []string
		first int
		want  string
	}{
		{nil, 1, ""},
		{[]string{"a", "", "b"}, 1, "     1\ta\n     2\t\n     3\tb"},
		{[]string{"x", "y"}, 999999, "999999\tx\n1000000\ty"},
	} {
		if got := numbered(c.lines, c.first); got != c.want {
			t.Errorf("numbered(%q, %d) = %q, want %q", c.lines, c.first, got, c.want)
		}
	}
}

func TestIsBinary(t *testing.T) {
	for s, want := range map[string]bool{
		"":                         false,
		"plain text\n":             false,
		"caf\xe9\n":                false, // Latin-1
		"\x1b[1mbold\x1b[0m\f\v\b": false, // terminal output
		"a\x00b":                   true,
		"\x01\x02\x03\x04abcdef":   true,
		"\xff\xfeh\x00":            true, // UTF-16: reported separately before this check
	} {
		if got := isBinary([]byte(s)); got != want {
			t.Errorf("isBinary(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestDecode(t *testing.T) {
	for _, c := range []struct {
		in                string
		text              string
		bom, latin1, crlf bool
	}{
		{"a\r\nb\r\n", "a\nb\n", false, false, true},
		{"a\r\nb\n", "a\r\nb\n", false, false, false}, // mixed: left alone
		{"\xef\xbb\xbfx", "x", true, false, false},
		{"\xef\xbb\xbf\xe9", "ï»¿é", false, true, false},
		{"\xe9\r\n", "é\n", false, true, true},
	} {
		f := decode([]byte(c.in))
		if f.text != c.text || f.bom != c.bom || f.latin1 != c.latin1 || f.crlf != c.crlf {
			t.Errorf("decode(%q) = %+v", c.in, f)
		}
	}
}
