package fileeditor

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/gohands/gohands/event"

	"golang.org/x/sys/unix"
)

// fixture is an Editor over a fresh temporary directory.
type fixture struct {
	t   *testing.T
	ed  *Editor
	dir string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	// Resolve the directory so paths in messages match what the editor
	// shows (t.TempDir may sit under a symlink on some systems).
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	ed := NewEditor(&Options{WorkingDir: dir})
	t.Cleanup(func() {
		if err := ed.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return &fixture{t: t, ed: ed, dir: dir}
}

func (f *fixture) path(name string) string { return filepath.Join(f.dir, name) }

func (f *fixture) write(name string, data string, perm os.FileMode) string {
	f.t.Helper()
	p := f.path(name)
	if err := os.WriteFile(p, []byte(data), perm); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil { // undo the umask
		f.t.Fatal(err)
	}
	return p
}

func (f *fixture) read(p string) string {
	f.t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}

func (f *fixture) run(a Action) *Observation {
	f.t.Helper()
	obs, err := f.ed.Execute(context.Background(), &a)
	if err != nil {
		f.t.Fatalf("Execute(%+v): %v", a, err)
	}
	if obs.Command != a.Command {
		f.t.Errorf("observation command = %q, want %q", obs.Command, a.Command)
	}
	return obs
}

// ok runs a and returns its text, failing the test on an error observation.
func (f *fixture) ok(a Action) string {
	f.t.Helper()
	obs := f.run(a)
	text := event.TextOf(obs.Content)
	if obs.IsError {
		f.t.Fatalf("%s %s: unexpected error: %s", a.Command, a.Path, text)
	}
	return text
}

// fail runs a, which must fail with a message containing each of want.
func (f *fixture) fail(a Action, want ...string) string {
	f.t.Helper()
	obs := f.run(a)
	text := event.TextOf(obs.Content)
	if !obs.IsError {
		f.t.Fatalf("%s %s: succeeded, want an error containing %q; got:\n%s", a.Command, a.Path, want, text)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			f.t.Errorf("%s %s: error %q does not contain %q", a.Command, a.Path, text, w)
		}
	}
	// What the model sees starts with the error header.
	if got := event.TextOf(event.ObservationContent(obs)); !strings.HasPrefix(got, event.ErrorHeader) {
		f.t.Errorf("LLM text of an error lacks the header: %q", got)
	}
	return text
}

// unchanged checks that the file at p still holds want, byte for byte.
func (f *fixture) unchanged(p, want string) {
	f.t.Helper()
	if got := f.read(p); got != want {
		f.t.Errorf("%s changed:\n got %q\nwant %q", p, got, want)
	}
}

// noTempFiles checks that no temporary file was left in the directory.
func (f *fixture) noTempFiles() {
	f.t.Helper()
	entries, err := os.ReadDir(f.dir)
	if err != nil {
		f.t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			f.t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestViewFile(t *testing.T) {
	f := newFixture(t)
	p := f.write("a.txt", "héllo\n\twörld 日本\n\nlast\n", 0o644)
	got := f.ok(Action{Command: CommandView, Path: p})
	want := "Here's the result of running `cat -n` on " + p + ":\n" +
		"     1\théllo\n     2\t\twörld 日本\n     3\t\n     4\tlast\n"
	if got != want {
		t.Errorf("view:\n got %q\nwant %q", got, want)
	}
	obs := f.run(Action{Command: CommandView, Path: p})
	if obs.Path == nil || *obs.Path != p || !obs.PrevExist || obs.OldContent != nil || obs.NewContent != nil {
		t.Errorf("view observation fields: %+v", obs)
	}
}

func TestViewEmptyAndNoFinalNewline(t *testing.T) {
	f := newFixture(t)
	p := f.write("empty", "", 0o644)
	if got, want := f.ok(Action{Command: CommandView, Path: p}), "Here's the result of running `cat -n` on "+p+":\n\n"; got != want {
		t.Errorf("empty file: got %q want %q", got, want)
	}
	f.fail(Action{Command: CommandView, Path: p, ViewRange: []int{1, 1}}, "The file is empty")
	p = f.write("nonl", "a\nb", 0o644)
	if got := f.ok(Action{Command: CommandView, Path: p}); !strings.HasSuffix(got, "     1\ta\n     2\tb\n") {
		t.Errorf("no final newline: %q", got)
	}
}

func TestViewRange(t *testing.T) {
	f := newFixture(t)
	p := f.write("five.txt", "one\ntwo\nthree\nfour\nfive\n", 0o644)
	header := "Here's the result of running `cat -n` on " + p + ":\n"
	for _, c := range []struct {
		r    []int
		want string
	}{
		{[]int{2, 3}, header + "     2\ttwo\n     3\tthree\n"},
		{[]int{4, -1}, header + "     4\tfour\n     5\tfive\n"},
		{[]int{5, 5}, header + "     5\tfive\n"},
		{[]int{4, 9}, "NOTE: We only show up to 5 since there're only 5 lines in this file.\n" + header + "     4\tfour\n     5\tfive\n"},
	} {
		if got := f.ok(Action{Command: CommandView, Path: p, ViewRange: c.r}); got != c.want {
			t.Errorf("view_range %v:\n got %q\nwant %q", c.r, got, c.want)
		}
	}
	f.fail(Action{Command: CommandView, Path: p, ViewRange: []int{0, 2}}, "Invalid `view_range` parameter: [0, 2].", "first element `0`", "[1, 5]")
	f.fail(Action{Command: CommandView, Path: p, ViewRange: []int{6, -1}}, "first element `6`", "[1, 5]")
	f.fail(Action{Command: CommandView, Path: p, ViewRange: []int{3, 2}}, "second element `2`", "first element `3`")
	f.fail(Action{Command: CommandView, Path: p, ViewRange: []int{3, -2}}, "second element `-2`")
	f.fail(Action{Command: CommandView, Path: p, ViewRange: []int{1}}, "Invalid `view_range` parameter: [1].", "two integers")
	f.fail(Action{Command: CommandView, Path: p, ViewRange: []int{1, 2, 3}}, "two integers")
}

func TestViewTruncatesKeepingLineNumbers(t *testing.T) {
	f := newFixture(t)
	var b strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&b, "line number %d of the file\n", i)
	}
	p := f.write("long.txt", b.String(), 0o644)
	got := f.ok(Action{Command: CommandView, Path: p})
	if n := len([]rune(got)); n > maxOutput+200 {
		t.Errorf("output is %d characters, want at most about %d", n, maxOutput)
	}
	for _, want := range []string{"     1\tline number 1 of the file\n", "  5000\tline number 5000 of the file\n", "<response clipped>", "view_range"} {
		if !strings.Contains(got, want) {
			t.Errorf("clipped view lacks %q", want)
		}
	}
	// The notice names exactly the lines left out: the line before it and
	// the line after it bracket the range.
	var from, to int
	i := strings.Index(got, "<response clipped>")
	if _, err := fmt.Sscanf(got[i:], "<response clipped><NOTE>Lines %d to %d", &from, &to); err != nil {
		t.Fatalf("notice: %v in %q", err, got[i:i+100])
	}
	before := got[:i]
	before = before[strings.LastIndex(before[:len(before)-1], "\n")+1:]
	after := got[i:]
	after = after[strings.Index(after, "\n")+1:]
	if want := fmt.Sprintf("%6d\t", from-1); !strings.HasPrefix(before, want) {
		t.Errorf("line before the notice is %q, want number %d", before, from-1)
	}
	if want := fmt.Sprintf("%6d\t", to+1); !strings.HasPrefix(after, want) {
		t.Errorf("line after the notice is %q, want number %d", after[:20], to+1)
	}

	// One enormous line is cut too.
	p = f.write("minified.js", strings.Repeat("x", 100000)+"\n", 0o644)
	got = f.ok(Action{Command: CommandView, Path: p})
	if len(got) > maxOutput || !strings.Contains(got, "line truncated") {
		t.Errorf("huge single line: %d bytes, %q...", len(got), got[:80])
	}
}

func TestViewDirectory(t *testing.T) {
	f := newFixture(t)
	for _, d := range []string{"src/pkg/deep", "docs", ".git/objects", "src/.cache"} {
		if err := os.MkdirAll(f.path(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"README.md", ".env", "src/main.go", "src/pkg/x.go", "src/pkg/deep/y.go", "src/.hidden", "docs/guide.md"} {
		f.write(name, "x\n", 0o644)
	}
	if err := os.Symlink(f.path("docs"), f.path("linked")); err != nil {
		t.Fatal(err)
	}
	got := f.ok(Action{Command: CommandView, Path: f.dir + "/"})
	d := f.dir
	want := "Here's the files and directories up to 2 levels deep in " + d + ", excluding hidden items:\n" +
		d + "/\n" +
		d + "/README.md\n" +
		d + "/docs/\n" +
		d + "/docs/guide.md\n" +
		d + "/linked/\n" +
		d + "/linked/guide.md\n" +
		d + "/src/\n" +
		d + "/src/main.go\n" +
		d + "/src/pkg/\n" +
		"\n2 hidden files/directories in this directory are excluded. You can use 'ls -la " + d + "' to see them."
	if got != want {
		t.Errorf("directory view:\n got %s\nwant %s", got, want)
	}
	f.fail(Action{Command: CommandView, Path: f.dir, ViewRange: []int{1, 2}}, "`view_range` parameter is not allowed")
	for _, cmd := range []string{CommandStrReplace, CommandInsert, CommandUndoEdit} {
		f.fail(Action{Command: cmd, Path: f.dir, OldStr: new("a"), NewStr: new("b"), InsertLine: new(0)}, "is a directory and only the `view` command")
	}
}

func TestViewDirectoryTruncates(t *testing.T) {
	f := newFixture(t)
	for i := range 2000 {
		f.write(fmt.Sprintf("file-with-a-longish-name-%04d.txt", i), "", 0o644)
	}
	got := f.ok(Action{Command: CommandView, Path: f.dir})
	if len(got) > maxOutput+500 || !strings.Contains(got, "<response clipped>") || !strings.Contains(got, "file-with-a-longish-name-1999.txt") {
		t.Errorf("clipped directory view: %d bytes", len(got))
	}
}

// pngBytes is a real 1x1 PNG.
var pngBytes, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")

func TestViewImage(t *testing.T) {
	f := newFixture(t)
	for name, mime := range map[string]string{"pic.png": "image/png", "PHOTO.JPG": "image/jpeg", "a.webp": "image/webp"} {
		p := f.write(name, string(pngBytes), 0o644)
		obs := f.run(Action{Command: CommandView, Path: p})
		if obs.IsError || len(obs.Content) != 2 {
			t.Fatalf("%s: %+v", name, obs)
		}
		if got, want := obs.Content[0].Text, "Image file "+p+" read successfully. Displaying image content."; got != want {
			t.Errorf("%s text = %q", name, got)
		}
		img := obs.Content[1]
		want := "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(pngBytes)
		if img.Type != event.ContentImage || len(img.ImageURLs) != 1 || img.ImageURLs[0] != want {
			t.Errorf("%s image = %+v", name, img)
		}
	}
	// Binary content is still refused for editing under an image name.
	p := f.path("pic.png")
	f.fail(Action{Command: CommandStrReplace, Path: p, OldStr: new("PNG"), NewStr: new("GIF")}, "binary")
	f.unchanged(p, string(pngBytes))
}

func TestCreate(t *testing.T) {
	f := newFixture(t)
	p := f.path("new.go")
	obs := f.run(Action{Command: CommandCreate, Path: p, FileText: new("package main\n// ✓\n")})
	if obs.IsError || event.TextOf(obs.Content) != "File created successfully at: "+p {
		t.Fatalf("create: %+v", obs)
	}
	if obs.PrevExist || obs.NewContent == nil || *obs.NewContent != "package main\n// ✓\n" || obs.OldContent != nil {
		t.Errorf("create observation: prev_exist=%v new=%v old=%v", obs.PrevExist, obs.NewContent, obs.OldContent)
	}
	f.unchanged(p, "package main\n// ✓\n")
	fi, _ := os.Stat(p)
	if want := os.FileMode(0o666) &^ umask; fi.Mode().Perm() != want {
		t.Errorf("new file mode %v, want %v (0666 less umask)", fi.Mode().Perm(), want)
	}

	f.fail(Action{Command: CommandCreate, Path: p, FileText: new("other")}, "File already exists at: "+p, "Cannot overwrite")
	f.unchanged(p, "package main\n// ✓\n")
	f.fail(Action{Command: CommandCreate, Path: f.path("x.txt")}, "Parameter `file_text` is required for command: create.")
	f.fail(Action{Command: CommandCreate, Path: f.path("no/such/dir/x.txt"), FileText: new("x")}, "parent directory "+f.path("no/such/dir")+" does not exist", "mkdir -p")
	if exists(f.path("no")) {
		t.Error("create made parent directories")
	}
	f.write("plain", "x", 0o644)
	f.fail(Action{Command: CommandCreate, Path: f.path("plain/x.txt"), FileText: new("x")}, "is not a directory")
	// An empty file is a valid create.
	f.ok(Action{Command: CommandCreate, Path: f.path("empty"), FileText: new("")})
	f.unchanged(f.path("empty"), "")
	// A dangling symlink is an existing path: create does not write through it.
	if err := os.Symlink(f.path("nowhere"), f.path("dangling")); err != nil {
		t.Fatal(err)
	}
	f.fail(Action{Command: CommandCreate, Path: f.path("dangling"), FileText: new("x")}, "File already exists")
	if exists(f.path("nowhere")) {
		t.Error("create wrote through a dangling symlink")
	}
	f.noTempFiles()
}

func TestPathErrors(t *testing.T) {
	f := newFixture(t)
	f.write("rel.txt", "x\n", 0o644)
	f.fail(Action{Command: CommandView, Path: "rel.txt"}, "Invalid `path` parameter: rel.txt. The path should be an absolute path. Maybe you meant "+f.path("rel.txt")+"?")
	text := f.fail(Action{Command: CommandView, Path: "missing.txt"}, "The path should be an absolute path.")
	if strings.Contains(text, "Maybe") {
		t.Errorf("suggested a path that does not exist: %q", text)
	}
	f.fail(Action{Command: CommandView, Path: ""}, "absolute path")
	missingPath := f.path("missing.txt")
	for _, cmd := range []string{CommandView, CommandStrReplace, CommandInsert, CommandUndoEdit} {
		f.fail(Action{Command: cmd, Path: missingPath}, "The path "+missingPath+" does not exist. Please provide a valid path.")
	}
	f.fail(Action{Command: "delete", Path: missingPath}, `Unrecognized command "delete"`, "view, create, str_replace, insert, undo_edit")

	fifo := f.path("fifo")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	f.fail(Action{Command: CommandView, Path: fifo}, "not a regular file", "named pipe")
}

func TestStrReplace(t *testing.T) {
	f := newFixture(t)
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	orig := b.String()
	p := f.write("a.txt", orig, 0o644)
	obs := f.run(Action{Command: CommandStrReplace, Path: p, OldStr: new("line 10\n"), NewStr: new("ten\nTEN\n")})
	text := event.TextOf(obs.Content)
	want := "The file " + p + " has been edited. Here's the result of running `cat -n` on a snippet of " + p + ":\n" +
		"     7\tline 7\n     8\tline 8\n     9\tline 9\n    10\tten\n    11\tTEN\n    12\tline 11\n    13\tline 12\n    14\tline 13\n    15\tline 14\n    16\tline 15\n" +
		"Review the changes and make sure they are as expected. Edit the file again if necessary."
	if obs.IsError || text != want {
		t.Fatalf("str_replace:\n got %q\nwant %q", text, want)
	}
	newText := strings.Replace(orig, "line 10\n", "ten\nTEN\n", 1)
	f.unchanged(p, newText)
	if obs.OldContent == nil || *obs.OldContent != orig || obs.NewContent == nil || *obs.NewContent != newText || !obs.PrevExist {
		t.Errorf("old/new content not reported: %+v", obs)
	}

	// Several matches: no change, and the lines of every match.
	f.fail(Action{Command: CommandStrReplace, Path: p, OldStr: new("line 1"), NewStr: new("x")},
		"No replacement was performed. Multiple occurrences of old_str `line 1` in lines [1, 12, 13, 14, 15, 16, 17, 18, 19, 20]. Please ensure it is unique.")
	// No match.
	f.fail(Action{Command: CommandStrReplace, Path: p, OldStr: new("line 99"), NewStr: new("x")},
		"No replacement was performed, old_str `line 99` did not appear verbatim in "+p+".")
	f.fail(Action{Command: CommandStrReplace, Path: p, OldStr: new("ten"), NewStr: new("ten")}, "`new_str` and `old_str` must be different")
	f.fail(Action{Command: CommandStrReplace, Path: p, OldStr: new(""), NewStr: new("x")}, "`old_str` must not be empty")
	f.fail(Action{Command: CommandStrReplace, Path: p, NewStr: new("x")}, "Parameter `old_str` is required for command: str_replace.")
	f.fail(Action{Command: CommandStrReplace, Path: p, OldStr: new("ten")}, "Parameter `new_str` is required for command: str_replace.")
	f.unchanged(p, newText)

	// Surrounding whitespace the model added is forgiven; new_str is kept whole.
	f.ok(Action{Command: CommandStrReplace, Path: p, OldStr: new("\n  line 20  \n\n"), NewStr: new("  twenty  ")})
	f.unchanged(p, strings.Replace(newText, "line 20", "  twenty  ", 1))

	// An empty new_str deletes.
	f.ok(Action{Command: CommandStrReplace, Path: p, OldStr: new("TEN\n"), NewStr: new("")})
	if strings.Contains(f.read(p), "TEN") {
		t.Error("empty new_str did not delete old_str")
	}
	f.noTempFiles()
}

func TestStrReplaceOverlapsAndMultibyte(t *testing.T) {
	f := newFixture(t)
	p := f.write("o.txt", "aaa\n", 0o644)
	f.fail(Action{Command: CommandStrReplace, Path: p, OldStr: new("aa"), NewStr: new("b")}, "Multiple occurrences", "in lines [1]")
	p = f.write("u.txt", "ééé\nçà\n", 0o644)
	f.fail(Action{Command: CommandStrReplace, Path: p, OldStr: new("éé"), NewStr: new("e")}, "Multiple occurrences")
	f.ok(Action{Command: CommandStrReplace, Path: p, OldStr: new("çà"), NewStr: new("ça")})
	f.unchanged(p, "ééé\nça\n")
}

func TestStrReplaceManyMatchesListed(t *testing.T) {
	f := newFixture(t)
	p := f.write("m.txt", strings.Repeat("x\n", 200), 0o644)
	f.fail(Action{Command: CommandStrReplace, Path: p, OldStr: new("x"), NewStr: new("y")}, "in lines [1, 2, 3,", "50] and 150 more lines")

	// Millions of overlapping occurrences on few lines: the search stops
	// counting once the answer is "ambiguous" (visiting every overlap
	// would compare billions of bytes).
	p = f.write("a.txt", strings.Repeat("a", 4<<20)+"\n"+strings.Repeat("a", 1000)+"\nb\n", 0o644)
	f.fail(Action{Command: CommandStrReplace, Path: p, OldStr: new(strings.Repeat("a", 500)), NewStr: new("b")}, "in lines [1, 2].")
}

func TestInsert(t *testing.T) {
	f := newFixture(t)
	p := f.write("i.txt", "a\nb\nc\n", 0o644)
	obs := f.run(Action{Command: CommandInsert, Path: p, InsertLine: new(1), NewStr: new("x\ny")})
	text := event.TextOf(obs.Content)
	want := "The file " + p + " has been edited. Here's the result of running `cat -n` on a snippet of the edited file:\n" +
		"     1\ta\n     2\tx\n     3\ty\n     4\tb\n     5\tc\n" +
		"Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary."
	if obs.IsError || text != want {
		t.Fatalf("insert:\n got %q\nwant %q", text, want)
	}
	f.unchanged(p, "a\nx\ny\nb\nc\n")
	if *obs.OldContent != "a\nb\nc\n" || *obs.NewContent != "a\nx\ny\nb\nc\n" {
		t.Errorf("old/new content: %q %q", *obs.OldContent, *obs.NewContent)
	}
	f.ok(Action{Command: CommandInsert, Path: p, InsertLine: new(0), NewStr: new("top\n")}) // final "\n" adds no blank line
	f.ok(Action{Command: CommandInsert, Path: p, InsertLine: new(6), NewStr: new("end")})
	f.unchanged(p, "top\na\nx\ny\nb\nc\nend\n")
	f.fail(Action{Command: CommandInsert, Path: p, InsertLine: new(8), NewStr: new("z")}, "Invalid `insert_line` parameter: 8. It should be within the range of allowed values: [0, 7]")
	f.fail(Action{Command: CommandInsert, Path: p, InsertLine: new(-1), NewStr: new("z")}, "Invalid `insert_line` parameter: -1.")
	f.fail(Action{Command: CommandInsert, Path: p, NewStr: new("z")}, "Parameter `insert_line` is required for command: insert.")
	f.fail(Action{Command: CommandInsert, Path: p, InsertLine: new(0)}, "Parameter `new_str` is required for command: insert.")
	f.unchanged(p, "top\na\nx\ny\nb\nc\nend\n")

	// Into an empty file.
	p = f.write("e.txt", "", 0o644)
	f.ok(Action{Command: CommandInsert, Path: p, InsertLine: new(0), NewStr: new("first")})
	f.unchanged(p, "first\n")

	// The snippet is clamped to the file: a long file shows 3 lines before.
	p = f.write("long.txt", strings.Repeat("l\n", 30), 0o644)
	got := f.ok(Action{Command: CommandInsert, Path: p, InsertLine: new(10), NewStr: new("new")})
	if !strings.Contains(got, ":\n     7\tl\n") || !strings.Contains(got, "    11\tnew\n") || !strings.Contains(got, "    15\tl\nReview") {
		t.Errorf("insert snippet: %q", got)
	}
}

func TestNoFinalNewlineKept(t *testing.T) {
	f := newFixture(t)
	p := f.write("n.txt", "a\nb", 0o644)
	f.ok(Action{Command: CommandStrReplace, Path: p, OldStr: new("b"), NewStr: new("B")})
	f.unchanged(p, "a\nB")
	f.ok(Action{Command: CommandInsert, Path: p, InsertLine: new(2), NewStr: new("c")})
	f.unchanged(p, "a\nB\nc")
	f.ok(Action{Command: CommandInsert, Path: p, InsertLine: new(1), NewStr: new("mid")})
	f.unchanged(p, "a\nmid\nB\nc")
}

func TestCRLF(t *testing.T) {
	f := newFixture(t)
	p := f.write("w.txt", "one\r\ntwo\r\nthree\r\n", 0o644)
	got := f.ok(Action{Command: CommandView, Path: p})
	if strings.Contains(got, "\r") || !strings.Contains(got, "     2\ttwo\n") {
		t.Errorf("view of a CRLF file: %q", got)
	}
	// old_str and new_str written with "\n" match and keep CRLF.
	obs := f.run(Action{Command: CommandStrReplace, Path: p, OldStr: new("one\ntwo\n"), NewStr: new("1\n2\n2b\n")})
	if obs.IsError {
		t.Fatal(event.TextOf(obs.Content))
	}
	f.unchanged(p, "1\r\n2\r\n2b\r\nthree\r\n")
	// "\r\n" from the model works as well.
	f.ok(Action{Command: CommandStrReplace, Path: p, OldStr: new("2b\r\nthree"), NewStr: new("3\r\nfour")})
	f.unchanged(p, "1\r\n2\r\n3\r\nfour\r\n")
	f.ok(Action{Command: CommandInsert, Path: p, InsertLine: new(4), NewStr: new("five\nsix")})
	f.unchanged(p, "1\r\n2\r\n3\r\nfour\r\nfive\r\nsix\r\n")
	// Undo restores the exact bytes.
	f.ok(Action{Command: CommandUndoEdit, Path: p})
	f.unchanged(p, "1\r\n2\r\n3\r\nfour\r\n")

	// CRLF without a final newline.
	p = f.write("w2.txt", "a\r\nb", 0o644)
	f.ok(Action{Command: CommandInsert, Path: p, InsertLine: new(2), NewStr: new("c")})
	f.unchanged(p, "a\r\nb\r\nc")

	// Mixed endings are left as they are; a "\n" old_str still finds a
	// CRLF region.
	p = f.write("mixed.txt", "unix\nwin1\r\nwin2\r\n", 0o644)
	f.ok(Action{Command: CommandStrReplace, Path: p, OldStr: new("win1\nwin2"), NewStr: new("w1\nw2")})
	f.unchanged(p, "unix\nw1\r\nw2\r\n")
}

func TestBOM(t *testing.T) {
	f := newFixture(t)
	p := f.write("bom.txt", "\xEF\xBB\xBFfirst\nsecond\n", 0o644)
	if got := f.ok(Action{Command: CommandView, Path: p}); strings.Contains(got, "\uFEFF") || !strings.Contains(got, "     1\tfirst\n") {
		t.Errorf("view shows the BOM: %q", got)
	}
	f.ok(Action{Command: CommandStrReplace, Path: p, OldStr: new("first"), NewStr: new("premier")})
	f.unchanged(p, "\xEF\xBB\xBFpremier\nsecond\n")
	f.ok(Action{Command: CommandInsert, Path: p, InsertLine: new(0), NewStr: new("zéro")})
	f.unchanged(p, "\xEF\xBB\xBFzéro\npremier\nsecond\n")
}

func TestLatin1(t *testing.T) {
	f := newFixture(t)
	orig := "caf\xE9 cr\xE8me\nna\xEFve \xA9 2024\n" // ISO-8859-1
	p := f.write("l1.txt", orig, 0o644)
	if got := f.ok(Action{Command: CommandView, Path: p}); !strings.Contains(got, "     1\tcafé crème\n") || !strings.Contains(got, "naïve © 2024") {
		t.Errorf("Latin-1 view: %q", got)
	}
	f.ok(Action{Command: CommandStrReplace, Path: p, OldStr: new("café"), NewStr: new("thé")})
	f.unchanged(p, "th\xE9 cr\xE8me\nna\xEFve \xA9 2024\n")
	// A character Latin-1 lacks is refused and nothing is lost.
	f.fail(Action{Command: CommandStrReplace, Path: p, OldStr: new("2024"), NewStr: new("2024 €")}, "ISO-8859-1", "U+20AC", "not changed")
	f.fail(Action{Command: CommandInsert, Path: p, InsertLine: new(0), NewStr: new("→")}, "ISO-8859-1")
	f.unchanged(p, "th\xE9 cr\xE8me\nna\xEFve \xA9 2024\n")
	f.ok(Action{Command: CommandUndoEdit, Path: p})
	f.unchanged(p, orig)
}

func TestRefusesHugeAndBinary(t *testing.T) {
	f := newFixture(t)
	huge := f.path("huge.txt")
	data := bytes.Repeat([]byte("0123456789abcdef\n"), (DefaultMaxFileSize/17)+100)
	if err := os.WriteFile(huge, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, a := range []Action{
		{Command: CommandView, Path: huge},
		{Command: CommandView, Path: huge, ViewRange: []int{1, 2}},
		{Command: CommandStrReplace, Path: huge, OldStr: new("0123"), NewStr: new("x")},
		{Command: CommandInsert, Path: huge, InsertLine: new(0), NewStr: new("x")},
	} {
		f.fail(a, "File validation failed for "+huge+": File is too large (10.0MB). Maximum allowed size is 10MB.")
	}
	if got, _ := os.ReadFile(huge); !bytes.Equal(got, data) {
		t.Error("huge file changed")
	}

	bin := f.write("prog.bin", "\x7fELF\x02\x01\x01\x00\x00\x00text", 0o644)
	ctrl := f.write("ctrl.dat", strings.Repeat("\x01\x02\x03ab", 100), 0o644)
	for _, p := range []string{bin, ctrl} {
		f.fail(Action{Command: CommandView, Path: p}, "File validation failed for "+p+": File appears to be binary")
		f.fail(Action{Command: CommandStrReplace, Path: p, OldStr: new("a"), NewStr: new("b")}, "binary")
	}
	f.unchanged(bin, "\x7fELF\x02\x01\x01\x00\x00\x00text")
	utf16 := f.write("u16.txt", "\xFF\xFEh\x00i\x00\n\x00", 0o644)
	f.fail(Action{Command: CommandView, Path: utf16}, "UTF-16", "Convert it to UTF-8")
	// Text with a few control characters (ANSI colours, form feeds) is text.
	f.ok(Action{Command: CommandView, Path: f.write("log.txt", "\x1b[31mred\x1b[0m\n\fpage\n", 0o644)})
}

func TestPermissionsKept(t *testing.T) {
	f := newFixture(t)
	for _, perm := range []os.FileMode{0o755, 0o600, 0o640} {
		p := f.write(fmt.Sprintf("p%o.sh", perm), "echo a\n", perm)
		f.ok(Action{Command: CommandStrReplace, Path: p, OldStr: new("a"), NewStr: new("b")})
		f.ok(Action{Command: CommandInsert, Path: p, InsertLine: new(0), NewStr: new("#!/bin/sh")})
		f.ok(Action{Command: CommandUndoEdit, Path: p})
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != perm {
			t.Errorf("mode after edits = %v, want %v", fi.Mode().Perm(), perm)
		}
		f.unchanged(p, "echo b\n")
	}

	// A read-only file: root may write it (as any editor running as root
	// would), anyone else gets a clear refusal.
	p := f.write("ro.txt", "keep\n", 0o444)
	a := Action{Command: CommandStrReplace, Path: p, OldStr: new("keep"), NewStr: new("lost")}
	if os.Geteuid() == 0 {
		f.ok(a)
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o444 {
			t.Errorf("read-only mode lost: %v", fi.Mode().Perm())
		}
	} else {
		f.fail(a, "Cannot write "+p, "permission denied")
		f.unchanged(p, "keep\n")
	}
	f.noTempFiles()
}

func TestSymlinks(t *testing.T) {
	f := newFixture(t)
	target := f.write("target.txt", "v1\n", 0o644)
	link := f.path("link.txt")
	if err := os.Symlink("target.txt", link); err != nil {
		t.Fatal(err)
	}
	f.ok(Action{Command: CommandStrReplace, Path: link, OldStr: new("v1"), NewStr: new("v2")})
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced by a file: %v %v", fi, err)
	}
	f.unchanged(target, "v2\n")
	// Both names share one history.
	f.ok(Action{Command: CommandStrReplace, Path: target, OldStr: new("v2"), NewStr: new("v3")})
	f.ok(Action{Command: CommandUndoEdit, Path: link})
	f.unchanged(target, "v2\n")
	f.ok(Action{Command: CommandUndoEdit, Path: target})
	f.unchanged(target, "v1\n")
	got := f.ok(Action{Command: CommandView, Path: link})
	if !strings.Contains(got, "on "+link+":") {
		t.Errorf("view names %q, want the link's own path", got)
	}
}

func TestUndoElevenEdits(t *testing.T) {
	f := newFixture(t)
	p := f.write("u.txt", "v0\n", 0o644)
	f.fail(Action{Command: CommandUndoEdit, Path: p}, "No edit history found for "+p+".")
	for i := 1; i <= 11; i++ {
		f.ok(Action{Command: CommandStrReplace, Path: p, OldStr: new(fmt.Sprintf("v%d", i-1)), NewStr: new(fmt.Sprintf("v%d", i))})
	}
	f.unchanged(p, "v11\n")
	for i := 10; i >= 1; i-- {
		obs := f.run(Action{Command: CommandUndoEdit, Path: p})
		text := event.TextOf(obs.Content)
		want := fmt.Sprintf("Last edit to %s undone successfully. Here's the result of running `cat -n` on %s:\n     1\tv%d\n", p, p, i)
		if obs.IsError || text != want {
			t.Fatalf("undo to v%d:\n got %q\nwant %q", i, text, want)
		}
		if *obs.OldContent != fmt.Sprintf("v%d\n", i+1) || *obs.NewContent != fmt.Sprintf("v%d\n", i) {
			t.Errorf("undo old/new: %q %q", *obs.OldContent, *obs.NewContent)
		}
		f.unchanged(p, fmt.Sprintf("v%d\n", i))
	}
	// Ten steps are kept: the eleventh undo finds nothing.
	f.fail(Action{Command: CommandUndoEdit, Path: p}, "No edit history found")
	f.unchanged(p, "v1\n")
	// History is per file.
	q := f.write("other.txt", "x\n", 0o644)
	f.fail(Action{Command: CommandUndoEdit, Path: q}, "No edit history found")
	// Close deletes the history directory.
	dir := f.ed.hist.dir
	if dir == "" || !exists(dir) {
		t.Fatalf("history directory %q missing", dir)
	}
	if err := f.ed.Close(); err != nil {
		t.Fatal(err)
	}
	if exists(dir) {
		t.Errorf("Close left %s", dir)
	}
}

func TestConcurrentEdits(t *testing.T) {
	f := newFixture(t)
	p := f.write("c.txt", "", 0o644)
	link := f.path("c-link.txt")
	if err := os.Symlink(p, link); err != nil {
		t.Fatal(err)
	}
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			path := p
			if i%2 == 1 {
				path = link // the same file under another name shares the lock
			}
			obs, err := f.ed.Execute(context.Background(), &Action{Command: CommandInsert, Path: path, InsertLine: new(0), NewStr: new(fmt.Sprintf("line %d", i))})
			if err != nil || obs.IsError {
				t.Errorf("insert %d: %v %v", i, err, obs)
			}
			// Other files are edited in parallel.
			q := f.path(fmt.Sprintf("own-%d.txt", i))
			f.ed.Execute(context.Background(), &Action{Command: CommandCreate, Path: q, FileText: new("a\n")})
			f.ed.Execute(context.Background(), &Action{Command: CommandView, Path: p})
		})
	}
	wg.Wait()
	lines := splitLines(f.read(p))
	if len(lines) != n {
		t.Errorf("%d lines after %d concurrent inserts, want %d (an edit was lost)", len(lines), n, n)
	}
	if len(f.ed.locks.m) != 0 {
		t.Errorf("%d locks left in the table", len(f.ed.locks.m))
	}
	f.noTempFiles()
}

