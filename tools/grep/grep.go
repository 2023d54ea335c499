// Package grep provides the grep tool: find the files whose contents match
// a regular expression, newest first.
//
// The search runs ripgrep (rg) when it is on PATH and a pure-Go search
// otherwise; both choose files the same way (see package filewalk: hidden
// entries, .gitignore/.ignore/.rgignore, the include glob as rg's -g),
// skip binary files, match case-insensitively line by line, and return the
// same files. Results are sorted by modification time, newest first, and
// capped at MaxResults. In the Go search \d, \w and \s have rg's Unicode
// meaning; \b stays ASCII-based, the one known difference in matching.
//
// The tool is registered as "grep" (kinds GrepTool, GrepAction,
// GrepObservation, as in the reference).
//
// Differences from the reference, on purpose: a relative path is an error;
// the include glob is applied as rg applies -g, relative to the search
// directory, so "*.{ts,tsx}" and "src/**/*.go" work (the reference filters
// rg's results again with Python's fnmatch on the base name, which knows
// no braces and drops every path pattern); the regex is checked with Go's
// RE2 syntax, which both backends accept; rg runs without user config
// files or global git excludes so both backends agree; ties in modification
// time are broken by path.
package grep

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/glob/filewalk"
)

// Name is the tool's name, and its registry name.
const Name = "grep"

// MaxResults is the most files one call returns.
const MaxResults = 100

// Action is a content search.
type Action struct {
	Pattern string `json:"pattern" desc:"Regular expression (RE2 syntax) to search for, case-insensitive, matched line by line, e.g. \"func\\s+main\" or \"TODO|FIXME\"."`
	Path    string `json:"path,omitempty" desc:"Absolute path of the directory to search. Defaults to the working directory."`
	Include string `json:"include,omitempty" desc:"Glob selecting the files to search, e.g. \"*.go\" or \"*.{ts,tsx}\"."`
}

// Observation lists the files that contain a match.
type Observation struct {
	event.ObservationBase
	// Matches are absolute file paths, most recently modified first.
	Matches event.List[string] `json:"matches"`
	// Pattern is the regular expression as given.
	Pattern string `json:"pattern"`
	// SearchPath is the directory searched.
	SearchPath string `json:"search_path"`
	// IncludePattern is the include glob, if one was given.
	IncludePattern string `json:"include_pattern,omitempty"`
	// Truncated is set when more than MaxResults files matched.
	Truncated bool `json:"truncated"`
}

func init() {
	event.RegisterKind[Action]("GrepAction")
	event.RegisterKind[Observation]("GrepObservation")
	tool.Register(Name, factory)
}

// factory makes the tool for a conversation; the spec takes no params.
func factory(ctx tool.Context, params json.RawMessage) ([]tool.Tool, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(params, &m); err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	for k := range m {
		return nil, fmt.Errorf("unknown param %q: the tool takes no params", k)
	}
	t, err := New(&Options{WorkingDir: ctx.WorkingDir})
	if err != nil {
		return nil, err
	}
	return []tool.Tool{t}, nil
}

// Options configures New. A nil *Options is valid.
type Options struct {
	// WorkingDir is the directory searched when an action has no path;
	// the default is the process's working directory.
	WorkingDir string
	// NoRipgrep forces the pure-Go search even when rg is installed.
	NoRipgrep bool
	// Ripgrep is the rg program to run; the default is "rg" looked up on
	// PATH when the tool is made.
	Ripgrep string
	// Timeout bounds one search; the default is DefaultTimeout.
	Timeout time.Duration
}

// DefaultTimeout bounds a search, as the reference bounds its rg run, so
// a search of a huge tree fails with advice instead of hanging.
const DefaultTimeout = 30 * time.Second

const description = `Find the files whose contents match a regular expression; returns absolute file paths (not lines), most recently modified first.
* RE2 syntax, case-insensitive, matched line by line: "log.*error", "func\s+\w+", "TODO|FIXME".
* "include" limits the search to files matching a glob: "*.go", "*.{ts,tsx}", "internal/**/*.go".
* Hidden files, binary files and files ignored by .gitignore are skipped.
* At most 100 files are returned; narrow the pattern, include or path to see more.`

