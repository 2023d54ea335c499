// Package termtext makes text written by a model or a program safe to show
// on a terminal.
//
// Text from a model or from a command's output may carry escape sequences
// that a terminal obeys: moving the cursor to overwrite what was shown,
// clearing the screen, setting the window title, writing to the clipboard
// (OSC 52) or hiding text. Everything that shows such text to a person
// (the transcript visualizer, the TUI) passes it through Strip first.
package termtext

import (
	"strings"
	"unicode/utf8"
)

// Strip returns s without terminal control sequences: ESC sequences (CSI,
// OSC, DCS, SOS, PM, APC and two-byte escapes) and their 8-bit forms, C0
// control characters other than newline and tab, DEL and C1 controls. A
// carriage return before a newline is dropped; any other one becomes a
// newline, so that text after it cannot overwrite the line before it.
// Invalid UTF-8 becomes U+FFFD. s is returned as it is when it is clean.
func Strip(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteRune(utf8.RuneError)
			i++
		case r == 0x1b:
			i = skipEscape(s, i+1)
		case r == 0x9b: // 8-bit CSI
			i = skipCSI(s, i+n)
		case r == 0x9d || r == 0x90 || r == 0x98 || r == 0x9e || r == 0x9f: // 8-bit OSC, DCS, SOS, PM, APC
			i = skipString(s, i+n)
		case r == '\r':
			if !strings.HasPrefix(s[i+1:], "\n") {
				b.WriteByte('\n')
			}
			i++
		case r == '\n' || r == '\t':
			b.WriteRune(r)
			i++
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
			i += n
		default:
			b.WriteString(s[i : i+n])
			i += n
		}
	}
	return b.String()
}

// clean reports whether s has nothing Strip would change.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return false
		}
		if c >= 0x80 {
			// C1 controls are U+0080–U+009F, encoded as 0xC2 0x80–0x9F.
			if c == 0xc2 && i+1 < len(s) && s[i+1] < 0xa0 {
				return false
			}
			if !utf8.ValidString(s[i:]) {
				return false
			}
		}
	}
	return true
}

// skipEscape skips the rest of an escape sequence whose ESC ended before
// s[i], returning the index after it.
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[':
		return skipCSI(s, i+1)
	case ']', 'P', 'X', '^', '_':
		return skipString(s, i+1)
	}
	// nF sequences: intermediate bytes 0x20–0x2F, then a final byte.
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
		i++
	}
	return i
}

// skipCSI skips a control sequence's parameter and intermediate bytes and
// its final byte.
func skipCSI(s string, i int) int {
	for i < len(s) {
		c := s[i]
		i++
		if c >= 0x40 && c <= 0x7e {
			return i
		}
		if c < 0x20 || c > 0x3f && c < 0x40 || c >= 0x80 {
			// Not a CSI byte: the sequence was malformed; stop here.
			return i - 1
		}
	}
	return i
}

// skipString skips a control string (OSC, DCS, …) up to its terminator:
// BEL, ESC \ or the 8-bit ST. An unterminated one runs to the end of s.
func skipString(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == 0x07:
			return i + 1
		case s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\':
			return i + 2
		case s[i] == 0xc2 && i+1 < len(s) && s[i+1] == 0x9c:
			return i + 2
		}
		i++
	}
	return i
}
