package termtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStrip(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text\n\twith tab", "plain text\n\twith tab"},
		{"héllo 世界 ✓", "héllo 世界 ✓"},
		{"\x1b[31mred\x1b[0m", "red"},
		{"\x1b[2J\x1b[Hcleared", "cleared"},
		{"\x1b[1;31;4mbold\x1b[m", "bold"},
		{"title\x1b]0;pwned\x07 after", "title after"},
		{"clip\x1b]52;c;ZXZpbA==\x1b\\ done", "clip done"},
		{"\x1bP1$r0m\x1b\\dcs", "dcs"},
		{"\x1b_apc\x1b\\x", "x"},
		{"a\x1b7b\x1b8c", "abc"},
		{"a\x1b(Bb", "ab"},
		{"bell\x07 back\bspace", "bell backspace"},
		{"line one\rEVIL", "line one\nEVIL"},
		{"windows\r\nline", "windows\nline"},
		{"c1 \u009b31mcsi", "c1 csi"},
		{"c1 \u009d0;t\u009c osc", "c1  osc"},
		{"c1 \u0085next", "c1 next"},
		{"del\x7f", "del"},
		{"bad \xff byte", "bad \ufffd byte"},
		{"unterminated \x1b]0;title", "unterminated "},
		{"trailing esc \x1b", "trailing esc "},
		{"\x1b[", ""},
	} {
		if got := Strip(tc.in); got != tc.want {
			t.Errorf("Strip(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestStripCleanIsSame(t *testing.T) {
	s := "nothing to do here\n"
	if got := Strip(s); got != s {
		t.Fatalf("got %q", got)
	}
	if n := testing.AllocsPerRun(10, func() { Strip(s) }); n != 0 {
		t.Errorf("clean text allocates %v times", n)
	}
}

func FuzzStrip(f *testing.F) {
	for _, s := range []string{"a\x1b[31mb", "\x1b]0;x\x07", "\u009b1m", "\r\n\r", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Strip(s)
		if !utf8.ValidString(out) {
			t.Fatalf("Strip(%q) = %q: invalid UTF-8", s, out)
		}
		for _, r := range out {
			if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 {
				t.Fatalf("Strip(%q) = %q: control %U left", s, out, r)
			}
		}
		if Strip(out) != out {
			t.Fatalf("Strip is not idempotent on %q", s)
		}
		if strings.Count(out, "\n") > strings.Count(s, "\n")+strings.Count(s, "\r") {
			t.Fatalf("Strip(%q) added lines", s)
		}
	})
}
