package terminal

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"crlf", "a\r\nb\r\n", "a\nb\n"},
		{"progress bar keeps last state", "10%\r50%\r100%\r\n", "100%\n"},
		{"carriage return overwrites", "abcdef\rXY\n", "XYcdef\n"},
		{"erase line", "working...\r\x1b[Kdone\n", "done\n"},
		{"erase whole line", "abc\x1b[2K\rxy\n", "xy\n"},
		{"colors", "\x1b[1;31mred\x1b[0m plain", "red plain"},
		{"cursor position query", "\x1b[6nok", "ok"},
		{"osc query with bel", "\x1b]11;?\x07ok", "ok"},
		{"osc title with st", "\x1b]0;title\x1b\\ok", "ok"},
		{"device attributes", "\x1b[c\x1b[>0cok", "ok"},
		{"decrqss", "\x1bP$qm\x1b\\ok", "ok"},
		{"charset designation", "\x1b(Bok", "ok"},
		{"keypad mode", "\x1b=ok\x1b>", "ok"},
		{"bracketed paste mode", "\x1b[?2004hok\x1b[?2004l", "ok"},
		{"unterminated osc does not swallow", "\x1b]0;title ok", "0;title ok"},
		{"backspace", "ab\bc\n", "ac\n"},
		{"bell and nul dropped", "a\x07b\x00c", "abc"},
		{"tab kept", "a\tb", "a\tb"},
		{"unicode", "héllo 世界 🎉\r\n", "héllo 世界 🎉\n"},
		{"invalid utf8", "a\xffb", "a\uFFFDb"},
		{"lone escape at end", "ok\x1b", "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := clean([]byte(tt.in)); got != tt.want {
				t.Errorf("clean(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestCompletePrefix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int
	}{
		{"abc", 3},
		{"abc\x1b", 3},
		{"abc\x1b[", 3},
		{"abc\x1b[31", 3},
		{"abc\x1b[31m", 8},
		{"abc\x1b]0;t", 3},
		{"abc\x1b]0;t\x07", 9},
		{"abc\x1b(", 3},
		{"abc\x1b(B", 6},
		{"ab\xe4\xb8", 2},     // first two bytes of 世
		{"ab\xe4\xb8\x96", 5}, // all of 世
		{"ab\xf0\x9f\x8e", 2}, // three of the four bytes of 🎉
	}
	for _, tt := range tests {
		if got := completePrefix([]byte(tt.in)); got != tt.want {
			t.Errorf("completePrefix(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestInputBytes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string
		key  bool
	}{
		{"C-c", "\x03", true},
		{"c-d", "\x04", true},
		{"C-Z", "\x1a", true},
		{"C-[", "\x1b", true},
		{"UP", "\x1b[A", true},
		{"down", "\x1b[B", true},
		{"LEFT", "\x1b[D", true},
		{"RIGHT", "\x1b[C", true},
		{"HOME", "\x1b[H", true},
		{"END", "\x1b[F", true},
		{"PGUP", "\x1b[5~", true},
		{"PGDN", "\x1b[6~", true},
		{"TAB", "\t", true},
		{"ESC", "\x1b", true},
		{"BS", "\x7f", true},
		{"ENTER", "\r", true},
		{"1+1", "1+1\r", false},
		{"C-cc", "C-cc\r", false},
		{"C-1", "C-1\r", false},
	}
	for _, tt := range tests {
		got, key := inputBytes(tt.in)
		if string(got) != tt.want || key != tt.key {
			t.Errorf("inputBytes(%q) = %q, %v; want %q, %v", tt.in, got, key, tt.want, tt.key)
		}
	}
}

func TestLiteralKind(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		`["a", "b"]`:            "list literal",
		`[{"x": 1}]`:            "list literal",
		`['a']`:                 "list literal",
		`[[1, 2], [3]]`:         "nested list literal",
		`{"key": "value"}`:      "dict literal",
		`  {'key': 1}`:          "dict literal",
		`[ -f x ] && echo y`:    "",
		`[[ -n "$x" ]] && echo`: "",
		`{ ls; pwd; }`:          "",
		`ls -la`:                "",
		`[`:                     "",
		``:                      "",
	}
	for in, want := range tests {
		if got := literalKind(in); got != want {
			t.Errorf("literalKind(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTruncateMiddle(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 5000 {
		b.WriteString(strings.Repeat("é", i%7))
		b.WriteString("line\n")
	}
	text := b.String()
	var gotLine int
	out := truncateMiddle(text, 1000, func(line int) string {
		gotLine = line
		return "<cut>"
	})
	if n := utf8.RuneCountInString(out); n != 1000 {
		t.Errorf("truncated to %d characters, want 1000", n)
	}
	head, tail, ok := strings.Cut(out, "<cut>")
	if !ok {
		t.Fatalf("no notice in %q", out)
	}
	if !strings.HasPrefix(text, head) || !strings.HasSuffix(text, tail) {
		t.Error("head or tail is not a prefix or suffix of the text")
	}
	if h, tl := utf8.RuneCountInString(head), utf8.RuneCountInString(tail); h != tl+1 && h != tl {
		t.Errorf("head %d and tail %d characters; want an even split, extra to the head", h, tl)
	}
	if want := strings.Count(head, "\n") + 1; gotLine != want {
		t.Errorf("notice line = %d, want %d", gotLine, want)
	}
	if got := truncateMiddle("short", 10, func(int) string { return "x" }); got != "short" {
		t.Errorf("short text changed: %q", got)
	}
}

// FuzzClean: any bytes clean to valid UTF-8 without escape or control
// characters other than newline and tab, and completePrefix never cuts
// into a character.
func FuzzClean(f *testing.F) {
	for _, s := range []string{"a\r\nb", "\x1b[31mx\x1b[0m", "\x1b]0;t\x07", "\x1bP$q\x1b\\", "é\b\bx", "\xff\xfe", "\x1b", "\x1b[", "50%\r\x1b[K1"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out := clean(b)
		if !utf8.ValidString(out) {
			t.Fatalf("clean(%q) = %q: invalid UTF-8", b, out)
		}
		for _, r := range out {
			if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f {
				t.Fatalf("clean(%q) = %q: control character %U", b, out, r)
			}
		}
		n := completePrefix(b)
		if n < 0 || n > len(b) {
			t.Fatalf("completePrefix(%q) = %d", b, n)
		}
		if utf8.Valid(b) && !utf8.Valid(b[:n]) {
			t.Fatalf("completePrefix(%q) = %d cuts a character", b, n)
		}
	})
}
