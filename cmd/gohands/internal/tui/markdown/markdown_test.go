package markdown

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/gohands/gohands/internal/golden"
)

// golden compares got with testdata/name, or rewrites it with -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), []byte(got))
}

// TestGolden renders each testdata/*.md without styles at 40 and 72
// columns; the layout is what the golden files show.
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "*.md"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs: %v", err)
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".md")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			var sb strings.Builder
			for _, w := range []int{40, 72} {
				out := Render(string(src), w, &Options{Plain: true})
				sb.WriteString("=== width " + strconv.Itoa(w) + "\n")
				for l := range strings.SplitSeq(out, "\n") {
					if n := ansi.StringWidth(l); n > w {
						t.Errorf("width %d: line %q is %d columns", w, l, n)
					}
					if strings.Contains(l, "\x1b") {
						t.Errorf("plain output has an escape sequence: %q", l)
					}
					sb.WriteString(l + "\n")
				}
			}
			checkGolden(t, name+".golden", sb.String())
		})
	}
}

// TestStyled shows the escape sequences (⎋ for ESC) of a styled render,
// and checks that every line closes the styles it opens.
func TestStyled(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "answer.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := Render(string(src), 40, nil)
	for l := range strings.SplitSeq(out, "\n") {
		if sgr := reSGR.FindAllString(l, -1); len(sgr) > 0 && sgr[len(sgr)-1] != reset {
			t.Errorf("line leaves a style open: %q", l)
		}
	}
	checkGolden(t, "answer.styled", strings.ReplaceAll(out, "\x1b", "⎋")+"\n")
}

// TestStyles checks the attributes of each kind of markup.
func TestStyles(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"**b**", "\x1b[0;1mb" + reset},
		{"*i*", "\x1b[0;3mi" + reset},
		{"~~s~~", "\x1b[0;9ms" + reset},
		{"`c`", "\x1b[0;36mc" + reset},
		{"**a `c`**", "\x1b[0;1ma " + reset + "\x1b[0;1;36mc" + reset},
		{"# H", "\x1b[0;1;4;35mH" + reset},
		{"[t](u)", "\x1b[0;4;34mt" + reset + "\x1b[0;2m (u)" + reset},
		{"snake_case_name", "snake_case_name"},
	} {
		if got := Render(c.src, 40, nil); got != c.want {
			t.Errorf("Render(%q) = %q, want %q", c.src, got, c.want)
		}
	}
}

// TestWrapKeepsStyle: a styled span broken over lines is closed at the
// end of each line and reopened on the next.
func TestWrapKeepsStyle(t *testing.T) {
	out := Render("**one two three four five six**", 10, nil)
	lines := strings.Split(out, "\n")
	if len(lines) < 3 {
		t.Fatalf("not wrapped: %q", out)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "\x1b[0;1m") || !strings.HasSuffix(l, reset) {
			t.Errorf("line %q does not stand alone", l)
		}
	}
}

// TestNarrow: at a width too small for the markup's indentation every
// character of the text is still shown.
func TestNarrow(t *testing.T) {
	src := "- a list item with words\n  - nested deeper still\n\n```\nsome_code()\n```\n\n> quoted words here"
	out := Render(src, 3, &Options{Plain: true})
	flat := strings.Join(strings.Fields(out), "")
	for _, w := range []string{"alistitemwithwords", "nesteddeeperstill", "some_code()", "quotedwordshere"} {
		var kept strings.Builder
		for _, r := range flat {
			if strings.ContainsRune(w, r) {
				kept.WriteRune(r)
			}
		}
		if !strings.Contains(kept.String(), w) {
			t.Errorf("%q lost in:\n%s", w, out)
		}
	}
}
