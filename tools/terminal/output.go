package terminal

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// clean turns raw terminal output into text: invalid UTF-8 replaced,
// escape sequences removed (the model reads text, and terminal queries
// would make a terminal that displays the text answer them), carriage
// returns and backspaces applied the way a terminal applies them (a
// progress bar leaves only its last state), and other control characters
// dropped. Lines end in "\n".
func clean(b []byte) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	var out strings.Builder
	out.Grow(len(s))
	var line []rune
	col := 0
	put := func(r rune) {
		if col < len(line) {
			line[col] = r
		} else {
			line = append(line, r)
		}
		col++
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			put(r)
			i += size
			continue
		}
		switch {
		case c == '\n':
			out.WriteString(string(line))
			out.WriteByte('\n')
			line, col = line[:0], 0
		case c == '\r':
			col = 0
		case c == '\b':
			col = max(col-1, 0)
		case c == '\t' || (c >= 0x20 && c < 0x7f):
			put(rune(c))
		case c == 0x1b:
			n := escapeLen(s[i:])
			// Erase in line: the one sequence whose effect changes which
			// text remains (progress bars redraw with it).
			if seq := s[i:min(i+n, len(s))]; strings.HasPrefix(seq, "\x1b[") && strings.HasSuffix(seq, "K") {
				switch seq {
				case "\x1b[K", "\x1b[0K":
					line = line[:min(col, len(line))]
				case "\x1b[2K":
					line = line[:0]
				}
			}
			i += n
			continue
		}
		i++
	}
	out.WriteString(string(line))
	return out.String()
}

// escapeLen returns the length of the escape sequence at the start of s
// (s[0] is ESC). A sequence that is cut short counts up to where it stops;
// a string sequence (OSC, DCS, APC, ...) without its terminator counts as
// its two-byte introducer only, so it cannot swallow the output after it.
func escapeLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	switch c := s[1]; {
	case c == '[':
		j := 2
		for j < len(s) && s[j] >= 0x30 && s[j] <= 0x3f {
			j++
		}
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
			j++
		}
		if j < len(s) && s[j] >= 0x40 && s[j] <= 0x7e {
			j++
		}
		return j
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		for j := 2; j < len(s); j++ {
			if s[j] == 0x07 && c == ']' {
				return j + 1
			}
			if s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\' {
				return j + 2
			}
		}
		return 2
	case c >= 0x20 && c <= 0x2f:
		j := 1
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
			j++
		}
		return min(j+1, len(s))
	}
	return 2
}

// completePrefix returns the length of the longest prefix of b that does
// not end inside an escape sequence or a UTF-8 character, so output read
// while a command runs is never split in the middle of one.
func completePrefix(b []byte) int {
	n := len(b)
	// Escape sequences: look back a bounded distance for the last ESC.
	for i := n - 1; i >= 0 && i >= n-4096; i-- {
		if b[i] != 0x1b {
			continue
		}
		if !escapeComplete(b[i:]) {
			n = i
		}
		break
	}
	// UTF-8: back up over a trailing partial character.
	for i := n - 1; i >= 0 && i >= n-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:n]) {
				n = i
			}
			break
		}
	}
	return n
}

// escapeComplete reports whether the escape sequence at the start of b is
// complete.
func escapeComplete(b []byte) bool {
	if len(b) < 2 {
		return false
	}
	switch c := b[1]; {
	case c == '[':
		for _, x := range b[2:] {
			if x >= 0x40 && x <= 0x7e {
				return true
			}
		}
		return false
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		for j := 2; j < len(b); j++ {
			if b[j] == 0x07 && c == ']' || b[j] == 0x1b && j+1 < len(b) && b[j+1] == '\\' {
				return true
			}
		}
		return false
	case c >= 0x20 && c <= 0x2f:
		for _, x := range b[2:] {
			if x < 0x20 || x > 0x2f {
				return true
			}
		}
		return false
	}
	return true
}

