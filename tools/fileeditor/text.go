package fileeditor

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// utf8BOM starts files that declare themselves UTF-8 (common on Windows).
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// textFile is a file decoded for editing, with what it takes to write it back
// byte for byte the way it was: the model edits text, never raw bytes.
type textFile struct {
	// text is the decoded content without BOM, with "\n" line endings when
	// crlf is set.
	text string
	// bom records a leading UTF-8 byte order mark.
	bom bool
	// latin1 records that the file is not valid UTF-8 and was decoded as
	// ISO-8859-1, which maps every byte to one rune and back losslessly.
	latin1 bool
	// crlf records that every line ends with "\r\n".
	crlf bool
}

// isBinary reports whether b looks like binary data rather than text: it
// holds a NUL byte, or more than 10% of it is control characters that text
// files do not use.
func isBinary(b []byte) bool {
	if bytes.IndexByte(b, 0) >= 0 {
		return true
	}
	ctrl := 0
	for _, c := range b {
		if c < 0x20 || c == 0x7F {
			switch c {
			case '\t', '\n', '\r', '\f', '\v', '\b', 0x1B: // 0x1B: ANSI escapes in logs
			default:
				ctrl++
			}
		}
	}
	return ctrl*10 > len(b)
}

// decode turns raw file bytes into a textFile. It does not check for binary
// content; callers do that first.
func decode(b []byte) textFile {
	var f textFile
	if bytes.HasPrefix(b, utf8BOM) && utf8.Valid(b[len(utf8BOM):]) {
		f.bom = true
		b = b[len(utf8BOM):]
	}
	if utf8.Valid(b) {
		f.text = string(b)
	} else {
		f.latin1 = true
		r := make([]rune, len(b))
		for i, c := range b {
			r[i] = rune(c)
		}
		f.text = string(r)
	}
	if n := strings.Count(f.text, "\r\n"); n > 0 && n == strings.Count(f.text, "\n") {
		f.crlf = true
		f.text = strings.ReplaceAll(f.text, "\r\n", "\n")
	}
	return f
}

// encode turns text, edited from f.text, into bytes with f's encoding, BOM
// and line endings. It fails, naming the first offending character, when a
// Latin-1 file cannot represent text.
func (f textFile) encode(text string) ([]byte, error) {
	if f.crlf {
		text = strings.ReplaceAll(text, "\n", "\r\n")
	}
	var out []byte
	if f.bom {
		out = append(out, utf8BOM...)
	}
	if !f.latin1 {
		return append(out, text...), nil
	}
	out = make([]byte, 0, len(text))
	for _, r := range text {
		if r > 0xFF {
			return nil, fmt.Errorf("the file is encoded as ISO-8859-1 (Latin-1), which cannot represent the character %q (U+%04X). The file was not changed; use only Latin-1 characters in it", r, r)
		}
		out = append(out, byte(r))
	}
	return out, nil
}

// normalize adapts text sent by the model to f's in-memory form: in a CRLF
// file the model may send either line ending.
func (f textFile) normalize(s string) string {
	if f.crlf {
		return strings.ReplaceAll(s, "\r\n", "\n")
	}
	return s
}

// splitLines returns the lines of text without their "\n". A final line
// without "\n" counts; a final "\n" does not start another line.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// maxOutput is the most characters a view or snippet shows.
const maxOutput = 16000

// Notices put where output was cut.
const (
	fileClippedNotice = "<response clipped><NOTE>Lines %d to %d are not shown because of the output limit. " +
		"View them with view_range, after finding what you need with `grep -n`.</NOTE>"
	dirClippedNotice = "<response clipped><NOTE>%d entries are not shown because of the output limit. " +
		"List large directories piece by piece with `ls -la` or `find`.</NOTE>"
)

// numbered formats lines as `cat -n` does ("%6d\t" then the line), the first
// one numbered first. Output beyond maxOutput characters is cut in the
// middle at line boundaries; the line numbers stay true and a notice names
// the lines left out. Only the rows shown are formatted.
func numbered(lines []string, first int) string {
	row := func(i int) string {
		n := strconv.Itoa(first + i)
		l := clipLine(lines[i])
		var b strings.Builder
		b.Grow(max(6, len(n)) + 1 + len(l))
		for range 6 - len(n) {
			b.WriteByte(' ')
		}
		b.WriteString(n)
		b.WriteByte('\t')
		b.WriteString(l)
		return b.String()
	}
	size := func(i int) int {
		return max(6, digits(first+i)) + 1 + utf8.RuneCountInString(clipLine(lines[i]))
	}
	return clip(len(lines), size, row, func(from, to int) string {
		return fmt.Sprintf(fileClippedNotice, first+from, first+to-1)
	})
}

// digits returns the number of decimal digits of n > 0.
func digits(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

// clipLine shortens a single line that alone would use half the output
// budget, so a minified file still shows something useful.
func clipLine(l string) string {
	const most = maxOutput / 2
	if len(l) <= most || utf8.RuneCountInString(l) <= most {
		return l
	}
	i, n := 0, 0
	for i = range l {
		if n == most-100 {
			break
		}
		n++
	}
	rest := utf8.RuneCountInString(l[i:])
	return l[:i] + " [... line truncated, " + strconv.Itoa(rest) + " more characters]"
}

// clipRows joins rows with "\n", cut as clip does.
func clipRows(rows []string, notice func(from, to int) string) string {
	return clip(len(rows),
		func(i int) int { return utf8.RuneCountInString(rows[i]) },
		func(i int) string { return rows[i] },
		notice)
}

// clip joins n rows with "\n"; row(i) makes row i and size(i) is its
// length in characters. When the result would exceed maxOutput characters
// it keeps whole rows from the head and the tail, half the budget each, and
// puts notice(from, to) in place of rows from..to-1.
func clip(n int, size func(int) int, row func(int) string, notice func(from, to int) string) string {
	total := 0
	for i := range n {
		total += size(i) + 1
	}
	head, tail := n, n
	if total > maxOutput {
		budget := (maxOutput - 200) / 2
		used := 0
		for head = 0; head < n; head++ {
			if used += size(head) + 1; used > budget {
				break
			}
		}
		used = 0
		for tail = n; tail > head; tail-- {
			if used += size(tail-1) + 1; used > budget {
				break
			}
		}
	}
	out := make([]string, 0, head+1+n-tail)
	for i := range head {
		out = append(out, row(i))
	}
	if head < tail {
		out = append(out, notice(head, tail))
	}
	for i := tail; i < n; i++ {
		out = append(out, row(i))
	}
	return strings.Join(out, "\n")
}

// formatInts formats a list of ints the way the reference prints lists in
// its messages: "[1, 2]".
func formatInts(v []int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, n := range v {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(n))
	}
	b.WriteByte(']')
	return b.String()
}
