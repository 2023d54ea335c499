// Package markdown renders the Markdown a model writes for a terminal:
// headings, emphasis, inline code, fenced and indented code blocks,
// lists (nested, ordered, task lists), links, block quotes, rules and
// tables, wrapped to a width.
//
// It is deliberately small: it covers what agents write, not all of
// CommonMark. What it does not understand (HTML, reference links) is
// shown as written, which is what the reader would type anyway.
package markdown

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/gohands/gohands/internal/lazyregexp"
)

// Options configure Render. A nil *Options is the default.
type Options struct {
	// Plain leaves out colours and text attributes; the layout is the same.
	Plain bool
}

// Render returns src rendered for a terminal width columns wide, without
// a trailing newline.
func Render(src string, width int, opts *Options) string {
	r := &renderer{plain: opts != nil && opts.Plain}
	src = strings.ReplaceAll(strings.ReplaceAll(src, "\r\n", "\n"), "\t", "    ")
	lines := r.blocks(strings.Split(src, "\n"), max(width, 10), 0)
	return strings.Join(balance(lines), "\n")
}

type renderer struct{ plain bool }

// attr is a set of text attributes; the zero attr is plain text.
type attr struct {
	bold, faint, italic, under, strike bool
	fg                                 string // an SGR colour parameter, "" for the default
}

func (a attr) sgr() string {
	codes := []string{"0"}
	for _, c := range []struct {
		on   bool
		code string
	}{{a.bold, "1"}, {a.faint, "2"}, {a.italic, "3"}, {a.under, "4"}, {a.strike, "9"}, {a.fg != "", a.fg}} {
		if c.on {
			codes = append(codes, c.code)
		}
	}
	return "\x1b[" + strings.Join(codes, ";") + "m"
}

const reset = "\x1b[0m"

// The styles, as SGR parameters of the 16 basic colours, which every
// terminal has and its theme adapts.
var (
	styleH1    = attr{bold: true, under: true, fg: "35"}
	styleH2    = attr{bold: true, fg: "35"}
	styleH3    = attr{bold: true}
	styleCode  = attr{fg: "36"}
	styleLink  = attr{under: true, fg: "34"}
	styleURL   = attr{faint: true}
	styleFaint = attr{faint: true}
	styleHead  = attr{bold: true}
)

// paint wraps s, which holds no escape sequences of its own, in a.
func (r *renderer) paint(s string, a attr) string {
	if r.plain || s == "" || a == (attr{}) {
		return s
	}
	return a.sgr() + s + reset
}

