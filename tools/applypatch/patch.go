package applypatch

import (
	"fmt"
	"slices"
	"strings"
)

// PatchError is a patch the tool could not apply; its message is shown to
// the model as it is, and is the reference's wording.
type PatchError struct{ Msg string }

func (e *PatchError) Error() string { return e.Msg }

func patchErr(format string, args ...any) error {
	return &PatchError{Msg: fmt.Sprintf(format, args...)}
}

// Operations of a file change.
const (
	OpAdd    = "add"
	OpDelete = "delete"
	OpUpdate = "update"
)

// Markers of the patch format.
const (
	beginPatch = "*** Begin Patch"
	endPatch   = "*** End Patch"
	updateFile = "*** Update File: "
	deleteFile = "*** Delete File: "
	addFile    = "*** Add File: "
	moveTo     = "*** Move to: "
	endOfFile  = "*** End of File"
)

// chunk replaces delLines at line origIndex of a file with insLines.
type chunk struct {
	origIndex int
	delLines  []string
	insLines  []string
}

// fileOp is what a patch does to one file.
type fileOp struct {
	path    string
	op      string
	newFile string // for add
	chunks  []chunk
	moveTo  string // for update; "" when the file stays
}

// parser reads a patch's lines.
type parser struct {
	files map[string]string // the current text of the files to update or delete
	lines []string
	i     int
	ops   []*fileOp
	seen  map[string]bool
	fuzz  int
}

// hasPrefix reports whether the current line starts with one of prefixes.
func (p *parser) hasPrefix(prefixes ...string) bool {
	if p.i >= len(p.lines) {
		return false
	}
	for _, pre := range prefixes {
		if strings.HasPrefix(p.lines[p.i], pre) {
			return true
		}
	}
	return false
}

func (p *parser) done(prefixes ...string) bool {
	return p.i >= len(p.lines) || p.hasPrefix(prefixes...)
}

// take returns the rest of the current line after prefix and moves on, or
// "" (staying put) when the line does not start with prefix.
func (p *parser) take(prefix string) (string, error) {
	if p.i >= len(p.lines) {
		return "", patchErr("Unexpected end of patch at index %d", p.i)
	}
	if s, ok := strings.CutPrefix(p.lines[p.i], prefix); ok {
		p.i++
		return s, nil
	}
	return "", nil
}

// parse reads the file operations up to the end marker.
func parse(text string, files map[string]string) (ops []*fileOp, fuzz int, err error) {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], beginPatch) || lines[len(lines)-1] != endPatch {
		return nil, 0, patchErr("Invalid patch text")
	}
	p := &parser{files: files, lines: lines, i: 1, seen: make(map[string]bool)}
	for !p.done(endPatch) {
		if err := p.fileSection(); err != nil {
			return nil, 0, err
		}
	}
	if p.i >= len(p.lines) {
		return nil, 0, patchErr("Unexpected end of patch at index %d", p.i)
	}
	return p.ops, p.fuzz, nil
}

// fileSection reads one Update, Delete or Add section.
func (p *parser) fileSection() error {
	path, err := p.take(updateFile)
	if err != nil {
		return err
	}
	if path != "" {
		if p.seen[path] {
			return patchErr("Update File Error: Duplicate Path: %s", path)
		}
		to, err := p.take(moveTo)
		if err != nil {
			return err
		}
		if to != "" && (strings.HasPrefix(to, "/") || containsDotDot(to)) {
			return patchErr("Update File Error: Invalid move path '%s': must be a relative path without '..' components", to)
		}
		text, ok := p.files[path]
		if !ok {
			return patchErr("Update File Error: Missing File: %s", path)
		}
		op, err := p.updateSection(text)
		if err != nil {
			return err
		}
		op.path, op.moveTo = path, to
		p.add(op)
		return nil
	}
	if path, err = p.take(deleteFile); err != nil {
		return err
	}
	if path != "" {
		if p.seen[path] {
			return patchErr("Delete File Error: Duplicate Path: %s", path)
		}
		if _, ok := p.files[path]; !ok {
			return patchErr("Delete File Error: Missing File: %s", path)
		}
		p.add(&fileOp{path: path, op: OpDelete})
		return nil
	}
	if path, err = p.take(addFile); err != nil {
		return err
	}
	if path != "" {
		if p.seen[path] {
			return patchErr("Add File Error: Duplicate Path: %s", path)
		}
		var lines []string
		for !p.done(endPatch, updateFile, deleteFile, addFile) {
			s := p.lines[p.i]
			p.i++
			rest, ok := strings.CutPrefix(s, "+")
			if !ok {
				return patchErr("Invalid Add File Line: %s", s)
			}
			lines = append(lines, rest)
		}
		p.add(&fileOp{path: path, op: OpAdd, newFile: strings.Join(lines, "\n")})
		return nil
	}
	return patchErr("Unknown Line: %s", p.lines[p.i])
}