// keys maps the key names the model may send with is_input to the bytes a
// terminal sends for them.
var keys = map[string]string{
	"ENTER": "\r",
	"TAB":   "\t",
	"BS":    "\x7f",
	"ESC":   "\x1b",
	"UP":    "\x1b[A",
	"DOWN":  "\x1b[B",
	"RIGHT": "\x1b[C",
	"LEFT":  "\x1b[D",
	"HOME":  "\x1b[H",
	"END":   "\x1b[F",
	"PGUP":  "\x1b[5~",
	"PGDN":  "\x1b[6~",
}

// ctrlKey returns the byte of a "C-<key>" name such as C-c, and whether
// name is one.
func ctrlKey(name string) (byte, bool) {
	if len(name) != 3 || (name[0] != 'C' && name[0] != 'c') || name[1] != '-' {
		return 0, false
	}
	k := name[2]
	if 'a' <= k && k <= 'z' {
		k -= 'a' - 'A'
	}
	if k < '@' || k > '_' {
		return 0, false
	}
	return k & 0x1f, true
}

// inputBytes returns what is typed for an is_input command: a key, or the
// text followed by Enter. key reports whether it was a key.
func inputBytes(command string) (b []byte, key bool) {
	if c, ok := ctrlKey(command); ok {
		return []byte{c}, true
	}
	if k, ok := keys[strings.ToUpper(command)]; ok {
		return []byte(k), true
	}
	return []byte(command + "\r"), false
}

// literalKind says what kind of Python/JSON literal command looks like,
// or "" when it looks like a shell command. Models sometimes pack
// structured data into the command; the shell would only say "command not
// found". Shell syntax that starts with a bracket ("[ -f x ]",
// "[[ -n $x ]]", "{ a; b; }") always has a blank after it.
func literalKind(command string) string {
	s := strings.TrimLeft(command, " \t\r\n")
	if len(s) < 2 {
		return ""
	}
	switch a, b := s[0], s[1]; {
	case a == '[' && (b == '{' || b == '"' || b == '\''):
		return "list literal"
	case a == '[' && b == '[' && len(s) >= 3 && s[2] != ' ' && s[2] != '\t':
		return "nested list literal"
	case a == '{' && (b == '"' || b == '\''):
		return "dict literal"
	}
	return ""
}

// truncateMiddle shortens text to at most limit characters (Unicode code
// points, as the reference counts) by replacing its middle with notice(line),
// where line is the line at which the omitted part starts. The head gets
// the extra character when the split is uneven.
func truncateMiddle(text string, limit int, notice func(line int) string) string {
	n := utf8.RuneCountInString(text)
	if n <= limit {
		return text
	}
	// The line number does not depend on the notice's exact length by
	// more than a few characters; compute it from a first estimate.
	note := notice(0)
	avail := limit - utf8.RuneCountInString(note)
	head := (avail + 1) / 2
	headEnd := runeOffset(text, head)
	note = notice(strings.Count(text[:headEnd], "\n") + 1)
	avail = limit - utf8.RuneCountInString(note)
	if avail <= 0 {
		return string([]rune(note)[:limit])
	}
	head = min((avail+1)/2, avail)
	tail := avail - head
	return text[:runeOffset(text, head)] + note + text[runeOffset(text, n-tail):]
}

// runeOffset returns the byte offset of the i-th code point of s.
func runeOffset(s string, i int) int {
	for off := range s {
		if i == 0 {
			return off
		}
		i--
	}
	return len(s)
}

// saveOutput writes text to dir/terminal_output_<hash>.txt, named by the
// content's hash so the same output is saved once, and returns the path.
func saveOutput(dir, text string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(text))
	path := filepath.Join(dir, "terminal_output_"+hex.EncodeToString(sum[:4])+".txt")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	tmp, err := os.CreateTemp(dir, ".terminal_output_*")
	if err != nil {
		return "", err
	}
	_, werr := tmp.WriteString(text)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("saving the full output: %w", werr)
	}
	return path, nil
}