var (
	reFence   = lazyregexp.New("^ {0,3}(```+|~~~+)\\s*([^`\\s]*)")
	reHeading = lazyregexp.New(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	reRule    = lazyregexp.New(`^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$`)
	reItem    = lazyregexp.New(`^( *)([-*+]|\d{1,9}[.)])( +|$)`)
	reSetext  = lazyregexp.New(`^ {0,3}(=+|-+)[ \t]*$`)
	reTableSp = lazyregexp.New(`^ *\|? *:?-+:? *(\| *:?-+:? *)*\|? *$`)
	reSGR     = lazyregexp.New("\x1b\\[[0-9;]*m")
)

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

func blank(l string) bool { return strings.TrimSpace(l) == "" }

// startsBlock reports whether l begins a block that ends a paragraph.
func startsBlock(l string) bool {
	return reFence.MatchString(l) || reHeading.MatchString(l) || reRule.MatchString(l) ||
		strings.HasPrefix(strings.TrimLeft(l, " "), ">") || interrupts(l)
}

// interrupts reports whether l is a list item that may end a paragraph:
// a bullet, or an ordered item numbered 1 ("2024. was a year" is text).
func interrupts(l string) bool {
	m := reItem.FindStringSubmatch(l)
	if m == nil || blank(l[len(m[0]):]) {
		return false
	}
	return !(m[2][0] >= '0' && m[2][0] <= '9') || m[2][:len(m[2])-1] == "1"
}

// blocks renders lines as a sequence of blocks, one blank line between
// them, at width; depth is the list nesting, for the bullets.
func (r *renderer) blocks(lines []string, width, depth int) []string {
	return r.render(lines, width, depth, false)
}

// render is blocks; tight leaves out the blank lines between blocks (the
// items of a tight list).
func (r *renderer) render(lines []string, width, depth int, tight bool) []string {
	var out []string
	emit := func(b []string) {
		if len(out) > 0 && !tight {
			out = append(out, "")
		}
		out = append(out, b...)
	}
	for i := 0; i < len(lines); {
		l := lines[i]
		switch {
		case blank(l):
			i++
		case reFence.MatchString(l):
			m := reFence.FindStringSubmatch(l)
			fence := m[1]
			var code []string
			i++
			for ; i < len(lines); i++ {
				t := strings.TrimSpace(lines[i])
				if strings.HasPrefix(t, fence[:3]) && strings.Trim(t, fence[:1]) == "" && len(t) >= len(fence) {
					i++
					break
				}
				code = append(code, lines[i])
			}
			emit(r.code(code, m[2], width))
		case reHeading.MatchString(l):
			m := reHeading.FindStringSubmatch(l)
			emit(r.heading(m[2], len(m[1]), width))
			i++
		case reRule.MatchString(l):
			emit([]string{r.paint(strings.Repeat("─", width), styleFaint)})
			i++
		case strings.HasPrefix(strings.TrimLeft(l, " "), ">"):
			var inner []string
			for ; i < len(lines) && !blank(lines[i]); i++ {
				t := strings.TrimLeft(lines[i], " ")
				if !strings.HasPrefix(t, ">") {
					if startsBlock(lines[i]) {
						break
					}
					inner = append(inner, t) // a lazy continuation
					continue
				}
				t = strings.TrimPrefix(t[1:], " ")
				inner = append(inner, t)
			}
			bar := r.paint("│ ", styleFaint)
			var b []string
			for _, q := range r.blocks(inner, width-2, depth) {
				b = append(b, bar+q)
			}
			emit(b)
		case reItem.MatchString(l):
			var b []string
			b, i = r.list(lines, i, width, depth)
			emit(b)
		case indentOf(l) >= 4:
			var code []string
			for ; i < len(lines) && (blank(lines[i]) || indentOf(lines[i]) >= 4); i++ {
				code = append(code, strings.TrimPrefix(lines[i], "    "))
			}
			for len(code) > 0 && blank(code[len(code)-1]) {
				code = code[:len(code)-1]
			}
			emit(r.code(code, "", width))
		case i+1 < len(lines) && strings.Contains(l, "|") && reTableSp.MatchString(lines[i+1]) && strings.Contains(lines[i+1], "|"):
			rows := [][]string{cells(l)}
			for i += 2; i < len(lines) && !blank(lines[i]) && strings.Contains(lines[i], "|"); i++ {
				rows = append(rows, cells(lines[i]))
			}
			emit(r.table(rows, width))
		default:
			var para []string
			level := 0
			for ; i < len(lines) && !blank(lines[i]); i++ {
				if len(para) > 0 && reSetext.MatchString(lines[i]) {
					level = 1
					if strings.Contains(lines[i], "-") {
						level = 2
					}
					i++
					break
				}
				if len(para) > 0 && startsBlock(lines[i]) {
					break
				}
				para = append(para, lines[i])
			}
			if level > 0 {
				emit(r.heading(strings.Join(trimAll(para), " "), level, width))
				continue
			}
			emit(r.paragraph(para, width))
		}
	}
	return out
}

func trimAll(ls []string) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = strings.TrimSpace(l)
	}
	return out
}

// paragraph joins lines (a hard break where a line ends in two spaces or
// a backslash), renders the inline markup and wraps the result.
func (r *renderer) paragraph(lines []string, width int) []string {
	var sb strings.Builder
	for i, l := range lines {
		hard := strings.HasSuffix(l, "  ") || strings.HasSuffix(l, "\\")
		l = strings.TrimSpace(l)
		if hard && strings.HasSuffix(l, "\\") {
			l = l[:len(l)-1]
		}
		sb.WriteString(l)
		if i < len(lines)-1 {
			if hard {
				sb.WriteString("\n")
			} else {
				sb.WriteString(" ")
			}
		}
	}
	return r.wrap(r.inline(sb.String(), attr{}), width)
}