func (p *parser) add(op *fileOp) {
	p.seen[op.path] = true
	p.ops = append(p.ops, op)
}

func containsDotDot(path string) bool {
	for part := range strings.SplitSeq(path, "/") {
		if part == ".." {
			return true
		}
	}
	return false
}

// updateSection reads the hunks of an Update section against the file's
// text, locating each by its @@ anchor and context lines.
func (p *parser) updateSection(text string) (*fileOp, error) {
	op := &fileOp{op: OpUpdate}
	lines := strings.Split(text, "\n")
	index := 0 // the line of the file the next hunk is searched from
	for !p.done(endPatch, updateFile, deleteFile, addFile, endOfFile) {
		anchor, err := p.take("@@ ")
		if err != nil {
			return nil, err
		}
		bare := false
		if anchor == "" && p.i < len(p.lines) && p.lines[p.i] == "@@" {
			bare = true
			p.i++
		}
		if anchor == "" && !bare && index != 0 {
			if p.i >= len(p.lines) {
				return nil, patchErr("Unexpected end of patch at index %d", p.i)
			}
			return nil, patchErr("Invalid Line:\n%s", p.lines[p.i])
		}
		if strings.TrimSpace(anchor) != "" {
			index = p.seekAnchor(lines, anchor, index)
		}
		context, chunks, next, eof, err := peekSection(p.lines, p.i)
		if err != nil {
			return nil, err
		}
		at, fuzz := findContext(lines, context, index, eof)
		if at < 0 {
			ctx := strings.Join(context, "\n")
			if eof {
				return nil, patchErr("Invalid EOF Context %d:\n%s", index, ctx)
			}
			return nil, patchErr("Invalid Context %d:\n%s", index, ctx)
		}
		p.fuzz += fuzz
		for _, c := range chunks {
			c.origIndex += at
			op.chunks = append(op.chunks, c)
		}
		index = at + len(context)
		p.i = next
	}
	return op, nil
}

// seekAnchor moves index past the line an @@ anchor names, unless such a
// line was already passed: exactly first, then ignoring surrounding
// whitespace (which counts as fuzz).
func (p *parser) seekAnchor(lines []string, anchor string, index int) int {
	before := lines[:index]
	if !contains(before, func(s string) bool { return s == anchor }) {
		for i := index; i < len(lines); i++ {
			if lines[i] == anchor {
				return i + 1
			}
		}
	}
	trimmed := strings.TrimSpace(anchor)
	if !contains(before, func(s string) bool { return strings.TrimSpace(s) == trimmed }) {
		for i := index; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) == trimmed {
				p.fuzz++
				return i + 1
			}
		}
	}
	return index
}

func contains(lines []string, f func(string) bool) bool {
	return slices.ContainsFunc(lines, f)
}