func TestCancelledContext(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.ed.Execute(ctx, &Action{Command: CommandCreate, Path: f.path("x"), FileText: new("x")}); err == nil {
		t.Error("no error from a cancelled context")
	}
	if exists(f.path("x")) {
		t.Error("a cancelled action ran")
	}
}

var umask os.FileMode

func TestMain(m *testing.M) {
	u := unix.Umask(0)
	unix.Umask(u)
	umask = os.FileMode(u)
	os.Exit(m.Run())
}

// phantom matches the empty line the reference numbers past a file's final
// newline, which we do not show.
var phantom = regexp.MustCompile(`\n +\d+\t\n(Review|\z)`)

// TestReferenceBehaviour replays testdata/reference_behaviour.json, written
// by the reference's own file_editor (gen_reference_behaviour.py), and
// expects the same text, error flags and resulting files.
func TestReferenceBehaviour(t *testing.T) {
	data, err := os.ReadFile("testdata/reference_behaviour.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name    string
		Dirs    []string
		Files   map[string]string
		Bin     map[string][]byte
		Actions []map[string]any
		Phantom bool
		Results []struct {
			Text    string
			IsError bool `json:"is_error"`
		}
		After map[string]string
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 10 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			f := newFixture(t)
			for _, d := range c.Dirs {
				if err := os.MkdirAll(f.path(d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for name, text := range c.Files {
				f.write(name, text, 0o644)
			}
			for name, b := range c.Bin {
				f.write(name, string(b), 0o644)
			}
			if len(c.Results) != len(c.Actions) {
				t.Fatalf("%d results for %d actions", len(c.Results), len(c.Actions))
			}
			for i, raw := range c.Actions {
				b, _ := json.Marshal(raw)
				var a Action
				if err := json.Unmarshal([]byte(strings.ReplaceAll(string(b), "$DIR", f.dir)), &a); err != nil {
					t.Fatal(err)
				}
				obs := f.run(a)
				got := strings.ReplaceAll(event.TextOf(obs.Content), f.dir, "$DIR")
				want := c.Results[i]
				if c.Phantom {
					want.Text = phantom.ReplaceAllString(want.Text, "\n$1")
				}
				if got != want.Text || obs.IsError != want.IsError {
					t.Errorf("action %d %s:\n got %q (error %v)\nwant %q (error %v)", i, b, got, obs.IsError, want.Text, want.IsError)
				}
			}
			for name, want := range c.After {
				f.unchanged(f.path(name), want)
			}
		})
	}
}

func TestLineEndingsFromModel(t *testing.T) {
	f := newFixture(t)
	p := f.write("lf.txt", "a\nb\nc\n", 0o644)
	f.ok(Action{Command: CommandStrReplace, Path: p, OldStr: new("a\r\nb"), NewStr: new("A\r\nB")})
	f.unchanged(p, "A\nB\nc\n")
}

// TestRenameRefused covers files that cannot be replaced by a rename, such
// as a file bind-mounted into a container: the edit is written in place.
func TestRenameRefused(t *testing.T) {
	f := newFixture(t)
	p := f.write("mounted.txt", "old\n", 0o640)
	before, _ := os.Stat(p)
	rename = func(from, to string) error {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: unix.EBUSY}
	}
	defer func() { rename = os.Rename }()
	f.ok(Action{Command: CommandStrReplace, Path: p, OldStr: new("old"), NewStr: new("new")})
	f.unchanged(p, "new\n")
	after, _ := os.Stat(p)
	if !os.SameFile(before, after) || after.Mode().Perm() != 0o640 {
		t.Errorf("in-place write changed the file's identity or mode: %v", after.Mode())
	}
	f.ok(Action{Command: CommandUndoEdit, Path: p})
	f.unchanged(p, "old\n")
	f.noTempFiles()

	// Any other rename failure leaves the file alone and says why.
	rename = func(from, to string) error {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: unix.ENOSPC}
	}
	text := f.fail(Action{Command: CommandStrReplace, Path: p, OldStr: new("old"), NewStr: new("new")}, "Cannot write "+p+": no space left on device. The file was not changed.")
	if strings.Contains(text, ".tmp") {
		t.Errorf("message names the temporary file: %q", text)
	}
	f.unchanged(p, "old\n")
	f.noTempFiles()
	// The failed edit left no history entry: undo has nothing to do.
	f.fail(Action{Command: CommandUndoEdit, Path: p}, "No edit history found")
}

