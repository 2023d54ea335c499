package fileeditor

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gohands/gohands/event"
)

// Defaults of Options.
const (
	DefaultMaxFileSize  = 10 << 20 // bytes
	DefaultHistoryLimit = 10       // undo steps per file
)

// imageTypes maps the extensions view shows as images to their MIME types.
var imageTypes = map[string]string{
	".png":  "image/png",
	".jpg":  "image/jpeg",
	".jpeg": "image/jpeg",
	".gif":  "image/gif",
	".webp": "image/webp",
	".bmp":  "image/bmp",
}

// Options configures an Editor. A nil *Options is valid.
type Options struct {
	// WorkingDir is the workspace directory. A relative path the model sends
	// is rejected with a hint naming the absolute path under WorkingDir when
	// that exists. Empty means the process's working directory.
	WorkingDir string
	// MaxFileSize is the largest file, in bytes, that is read or edited.
	// Zero means DefaultMaxFileSize.
	MaxFileSize int64
	// HistoryLimit is how many edits of one file undo_edit can revert.
	// Zero means DefaultHistoryLimit.
	HistoryLimit int
}

// Editor executes file_editor actions. It keeps the undo history and one
// lock per file, so it is safe for concurrent use: actions on the same file
// (under any name that resolves to it) run one at a time, others in
// parallel. Call Close to delete the history.
type Editor struct {
	workingDir string
	maxSize    int64
	hist       history
	locks      pathLocks
}

// NewEditor returns an Editor configured by opts.
func NewEditor(opts *Options) *Editor {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.WorkingDir == "" {
		o.WorkingDir, _ = os.Getwd()
	}
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.HistoryLimit <= 0 {
		o.HistoryLimit = DefaultHistoryLimit
	}
	return &Editor{workingDir: o.WorkingDir, maxSize: o.MaxFileSize, hist: history{limit: o.HistoryLimit}}
}

// Close deletes the undo history.
func (e *Editor) Close() error { return e.hist.close() }

// toolError is a failure the model caused and can correct; it becomes an
// error observation with exactly this text.
type toolError struct{ msg string }

func (t *toolError) Error() string { return t.msg }

func failf(format string, args ...any) error {
	return &toolError{fmt.Sprintf(format, args...)}
}

// invalid reports a bad value of a parameter.
func invalid(param, value, hint string) error {
	return failf("Invalid `%s` parameter: %s. %s", param, value, hint)
}

// missing reports a parameter the command needs.
func missing(command, param string) error {
	return failf("Parameter `%s` is required for command: %s.", param, command)
}

// Execute runs one action. Everything the model got wrong, and every file
// system failure, is reported as an observation with IsError set; the error
// result is only ever ctx's error.
func (e *Editor) Execute(ctx context.Context, a *Action) (*Observation, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	obs, err := e.run(a)
	if err != nil {
		var te *toolError
		if !errors.As(err, &te) {
			// Unexpected failures still go to the model: it can often work
			// around them, and the conversation must not die of them.
			slog.Warn("file_editor: unexpected error", "command", a.Command, "path", a.Path, "err", err)
		}
		obs = &Observation{Command: a.Command, PrevExist: true}
		obs.Content = event.List[event.Content]{event.Text(err.Error())}
		obs.IsError = true
		if a.Path != "" {
			obs.Path = new(a.Path)
		}
	}
	return obs, nil
}

// target is a validated path: what to show and where the file really is.
type target struct {
	path string // as shown to the model (cleaned)
	real string // symlinks resolved; all I/O and the history use it
}