// wrap wraps styled text at width, breaking long words.
func (r *renderer) wrap(s string, width int) []string {
	return balance(strings.Split(ansi.Wrap(s, max(width, 1), ""), "\n"))
}

func (r *renderer) heading(text string, level, width int) []string {
	style := styleH3
	switch level {
	case 1:
		style = styleH1
	case 2:
		style = styleH2
	}
	return r.wrap(r.inline(strings.TrimSpace(text), style), width)
}

// code shows a code block as it is written, in a faint frame, long
// lines broken at the width rather than reflowed.
func (r *renderer) code(lines []string, lang string, width int) []string {
	bar := r.paint("│ ", styleFaint)
	var out []string
	if lang != "" {
		out = append(out, r.paint("╭ "+lang, styleFaint))
	}
	for _, l := range lines {
		for w := range strings.SplitSeq(ansi.Hardwrap(l, max(width-2, 1), true), "\n") {
			out = append(out, bar+r.paint(w, styleCode))
		}
	}
	if len(out) == 0 {
		out = append(out, bar)
	}
	return out
}

// list renders the list that starts at lines[i] and returns the index
// of the line after it. A list with blank lines between or inside its
// items is loose: its items and their blocks are spaced by blank lines.
func (r *renderer) list(lines []string, i, width, depth int) ([]string, int) {
	first := reItem.FindStringSubmatch(lines[i])
	base, delim := len(first[1]), first[2][len(first[2])-1:]
	ordered := isDigit(first[2][0])
	sameList := func(m []string) bool {
		return m != nil && len(m[1]) == base && isDigit(m[2][0]) == ordered && (!ordered || strings.HasSuffix(m[2], delim))
	}
	num := 0
	if ordered {
		num, _ = strconv.Atoi(first[2][:len(first[2])-1])
	}
	type item struct {
		marker string
		lines  []string
	}
	var items []item
	loose := false
	for i < len(lines) {
		m := reItem.FindStringSubmatch(lines[i])
		if !sameList(m) {
			break
		}
		col := len(m[0])
		if m[3] == "" || len(m[3]) > 4 {
			col = len(m[1]) + len(m[2]) + 1 // content starts one space after the marker
		}
		body := []string{lines[i][min(col, len(lines[i])):]}
		i++
		// The item goes on while lines are indented to its content, blank
		// lines followed by such lines, or lazy continuations of its text.
		for i < len(lines) {
			l := lines[i]
			if blank(l) {
				j := i
				for j < len(lines) && blank(lines[j]) {
					j++
				}
				if j < len(lines) && indentOf(lines[j]) >= col {
					body = append(body, lines[i:j]...)
					i, loose = j, true
					continue
				}
				break
			}
			switch {
			case indentOf(l) >= col:
				body = append(body, l[col:])
			case reItem.MatchString(l) || startsBlock(l) || blank(body[len(body)-1]):
				goto done
			default:
				body = append(body, strings.TrimLeft(l, " "))
			}
			i++
		}
	done:
		marker := []string{"•", "◦", "▪"}[depth%3]
		if ordered {
			marker = strconv.Itoa(num) + "."
			num++
		}
		if t := body[0]; len(t) >= 3 && t[0] == '[' && t[2] == ']' && (len(t) == 3 || t[3] == ' ') {
			switch t[1] {
			case ' ':
				marker, body[0] = "☐", strings.TrimPrefix(t[3:], " ")
			case 'x', 'X':
				marker, body[0] = "☑", strings.TrimPrefix(t[3:], " ")
			}
		}
		items = append(items, item{marker, body})
		// Blank lines before the next item make the list loose.
		j := i
		for j < len(lines) && blank(lines[j]) {
			j++
		}
		if j > i && j < len(lines) && sameList(reItem.FindStringSubmatch(lines[j])) {
			loose, i = true, j
		}
	}
	var out []string
	for n, it := range items {
		pad := ansi.StringWidth(it.marker) + 1
		body := r.render(it.lines, width-pad, depth+1, !loose)
		if len(body) == 0 {
			body = []string{""}
		}
		if loose && n > 0 {
			out = append(out, "")
		}
		out = append(out, it.marker+" "+body[0])
		for _, b := range body[1:] {
			if b != "" {
				b = strings.Repeat(" ", pad) + b
			}
			out = append(out, b)
		}
	}
	return out, i
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// cells splits a table row at its unescaped pipes.
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, "\\|") {
		row = row[:len(row)-1]
	}
	var out []string
	var cur strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			cur.WriteByte('|')
			i++
		case row[i] == '|':
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(row[i])
		}
	}
	return append(out, strings.TrimSpace(cur.String()))
}