func TestResourceKeys(t *testing.T) {
	f := newFixture(t)
	p := f.write("k.txt", "", 0o644)
	if err := os.Symlink(p, f.path("k-link")); err != nil {
		t.Fatal(err)
	}
	a := ResourceKeys(&Action{Command: CommandView, Path: p})
	b := ResourceKeys(&Action{Command: CommandStrReplace, Path: f.path("k-link")})
	c := ResourceKeys(&Action{Command: CommandCreate, Path: f.path("sub/../new.txt")})
	if len(a) != 1 || a[0] != "file:"+p || b[0] != a[0] || c[0] != "file:"+f.path("new.txt") {
		t.Errorf("keys: %v %v %v", a, b, c)
	}
}

func TestInvalidUTF8Arguments(t *testing.T) {
	f := newFixture(t)
	p := f.write("v.txt", "ok\n", 0o644)
	f.fail(Action{Command: CommandStrReplace, Path: p, OldStr: new("ok"), NewStr: new("bad \xff")}, "Invalid `new_str` parameter", "not valid UTF-8")
	f.fail(Action{Command: CommandCreate, Path: f.path("w.txt"), FileText: new("\xc3")}, "Invalid `file_text` parameter")
	f.unchanged(p, "ok\n")
	if exists(f.path("w.txt")) {
		t.Error("created a file from invalid text")
	}
}