// peekSection reads the lines of one hunk starting at index: the context
// they expect in the file (kept and deleted lines), the chunks of change
// (relative to that context), where the hunk ends and whether it is
// anchored at the end of the file.
func peekSection(lines []string, index int) (context []string, chunks []chunk, next int, eof bool, err error) {
	var del, ins []string
	start := index
	mode := ' '
	for index < len(lines) {
		s := lines[index]
		if strings.HasPrefix(s, "@@") || strings.HasPrefix(s, endPatch) || strings.HasPrefix(s, "*** Update File:") ||
			strings.HasPrefix(s, "*** Delete File:") || strings.HasPrefix(s, "*** Add File:") || strings.HasPrefix(s, endOfFile) {
			break
		}
		if s == "***" {
			break
		}
		if strings.HasPrefix(s, "***") {
			return nil, nil, 0, false, patchErr("Invalid Line: %s", s)
		}
		index++
		last := mode
		if s == "" {
			s = " " // an empty line is an empty context line
		}
		switch s[0] {
		case '+', '-', ' ':
			mode = rune(s[0])
		default:
			return nil, nil, 0, false, patchErr("Invalid Line: %s", s)
		}
		s = s[1:]
		if mode == ' ' && last != mode {
			if len(ins) > 0 || len(del) > 0 {
				chunks = append(chunks, chunk{origIndex: len(context) - len(del), delLines: del, insLines: ins})
			}
			del, ins = nil, nil
		}
		switch mode {
		case '-':
			del = append(del, s)
			context = append(context, s)
		case '+':
			ins = append(ins, s)
		default:
			context = append(context, s)
		}
	}
	if len(ins) > 0 || len(del) > 0 {
		chunks = append(chunks, chunk{origIndex: len(context) - len(del), delLines: del, insLines: ins})
	}
	if index < len(lines) && lines[index] == endOfFile {
		return context, chunks, index + 1, true, nil
	}
	if index == start {
		return nil, nil, 0, false, patchErr("Nothing in this section - index=%d %s", index, lines[index])
	}
	return context, chunks, index, false, nil
}

// findContext finds context in lines at or after start: exactly, then
// ignoring trailing whitespace (fuzz 1), then surrounding whitespace (fuzz
// 100). A hunk anchored at the end of the file is first looked for there;
// found elsewhere it costs 10000 fuzz.
func findContext(lines, context []string, start int, eof bool) (int, int) {
	if eof {
		if at, fuzz := findContextFrom(lines, context, len(lines)-len(context)); at >= 0 {
			return at, fuzz
		}
		at, fuzz := findContextFrom(lines, context, start)
		return at, fuzz + 10000
	}
	return findContextFrom(lines, context, start)
}

func findContextFrom(lines, context []string, start int) (int, int) {
	if len(context) == 0 {
		return start, 0
	}
	start = max(start, 0) // a context longer than the file matches nowhere
	for _, pass := range []struct {
		norm func(string) string
		fuzz int
	}{
		{func(s string) string { return s }, 0},
		{func(s string) string { return strings.TrimRight(s, " \t\n\r\f\v") }, 1},
		{strings.TrimSpace, 100},
	} {
		for i := start; i+len(context) <= len(lines); i++ {
			match := true
			for j, c := range context {
				if pass.norm(lines[i+j]) != pass.norm(c) {
					match = false
					break
				}
			}
			if match {
				return i, pass.fuzz
			}
		}
	}
	return -1, 0
}

// updated returns text with op's chunks applied.
func updated(text string, op *fileOp) (string, error) {
	orig := strings.Split(text, "\n")
	var dest []string
	at := 0
	for _, c := range op.chunks {
		if c.origIndex > len(orig) {
			return "", patchErr("_get_updated_file: %s: chunk.orig_index %d > len(lines) %d", op.path, c.origIndex, len(orig))
		}
		if at > c.origIndex {
			return "", patchErr("_get_updated_file: %s: orig_index %d > chunk.orig_index %d", op.path, at, c.origIndex)
		}
		dest = append(dest, orig[at:c.origIndex]...)
		dest = append(dest, c.insLines...)
		at = c.origIndex + len(c.delLines)
	}
	if at > len(orig) {
		return "", patchErr("_get_updated_file: %s: a hunk deletes past the end of the file", op.path)
	}
	dest = append(dest, orig[at:]...)
	return strings.Join(dest, "\n"), nil
}

// filesNeeded returns the paths a patch updates or deletes, which must be
// read before it is parsed.
func filesNeeded(text string) []string {
	var paths []string
	seen := make(map[string]bool)
	for line := range strings.SplitSeq(strings.TrimSpace(text), "\n") {
		for _, pre := range []string{updateFile, deleteFile} {
			if p, ok := strings.CutPrefix(line, pre); ok && !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
	}
	return paths
}