// table lines the columns up when they fit the width; otherwise each
// row becomes a line of its cells.
func (r *renderer) table(rows [][]string, width int) []string {
	n := 0
	for _, row := range rows {
		n = max(n, len(row))
	}
	styled := make([][]string, len(rows))
	widths := make([]int, n)
	for i, row := range rows {
		styled[i] = make([]string, n)
		for j := range n {
			a := attr{}
			if i == 0 {
				a = styleHead
			}
			if j < len(row) {
				styled[i][j] = r.inline(row[j], a)
			}
			widths[j] = max(widths[j], ansi.StringWidth(styled[i][j]))
		}
	}
	total := 3 * (n - 1)
	for _, w := range widths {
		total += w
	}
	sep := r.paint(" │ ", styleFaint)
	var out []string
	if total > width {
		for _, row := range styled {
			out = append(out, r.wrap(strings.Join(row, sep), width)...)
		}
		return out
	}
	for i, row := range styled {
		var sb strings.Builder
		for j, c := range row {
			if j > 0 {
				sb.WriteString(sep)
			}
			sb.WriteString(c)
			if j < n-1 {
				sb.WriteString(strings.Repeat(" ", widths[j]-ansi.StringWidth(c)))
			}
		}
		out = append(out, strings.TrimRight(sb.String(), " "))
		if i == 0 {
			var rule []string
			for _, w := range widths {
				rule = append(rule, strings.Repeat("─", w))
			}
			out = append(out, r.paint(strings.Join(rule, "─┼─"), styleFaint))
		}
	}
	return out
}

// inline renders the inline markup of s (code spans, emphasis, links)
// on top of the attributes base.
func (r *renderer) inline(s string, base attr) string {
	var sb strings.Builder
	text := func(t string, a attr) { sb.WriteString(r.paint(t, a)) }
	var plain strings.Builder
	flush := func() {
		text(plain.String(), base)
		plain.Reset()
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && strings.IndexByte("\\`*_{}[]()#+-.!|~<>", s[i+1]) >= 0:
			plain.WriteByte(s[i+1])
			i += 2
			continue
		case c == '`':
			n := run(s, i, '`')
			if end := findRun(s, i+n, '`', n); end >= 0 {
				code := s[i+n : end]
				if len(code) > 2 && code[0] == ' ' && code[len(code)-1] == ' ' {
					code = code[1 : len(code)-1]
				}
				flush()
				a := styleCode
				a.bold = base.bold
				text(code, a)
				i = end + n
				continue
			}
			plain.WriteString(s[i : i+n])
			i += n
			continue
		case c == '*' || c == '_' || c == '~':
			n := run(s, i, c)
			if end, k := r.emphasis(s, i, n); end >= 0 {
				a := base
				switch {
				case c == '~':
					a.strike = true
				case k == 1:
					a.italic = true
				case k == 2:
					a.bold = true
				default:
					a.bold, a.italic = true, true
				}
				flush()
				sb.WriteString(r.inline(s[i+k:end], a))
				i = end + k
				continue
			}
			plain.WriteString(s[i : i+n])
			i += n
			continue
		case c == '[' || c == '!' && i+1 < len(s) && s[i+1] == '[':
			if label, url, end, ok := link(s, i); ok {
				flush()
				a := styleLink
				a.bold = base.bold
				switch {
				case c == '!':
					text("["+cmpOr(label, "image")+"]", styleFaint)
					text(" "+url, styleURL)
				case label == url || label == "":
					text(url, a)
				default:
					sb.WriteString(r.inline(label, a))
					text(" ("+url+")", styleURL)
				}
				i = end
				continue
			}
		case c == '<':
			if end := strings.IndexByte(s[i:], '>'); end > 0 {
				u := s[i+1 : i+end]
				if (strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "mailto:")) && !strings.ContainsAny(u, " <") {
					flush()
					text(u, styleLink)
					i += end + 1
					continue
				}
			}
		}
		plain.WriteByte(c)
		i++
	}
	flush()
	return sb.String()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// run is the length of the run of c starting at s[i].
