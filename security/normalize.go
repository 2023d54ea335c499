package security

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// maxScanChars caps how much text of one action is examined, as the
// reference does, so a huge argument cannot stall the analyzer.
const maxScanChars = 30000

// Normalize prepares text for matching so that obfuscation does not slip
// past the rules: NUL, invisible, bidirectional and other format characters
// are removed, compatibility forms are folded (NFKC: fullwidth letters
// become ASCII), and runs of spaces and tabs collapse to one space.
// Newlines are kept because they separate shell commands.
func Normalize(s string) string {
	if len(s) > maxScanChars {
		s = s[:maxScanChars]
	}
	s = strings.Map(func(r rune) rune {
		if r == 0 || unicode.Is(unicode.Cf, r) || isInvisible(r) {
			return -1
		}
		return r
	}, s)
	s = norm.NFKC.String(s)
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if r != '\n' && unicode.IsSpace(r) {
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// isInvisible covers invisible characters outside the Cf category.
func isInvisible(r rune) bool {
	switch {
	case r == 0x115F || r == 0x1160 || r == 0x3164 || r == 0xFFA0: // Hangul fillers
		return true
	case r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF: // variation selectors
		return true
	case r == 0x034F || r == 0x17B4 || r == 0x17B5: // combining grapheme joiner, Khmer vowels
		return true
	}
	return false
}