func TestMoreErrorPaths(t *testing.T) {
	f := newFixture(t)
	// A symlink loop cannot be accessed.
	if err := os.Symlink(f.path("loop-b"), f.path("loop-a")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(f.path("loop-a"), f.path("loop-b")); err != nil {
		t.Fatal(err)
	}
	f.fail(Action{Command: CommandView, Path: f.path("loop-a")}, "Cannot access "+f.path("loop-a")+": too many levels of symbolic links")

	// An undo that cannot be written keeps its history entry.
	p := f.write("u.txt", "one\n", 0o644)
	f.ok(Action{Command: CommandStrReplace, Path: p, OldStr: new("one"), NewStr: new("two")})
	rename = func(from, to string) error {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: unix.ENOSPC}
	}
	f.fail(Action{Command: CommandUndoEdit, Path: p}, "Cannot write "+p+": no space left on device. The file was not changed.")
	rename = os.Rename
	f.unchanged(p, "two\n")
	f.ok(Action{Command: CommandUndoEdit, Path: p})
	f.unchanged(p, "one\n")

	// History files that vanished (a temp cleaner) give a clear error.
	f.ok(Action{Command: CommandStrReplace, Path: p, OldStr: new("one"), NewStr: new("three")})
	entries, _ := os.ReadDir(f.ed.hist.dir)
	for _, e := range entries {
		os.Remove(filepath.Join(f.ed.hist.dir, e.Name()))
	}
	f.fail(Action{Command: CommandUndoEdit, Path: p}, "Cannot read the edit history of "+p)
	f.unchanged(p, "three\n")
	f.noTempFiles()
}

func TestCreateRaceAndNoHardLinks(t *testing.T) {
	f := newFixture(t)
	defer func() { link = os.Link }()

	// Someone else creates the file between the check and the write: theirs
	// is kept.
	p := f.path("race.txt")
	link = func(from, to string) error {
		if err := os.WriteFile(to, []byte("theirs"), 0o644); err != nil {
			return err
		}
		return os.Link(from, to)
	}
	f.fail(Action{Command: CommandCreate, Path: p, FileText: new("ours")}, "File already exists at: "+p)
	f.unchanged(p, "theirs")
	f.noTempFiles()

	// A file system without hard links still gets the file.
	link = func(from, to string) error { return &os.LinkError{Op: "link", Old: from, New: to, Err: unix.EPERM} }
	p = f.path("nolinks.txt")
	f.ok(Action{Command: CommandCreate, Path: p, FileText: new("ok\n")})
	f.unchanged(p, "ok\n")
	f.noTempFiles()
}