func run(s string, i int, c byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == c {
		n++
	}
	return n
}

// findRun returns where the next run of exactly n c's after from starts,
// or -1.
func findRun(s string, from int, c byte, n int) int {
	for j := from; j < len(s); {
		if s[j] != c {
			j++
			continue
		}
		k := run(s, j, c)
		if k == n {
			return j
		}
		j += k
	}
	return -1
}

// emphasis finds the end of the emphasis opened by the run of n
// delimiters at s[i]: where its closing run starts and how many
// delimiters it uses (1 italic, 2 bold, 3 both), or -1. An underscore
// inside a word (snake_case) and a delimiter followed by a space open
// nothing.
func (r *renderer) emphasis(s string, i, n int) (end, k int) {
	c := s[i]
	if n > 3 || i+n >= len(s) || isSpace(s[i+n]) {
		return -1, 0
	}
	if c == '~' && n != 2 {
		return -1, 0
	}
	if c == '_' && i > 0 && isWord(s[:i]) {
		return -1, 0
	}
	for j := i + n; j < len(s); {
		switch s[j] {
		case '`':
			// A code span inside the emphasis is skipped whole.
			m := run(s, j, '`')
			if e := findRun(s, j+m, '`', m); e >= 0 {
				j = e + m
				continue
			}
			j += m
			continue
		case c:
			m := run(s, j, c)
			if m >= n && !isSpace(s[j-1]) && (c != '_' || j+m >= len(s) || !isWordStart(s[j+m:])) {
				return j, n
			}
			j += m
			continue
		}
		j++
	}
	return -1, 0
}

func isSpace(b byte) bool { return b == ' ' || b == '\n' || b == '\t' }

// isWord reports whether before ends in a letter or digit.
func isWord(before string) bool {
	r, _ := utf8.DecodeLastRuneInString(before)
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func isWordStart(after string) bool {
	r, _ := utf8.DecodeRuneInString(after)
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// link parses [label](url) or ![alt](url) at s[i]: the label, the url
// and the index after the link.
func link(s string, i int) (label, url string, end int, ok bool) {
	if s[i] == '!' {
		i++
	}
	depth := 0
	j := i
	for ; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
			continue
		case '[':
			depth++
		case ']':
			depth--
		}
		if depth == 0 {
			break
		}
	}
	if j >= len(s)-1 || s[j+1] != '(' {
		return "", "", 0, false
	}
	label = s[i+1 : j]
	depth = 0
	k := j + 1
	for ; k < len(s); k++ {
		switch s[k] {
		case '(':
			depth++
		case ')':
			depth--
		case ' ':
			if depth == 1 {
				// [x](url "title"): the title is dropped.
				if e := strings.IndexByte(s[k:], ')'); e > 0 && k+1 < len(s) && (s[k+1] == '"' || s[k+1] == '\'') {
					return label, s[j+2 : k], k + e + 1, true
				}
				return "", "", 0, false
			}
		}
		if depth == 0 {
			break
		}
	}
	if k >= len(s) {
		return "", "", 0, false
	}
	url = strings.TrimSuffix(strings.TrimPrefix(s[j+2:k], "<"), ">")
	return label, url, k + 1, true
}

// balance makes each line stand alone: a style still open at the end of
// a line is closed there and opened again on the next, so that a line
// shown without its predecessors (scrolled, or framed) keeps its look.
func balance(lines []string) []string {
	open := ""
	for i, l := range lines {
		if open != "" {
			l = open + l
		}
		if ms := reSGR.FindAllString(l, -1); len(ms) > 0 {
			open = ms[len(ms)-1]
			if open == reset || open == "\x1b[m" {
				open = ""
			}
		}
		if open != "" {
			l += reset
		}
		lines[i] = l
	}
	return lines
}