func (e *Editor) run(a *Action) (*Observation, error) {
	switch a.Command {
	case CommandView, CommandCreate, CommandStrReplace, CommandInsert, CommandUndoEdit:
	default:
		return nil, failf("Unrecognized command %q. The allowed commands for the %s tool are: %s.",
			a.Command, Name, strings.Join(Commands, ", "))
	}
	if !filepath.IsAbs(a.Path) {
		hint := "The path should be an absolute path."
		if a.Path != "" {
			if guess := filepath.Join(e.workingDir, a.Path); exists(guess) {
				hint += " Maybe you meant " + guess + "?"
			}
		}
		return nil, invalid("path", a.Path, hint)
	}
	// Strings decoded from JSON are always valid UTF-8; Go callers could
	// pass anything, and invalid bytes would silently change the file's
	// encoding.
	for _, p := range []struct {
		name string
		v    *string
	}{{"file_text", a.FileText}, {"old_str", a.OldStr}, {"new_str", a.NewStr}} {
		if p.v != nil && !utf8.ValidString(*p.v) {
			return nil, invalid(p.name, strconv.Quote(*p.v), "It is not valid UTF-8 text.")
		}
	}
	t := target{path: filepath.Clean(a.Path)}
	t.real = resolve(t.path)
	unlock := e.locks.lock(t.real)
	defer unlock()

	if a.Command == CommandCreate {
		return e.create(t, a.FileText)
	}
	fi, err := os.Stat(t.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, invalid("path", t.path, fmt.Sprintf("The path %s does not exist. Please provide a valid path.", t.path))
	case err != nil:
		return nil, failf("Cannot access %s: %v", t.path, unwrapPath(err))
	case fi.IsDir() && a.Command != CommandView:
		return nil, invalid("path", t.path, fmt.Sprintf("The path %s is a directory and only the `view` command can be used on directories.", t.path))
	case !fi.IsDir() && !fi.Mode().IsRegular():
		return nil, failf("%s is not a regular file (it is a %s); the %s tool only works on regular files and directories.", t.path, fileType(fi.Mode()), Name)
	}

	switch a.Command {
	case CommandView:
		if fi.IsDir() {
			return e.viewDir(t, a.ViewRange)
		}
		return e.viewFile(t, a.ViewRange)
	case CommandStrReplace:
		if a.OldStr == nil {
			return nil, missing(a.Command, "old_str")
		}
		if a.NewStr == nil {
			return nil, missing(a.Command, "new_str")
		}
		return e.strReplace(t, *a.OldStr, *a.NewStr)
	case CommandInsert:
		if a.InsertLine == nil {
			return nil, missing(a.Command, "insert_line")
		}
		if a.NewStr == nil {
			return nil, missing(a.Command, "new_str")
		}
		return e.insert(t, *a.InsertLine, *a.NewStr)
	default: // CommandUndoEdit
		return e.undo(t)
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// unwrapPath drops the "op path:" prefix of a *fs.PathError or
// *os.LinkError: our messages name the path already, and the temporary
// file's name would only confuse.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

func fileType(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// readRaw reads the file of t, refusing files over the size limit.
func (e *Editor) readRaw(t target) ([]byte, error) {
	f, err := os.Open(t.real)
	if err != nil {
		return nil, failf("Cannot read %s: %v", t.path, unwrapPath(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, failf("Cannot read %s: %v", t.path, unwrapPath(err))
	}
	if err := e.checkSize(t, fi.Size()); err != nil {
		return nil, err
	}
	// Read one byte past the limit to notice a file that grew meanwhile.
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, e.maxSize+1)); err != nil {
		return nil, failf("Cannot read %s: %v", t.path, unwrapPath(err))
	}
	if err := e.checkSize(t, int64(buf.Len())); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (e *Editor) checkSize(t target, size int64) error {
	if size <= e.maxSize {
		return nil
	}
	return failf("File validation failed for %s: File is too large (%s). Maximum allowed size is %s.",
		t.path, megabytes(size), megabytes(e.maxSize))
}

func megabytes(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%dMB", n>>20)
	}
	return fmt.Sprintf("%.1fMB", float64(n)/(1<<20))
}

// readText reads and decodes the text file of t.
func (e *Editor) readText(t target) (textFile, []byte, error) {
	b, err := e.readRaw(t)
	if err != nil {
		return textFile{}, nil, err
	}
	if bytes.HasPrefix(b, []byte{0xFF, 0xFE}) || bytes.HasPrefix(b, []byte{0xFE, 0xFF}) {
		return textFile{}, nil, failf("File validation failed for %s: File is encoded as UTF-16, which this tool cannot edit. Convert it to UTF-8 first (e.g. with iconv) or edit it with another tool.", t.path)
	}
	if isBinary(b) {
		return textFile{}, nil, failf("File validation failed for %s: File appears to be binary and this file type cannot be read or edited by this tool.", t.path)
	}
	return decode(b), b, nil
}

// checkWritable fails when the file of t exists but may not be written.
// The atomic rename would otherwise replace a read-only file as long as
// its directory is writable, ignoring the file's own permissions.
func checkWritable(t target) error {
	f, err := os.OpenFile(t.real, os.O_WRONLY, 0)
	if err != nil {
		return failf("Cannot write %s: %v", t.path, unwrapPath(err))
	}
	return f.Close()
}

// save writes text, edited from tf, to the file of t, and records before
// (the file's raw bytes before the edit) for undo_edit. It returns a note
// for the model when the history could not be kept.
func (e *Editor) save(t target, tf textFile, text string, before []byte) (note string, err error) {
	b, err := tf.encode(text)
	if err != nil {
		return "", failf("Cannot edit %s: %v.", t.path, err)
	}
	if err := checkWritable(t); err != nil {
		return "", err
	}
	if err := writeFile(t.real, b, false); err != nil {
		return "", failf("Cannot write %s: %v. The file was not changed.", t.path, unwrapPath(err))
	}
	if err := e.hist.push(t.real, before); err != nil {
		slog.Warn("file_editor: cannot save undo history", "path", t.path, "err", err)
		return fmt.Sprintf("\nNote: this edit cannot be undone with undo_edit (%v).", err), nil
	}
	return "", nil
}

func (e *Editor) create(t target, fileText *string) (*Observation, error) {
	if _, err := os.Lstat(t.path); err == nil {
		return nil, invalid("path", t.path, fmt.Sprintf("File already exists at: %s. Cannot overwrite files using command `create`.", t.path))
	}
	if fileText == nil {
		return nil, missing(CommandCreate, "file_text")
	}
	dir := filepath.Dir(t.real)
	switch fi, err := os.Stat(dir); {
	case errors.Is(err, fs.ErrNotExist):
		return nil, failf("Cannot create %s: the parent directory %s does not exist. Create it first, e.g. with `mkdir -p %s`.",
			t.path, filepath.Dir(t.path), filepath.Dir(t.path))
	case err != nil:
		return nil, failf("Cannot create %s: %v", t.path, unwrapPath(err))
	case !fi.IsDir():
		return nil, failf("Cannot create %s: %s is not a directory.", t.path, filepath.Dir(t.path))
	}
	switch err := writeFile(t.real, []byte(*fileText), true); {
	case errors.Is(err, errExists):
		return nil, invalid("path", t.path, fmt.Sprintf("File already exists at: %s. Cannot overwrite files using command `create`.", t.path))
	case err != nil:
		return nil, failf("Cannot create %s: %v", t.path, unwrapPath(err))
	}
	newContent := fileText
	if len(*fileText) >= event.LargeArgumentBytes {
		newContent = nil // the action holds it: stored once
	}
	return textObs(CommandCreate, t.path, false, nil, newContent, "File created successfully at: "+t.path), nil
}

// textObs builds a successful observation with one text block.
func textObs(command, path string, prevExist bool, oldContent, newContent *string, text string) *Observation {
	o := &Observation{Command: command, Path: new(path), PrevExist: prevExist, OldContent: oldContent, NewContent: newContent}
	o.Content = event.List[event.Content]{event.Text(text)}
	return o
}

func (e *Editor) viewFile(t target, viewRange []int) (*Observation, error) {
	if mime, ok := imageTypes[strings.ToLower(filepath.Ext(t.path))]; ok {
		b, err := e.readRaw(t)
		if err != nil {
			return nil, err
		}
		o := &Observation{Command: CommandView, Path: new(t.path), PrevExist: true}
		o.Content = event.List[event.Content]{
			event.Text(fmt.Sprintf("Image file %s read successfully. Displaying image content.", t.path)),
			event.Image("data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(b)),
		}
		return o, nil
	}
	tf, _, err := e.readText(t)
	if err != nil {
		return nil, err
	}
	lines := splitLines(tf.text)
	n := len(lines)
	header := fmt.Sprintf("Here's the result of running `cat -n` on %s:\n", t.path)
	if len(viewRange) == 0 {
		return textObs(CommandView, t.path, true, nil, nil, header+numbered(lines, 1)+"\n"), nil
	}
	vr := formatInts(viewRange)
	if len(viewRange) != 2 {
		return nil, invalid("view_range", vr, "It should be a list of two integers.")
	}
	start, end := viewRange[0], viewRange[1]
	if start < 1 || start > n {
		if n == 0 {
			return nil, invalid("view_range", vr, "The file is empty, so it has no lines to show; view it without view_range.")
		}
		return nil, invalid("view_range", vr, fmt.Sprintf("Its first element `%d` should be within the range of lines of the file: %s.", start, formatInts([]int{1, n})))
	}
	note := ""
	switch {
	case end == -1:
		end = n
	case end > n:
		note = fmt.Sprintf("NOTE: We only show up to %d since there're only %d lines in this file.\n", n, n)
		end = n
	case end < start:
		return nil, invalid("view_range", vr, fmt.Sprintf("Its second element `%d` should be greater than or equal to the first element `%d`.", end, start))
	}
	return textObs(CommandView, t.path, true, nil, nil, note+header+numbered(lines[start-1:end], start)+"\n"), nil
}

func (e *Editor) viewDir(t target, viewRange []int) (*Observation, error) {
	if len(viewRange) > 0 {
		return nil, invalid("view_range", formatInts(viewRange), "The `view_range` parameter is not allowed when `path` points to a directory.")
	}
	entries, err := os.ReadDir(t.path)
	if err != nil {
		return nil, failf("Cannot list %s: %v", t.path, unwrapPath(err))
	}
	root := t.path
	rows := []string{strings.TrimSuffix(root, "/") + "/"}
	if root == "/" {
		root = ""
	}
	hidden := 0
	for _, de := range entries {
		if strings.HasPrefix(de.Name(), ".") {
			hidden++
			continue
		}
		p := root + "/" + de.Name()
		if !isDir(p, de) {
			rows = append(rows, p)
			continue
		}
		rows = append(rows, p+"/")
		children, err := os.ReadDir(p)
		if err != nil {
			continue // shown as a directory, its content unknown, like ls -R
		}
		for _, c := range children {
			if strings.HasPrefix(c.Name(), ".") {
				continue
			}
			cp := p + "/" + c.Name()
			if isDir(cp, c) {
				cp += "/"
			}
			rows = append(rows, cp)
		}
	}
	text := fmt.Sprintf("Here's the files and directories up to 2 levels deep in %s, excluding hidden items:\n", t.path) +
		clipRows(rows, func(from, to int) string { return fmt.Sprintf(dirClippedNotice, to-from) })
	if hidden > 0 {
		text += fmt.Sprintf("\n\n%d hidden files/directories in this directory are excluded. You can use 'ls -la %s' to see them.", hidden, t.path)
	}
	return textObs(CommandView, t.path, true, nil, nil, text), nil
}

// isDir reports whether the entry at p is a directory, following symlinks.
func isDir(p string, de fs.DirEntry) bool {
	if de.Type()&fs.ModeSymlink == 0 {
		return de.IsDir()
	}
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// snippet numbers lines first..last (1-based, clamped) of text.
func snippet(lines []string, first, last int) string {
	first = max(first, 1)
	last = min(last, len(lines))
	if first > last {
		return ""
	}
	return numbered(lines[first-1:last], first)
}

func (e *Editor) strReplace(t target, oldStr, newStr string) (*Observation, error) {
	if oldStr == newStr {
		return nil, invalid("new_str", newStr, "No replacement was performed. `new_str` and `old_str` must be different.")
	}
	if oldStr == "" {
		return nil, invalid("old_str", "``", "No replacement was performed. `old_str` must not be empty; to add text without replacing any, use the `insert` command.")
	}
	tf, raw, err := e.readText(t)
	if err != nil {
		return nil, err
	}
	text := tf.text
	old, repl := tf.normalize(oldStr), tf.normalize(newStr)
	m := findMatches(text, old)
	if m.count == 0 {
		// The model often adds or drops surrounding blank lines or spaces:
		// retry with old_str trimmed. new_str is left as it is, since its
		// whitespace is what the model wants written.
		if s := strings.TrimSpace(old); s != "" && s != old {
			if m2 := findMatches(text, s); m2.count > 0 {
				old, m = s, m2
			}
		}
	}
	if m.count == 0 && !tf.crlf && !strings.Contains(text, "\r\n") && strings.Contains(old, "\r\n") {
		// CRLF from the model in a file with "\n" endings.
		lfOld := strings.ReplaceAll(old, "\r\n", "\n")
		if m2 := findMatches(text, lfOld); m2.count > 0 {
			old, m = lfOld, m2
			repl = strings.ReplaceAll(repl, "\r\n", "\n")
		}
	}
	if m.count == 0 && !tf.crlf && strings.Contains(text, "\r\n") && strings.Contains(old, "\n") {
		// A file with mixed line endings: try the CRLF form of both strings.
		crlfOld := strings.ReplaceAll(strings.ReplaceAll(old, "\r\n", "\n"), "\n", "\r\n")
		if m2 := findMatches(text, crlfOld); m2.count > 0 {
			old, m = crlfOld, m2
			repl = strings.ReplaceAll(strings.ReplaceAll(repl, "\r\n", "\n"), "\n", "\r\n")
		}
	}
	switch {
	case m.count == 0:
		return nil, failf("No replacement was performed, old_str `%s` did not appear verbatim in %s.", oldStr, t.path)
	case m.count > 1:
		return nil, failf("No replacement was performed. Multiple occurrences of old_str `%s` in lines %s. Please ensure it is unique.", oldStr, m.linesText())
	}
	newText := text[:m.first] + repl + text[m.first+len(old):]
	note, err := e.save(t, tf, newText, raw)
	if err != nil {
		return nil, err
	}
	line := m.lines[0]
	lines := splitLines(newText)
	msg := fmt.Sprintf("The file %s has been edited. Here's the result of running `cat -n` on a snippet of %s:\n%s\n"+
		"Review the changes and make sure they are as expected. Edit the file again if necessary.%s",
		t.path, t.path, snippet(lines, line-3, line+4+strings.Count(repl, "\n")), note)
	return textObs(CommandStrReplace, t.path, true, &text, &newText, msg), nil
}

// matches describes where a string occurs in a text.
type matches struct {
	count int   // occurrences, overlapping ones included; exact up to 2
	first int   // byte offset of the first occurrence
	lines []int // distinct 1-based lines where occurrences start, at most maxListed
	more  int   // distinct lines with occurrences beyond lines
}

const maxListed = 50

// findMatches finds every occurrence of sub in text. Overlapping
// occurrences count: in "aaa", "aa" is ambiguous.
func findMatches(text, sub string) matches {
	m := matches{first: -1}
	line, scanned, lastLine := 1, 0, 0
	for pos := 0; ; {
		i := strings.Index(text[pos:], sub)
		if i < 0 {
			return m
		}
		at := pos + i
		line += strings.Count(text[scanned:at], "\n")
		scanned = at
		if m.count == 0 {
			m.first = at
		}
		m.count++
		if line != lastLine {
			if len(m.lines) < maxListed {
				m.lines = append(m.lines, line)
			} else {
				m.more++
			}
			lastLine = line
		}
		if m.count >= 2 {
			// Ambiguous already: only the lines of further occurrences
			// matter, so go on from the next line. This bounds the work
			// by the number of lines, whatever the text.
			nl := strings.IndexByte(text[at:], '\n')
			if nl < 0 {
				return m
			}
			pos = at + nl + 1
			continue
		}
		// Step by one rune, not by len(sub), to see overlaps.
		pos = at + 1
		for pos < len(text) && !utf8RuneStart(text[pos]) {
			pos++
		}
	}
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

func (m matches) linesText() string {
	s := formatInts(m.lines)
	if m.more > 0 {
		s += fmt.Sprintf(" and %d more lines", m.more)
	}
	return s
}

func (e *Editor) insert(t target, insertLine int, newStr string) (*Observation, error) {
	tf, raw, err := e.readText(t)
	if err != nil {
		return nil, err
	}
	text := tf.text
	lines := splitLines(text)
	n := len(lines)
	if insertLine < 0 || insertLine > n {
		return nil, invalid("insert_line", fmt.Sprint(insertLine), "It should be within the range of allowed values: "+formatInts([]int{0, n}))
	}
	// new_str is a block of lines; its own final newline does not add an
	// empty line.
	ins := strings.Split(strings.TrimSuffix(tf.normalize(newStr), "\n"), "\n")
	out := make([]string, 0, n+len(ins))
	out = append(out, lines[:insertLine]...)
	out = append(out, ins...)
	out = append(out, lines[insertLine:]...)
	newText := strings.Join(out, "\n")
	if text == "" || strings.HasSuffix(text, "\n") {
		newText += "\n"
	}
	note, err := e.save(t, tf, newText, raw)
	if err != nil {
		return nil, err
	}
	m := len(ins)
	msg := fmt.Sprintf("The file %s has been edited. Here's the result of running `cat -n` on a snippet of the edited file:\n%s\n"+
		"Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary.%s",
		t.path, snippet(out, insertLine-3, min(n+m, insertLine+4+m)), note)
	return textObs(CommandInsert, t.path, true, &text, &newText, msg), nil
}

func (e *Editor) undo(t target) (*Observation, error) {
	if err := checkWritable(t); err != nil {
		return nil, err
	}
	// The current content is only for the observation's diff; a file that
	// became unreadable as text can still be restored.
	var current *string
	if tf, _, err := e.readText(t); err == nil {
		current = &tf.text
	}
	before, ok, err := e.hist.pop(t.real)
	if err != nil {
		return nil, failf("Cannot read the edit history of %s: %v", t.path, unwrapPath(err))
	}
	if !ok {
		return nil, failf("No edit history found for %s.", t.path)
	}
	if err := writeFile(t.real, before, false); err != nil {
		if perr := e.hist.unpop(t.real, before); perr != nil {
			slog.Warn("file_editor: cannot restore undo history", "path", t.path, "err", perr)
		}
		return nil, failf("Cannot write %s: %v. The file was not changed.", t.path, unwrapPath(err))
	}
	restored := decode(before).text
	msg := fmt.Sprintf("Last edit to %s undone successfully. Here's the result of running `cat -n` on %s:\n%s\n",
		t.path, t.path, numbered(splitLines(restored), 1))
	return textObs(CommandUndoEdit, t.path, true, current, &restored, msg), nil
}