// New returns the grep tool. It fails if the working directory is not a
// directory.
func New(opts *Options) (*tool.Typed[Action, *Observation], error) {
	s := searcher{timeout: DefaultTimeout}
	if opts != nil {
		s.workingDir, s.rg = opts.WorkingDir, opts.Ripgrep
		if opts.Timeout > 0 {
			s.timeout = opts.Timeout
		}
		if opts.NoRipgrep {
			s.rg = ""
		} else if s.rg == "" {
			s.rg, _ = exec.LookPath("rg")
		}
	} else {
		s.rg, _ = exec.LookPath("rg")
	}
	if s.workingDir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		s.workingDir = wd
	}
	wd, err := filepath.Abs(s.workingDir)
	if err != nil {
		return nil, err
	}
	s.workingDir = wd
	if fi, err := os.Stat(s.workingDir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("grep: working directory %q is not a directory", s.workingDir)
	}
	desc := description + "\n\nThe working directory is " + s.workingDir + "."
	return tool.New(Name, desc, s.run, &tool.Options{
		Kind: "GrepTool",
		Annotations: &event.ToolAnnotations{
			Title:          Name,
			ReadOnlyHint:   true,
			IdempotentHint: true,
		},
	}), nil
}

// searcher runs searches; rg is "" for the pure-Go backend.
type searcher struct {
	workingDir string
	rg         string
	timeout    time.Duration
}

func (s *searcher) run(ctx context.Context, a *Action) (*Observation, error) {
	obs := &Observation{Pattern: a.Pattern, IncludePattern: a.Include, SearchPath: a.Path}
	fail := func(format string, args ...any) (*Observation, error) {
		obs.IsError = true
		obs.Content = event.List[event.Content]{event.Text(fmt.Sprintf(format, args...))}
		return obs, nil
	}
	root, err := filewalk.ResolveDir(s.workingDir, a.Path)
	if err != nil {
		return fail("%v", err)
	}
	obs.SearchPath = root
	m, err := newMatcher(a.Pattern)
	if err != nil {
		return fail("%v", err)
	}
	globs := []string{}
	if a.Include != "" {
		globs = append(globs, a.Include)
	}
	over, err := filewalk.ParseOverrides(globs...)
	if err != nil {
		return fail("invalid include: %v", err)
	}

	sctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var paths []string
	if s.rg != "" {
		paths, err = s.ripgrep(sctx, root, a.Pattern, a.Include)
		if errors.Is(err, errNoRipgrep) {
			slog.Warn("grep: ripgrep cannot be run, using the Go search", "err", err)
			paths, err = search(sctx, root, m, over)
		}
	} else {
		paths, err = search(sctx, root, m, over)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("grep: %w", ctx.Err())
		}
		if sctx.Err() != nil {
			return fail("the search of %s took longer than %v and was stopped; search a smaller directory or use a narrower include", root, s.timeout)
		}
		return fail("%v", err)
	}
	matches, truncated := finish(root, paths, a.Include != "")
	obs.Matches, obs.Truncated = matches, truncated
	obs.Content = event.List[event.Content]{event.Text(render(a.Pattern, root, a.Include, matches, truncated))}
	return obs, nil
}

// errNoRipgrep means rg could not be started at all.
var errNoRipgrep = errors.New("ripgrep cannot be run")

// ripgrep lists the matching files with rg. It runs in root so that
// include globs with a slash are relative to root, and without config
// files or global excludes so it agrees with search.
func (s *searcher) ripgrep(ctx context.Context, root, pattern, include string) ([]string, error) {
	args := []string{"--files-with-matches", "--ignore-case", "--no-config", "--no-ignore-global", "--no-messages", "--null"}
	if include != "" {
		args = append(args, "--glob", include)
	}
	args = append(args, "--glob", "!.git", "--regexp", pattern, "--", root)
	cmd := exec.CommandContext(ctx, s.rg, args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return nil, nil // no match
	case errors.As(err, &exit) && exit.ExitCode() == 2 && len(out) > 0:
		// Some files could not be read; the matches found still stand.
		slog.Debug("grep: rg reported errors", "stderr", stderr.String())
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case !errors.As(err, &exit):
		return nil, fmt.Errorf("%w: %v", errNoRipgrep, err) // e.g. rg was uninstalled
	default:
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("ripgrep failed: %s", msg)
	}
	// Paths end with NUL (--null): a file name may hold a newline.
	var paths []string
	for p := range strings.SplitSeq(string(out), "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// search is the pure-Go backend. Files are searched in parallel, one
// worker per CPU; the order does not matter as results are sorted later.
func search(ctx context.Context, root string, m *matcher, over *filewalk.Overrides) ([]string, error) {
	var (
		mu    sync.Mutex
		paths []string
	)
	g, gctx := errgroup.WithContext(ctx)
	files := make(chan string)
	for range runtime.GOMAXPROCS(0) {
		g.Go(func() error {
			for p := range files {
				if ok, _ := m.file(p); ok {
					mu.Lock()
					paths = append(paths, p)
					mu.Unlock()
				}
			}
			return nil
		})
	}
	g.Go(func() error {
		defer close(files)
		return filewalk.Walk(gctx, root, &filewalk.Options{Overrides: over}, func(path, _ string, _ fs.DirEntry) error {
			select {
			case files <- path:
				return nil
			case <-gctx.Done():
				return gctx.Err()
			}
		})
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return paths, nil
}

// matcher matches a pattern line by line, case-insensitively, as rg does.
type matcher struct {
	line *regexp.Regexp
	// literal is lowercase ASCII text that every match contains, or nil.
	// Files that do not contain it, compared case-insensitively, are
	// skipped without running the regexp, which is slow when
	// case-insensitive.
	literal []byte
}

// newMatcher compiles pattern; its error is written for the model.
func newMatcher(pattern string) (*matcher, error) {
	if _, err := regexp.Compile(pattern); err != nil {
		return nil, fmt.Errorf("invalid regular expression %q: %v", pattern, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	pattern = unicodeClasses(pattern)
	line, err := regexp.Compile("(?i)" + pattern)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression %q: %v", pattern, err)
	}
	m := &matcher{line: line}
	if re, err := syntax.Parse("(?i)"+pattern, syntax.Perl); err == nil {
		if lit := requiredLiteral(re.Simplify()); len(lit) >= 2 {
			m.literal = []byte(lit)
		}
	}
	return m, nil
}

// Unicode meanings of the Perl classes, which ripgrep uses; Go's are
// ASCII-only. The "in" forms go inside a bracketed class.
const (
	wordChars  = `\p{L}\p{Nl}\p{M}\p{Nd}\p{Pc}`
	spaceChars = `\t\n\v\f\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}`
)

var perlClasses = map[byte]struct{ out, in string }{
	'd': {`\p{Nd}`, `\p{Nd}`},
	'D': {`\P{Nd}`, `\P{Nd}`},
	'w': {"[" + wordChars + "]", wordChars},
	'W': {"[^" + wordChars + "]", `\W`}, // no negated union inside a class
	's': {"[" + spaceChars + "]", spaceChars},
	'S': {"[^" + spaceChars + "]", `\S`},
}

// unicodeClasses rewrites \d, \w, \s and their negations in a valid RE2
// pattern to their Unicode meaning, so the Go search matches what rg
// matches. Escaped backslashes, \Q...\E quoting and POSIX classes are left
// alone.
func unicodeClasses(p string) string {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p) && p[i+1] == 'Q':
			end := strings.Index(p[i:], `\E`)
			if end < 0 {
				b.WriteString(p[i:])
				return b.String()
			}
			b.WriteString(p[i : i+end+2])
			i += end + 1
		case c == '\\' && i+1 < len(p):
			if r, ok := perlClasses[p[i+1]]; ok {
				if inClass {
					b.WriteString(r.in)
				} else {
					b.WriteString(r.out)
				}
			} else {
				b.WriteString(p[i : i+2])
			}
			i++
		case c == '[' && !inClass:
			inClass = true
			b.WriteByte(c)
			// A ']' first in the class (after an optional '^') is literal.
			if i+1 < len(p) && p[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(p) && p[i+1] == ']' {
				b.WriteByte(']')
				i++
			}
		case c == '[' && inClass && i+1 < len(p) && p[i+1] == ':':
			end := strings.Index(p[i:], ":]")
			if end < 0 {
				b.WriteString(p[i:])
				return b.String()
			}
			b.WriteString(p[i : i+end+2])
			i += end + 1
		case c == ']' && inClass:
			inClass = false
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// requiredLiteral returns the longest ASCII literal, lowercased, that every
// match of re contains, or "".
func requiredLiteral(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpLiteral:
		s := string(re.Rune)
		for _, r := range s {
			if r >= utf8.RuneSelf {
				return "" // non-ASCII case folding is not just lowercasing
			}
		}
		return strings.ToLower(s)
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		best := ""
		for _, sub := range re.Sub {
			if l := requiredLiteral(sub); len(l) > len(best) {
				best = l
			}
		}
		return best
	}
	return ""
}

// longS is U+017F, which case-folds to "s" but is not lowered to it.
var longS = []byte("\u017f")

// mayMatch reports whether data can hold a match: whether it contains the
// required literal, ignoring case.
func (m *matcher) mayMatch(data []byte) bool {
	if m.literal == nil || bytes.Contains(data, longS) {
		return true
	}
	// bytes.ToLower also maps the Kelvin sign to "k", its case fold.
	return bytes.Contains(bytes.ToLower(data), m.literal)
}

const (
	// binaryPeek is how much of a file is checked for a NUL byte before
	// the search starts, as ripgrep checks its first buffer.
	binaryPeek = 64 << 10
	// maxWhole is the largest file read at once to check for the required
	// literal; larger files are searched as they are read.
	maxWhole = 8 << 20
)

// file reports whether a line of the file at path matches. Like ripgrep,
// a file with a NUL byte in its first 64 KiB is binary and not searched,
// and in other files the search stops at the line holding the first NUL.
func (m *matcher) file(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || m.literal == nil || fi.Size() > maxWhole {
		return m.stream(f)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return false, err
	}
	if !m.mayMatch(data) {
		return false, nil
	}
	return m.stream(bytes.NewReader(data))
}

// stream searches f line by line as it reads it.
func (m *matcher) stream(f io.Reader) (bool, error) {
	br := bufio.NewReaderSize(f, binaryPeek)
	head, err := br.Peek(binaryPeek)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return false, err
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return false, nil
	}
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue // a long line: keep reading it
		}
		if bytes.IndexByte(line, 0) >= 0 {
			return false, nil
		}
		// A file has as many lines as newlines, plus a last unterminated
		// one; an empty file has none (so "" matches no empty file, as in rg).
		if (err == nil || len(line) > 0) && m.line.Match(bytes.TrimSuffix(line, []byte("\n"))) {
			return true, nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return false, nil
			}
			return false, err
		}
		line = line[:0]
	}
}

// finish applies the reference's final filter (nothing under a hidden
// directory of the search root; no hidden file unless an include glob
// asked for files), removes duplicates, sorts newest first (ties by path)
// and caps the list.
func finish(root string, paths []string, include bool) (matches []string, truncated bool) {
	type found struct {
		path  string
		mtime time.Time
	}
	seen := make(map[string]bool, len(paths))
	var list []found
	for _, p := range paths {
		rel, err := filepath.Rel(root, p)
		if err != nil || seen[p] {
			continue
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		hidden := slices.ContainsFunc(parts[:len(parts)-1], func(s string) bool { return strings.HasPrefix(s, ".") })
		if hidden || (!include && strings.HasPrefix(parts[len(parts)-1], ".")) {
			continue
		}
		info, err := os.Stat(p)
		if err != nil {
			continue
		}
		seen[p] = true
		list = append(list, found{p, info.ModTime()})
	}
	slices.SortFunc(list, func(a, b found) int {
		if c := b.mtime.Compare(a.mtime); c != 0 {
			return c
		}
		return cmp.Compare(a.path, b.path)
	})
	if len(list) > MaxResults {
		list, truncated = list[:MaxResults], true
	}
	matches = make([]string, len(list))
	for i, f := range list {
		matches[i] = f.path
	}
	return matches, truncated
}

// render is the text the model reads.
func render(pattern, root, include string, matches []string, truncated bool) string {
	filter := ""
	if include != "" {
		filter = fmt.Sprintf(" (files matching %q)", include)
	}
	if len(matches) == 0 {
		return fmt.Sprintf("No files contain a match for %q in %s%s.", pattern, root, filter)
	}
	noun := "files contain"
	if len(matches) == 1 {
		noun = "file contains"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s a match for %q in %s%s, newest first:\n", len(matches), noun, pattern, root, filter)
	b.WriteString(strings.Join(matches, "\n"))
	if truncated {
		fmt.Fprintf(&b, "\n[More than %d files matched; only the %d most recently modified are shown. Use a narrower pattern, include or path.]", MaxResults, MaxResults)
	}
	return b.String()
}
