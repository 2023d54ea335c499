// Package glob provides the glob tool: find files by name pattern, newest
// first.
//
// Files are chosen as `rg --files DIR -g PATTERN` chooses them (see package
// filewalk): hidden entries and files excluded by .gitignore, .ignore and
// .rgignore are skipped unless the pattern names them, and a pattern
// without a slash matches file names at any depth. Results are sorted by
// modification time, newest first, and capped at MaxResults.
//
// The tool is registered as "glob" (kinds GlobTool, GlobAction,
// GlobObservation, as in the reference).
//
// Differences from the reference, on purpose: a relative path is an error
// rather than being resolved against the server's process directory;
// patterns with a slash are matched relative to the search directory
// (ripgrep matches them relative to its own working directory, so they
// silently match nothing in the reference); the rest of an absolute pattern
// is anchored at its directory; .git directories are never listed;
// results are sorted newest first across the whole tree (rg's
// --sortr=modified only orders the entries within each directory, by their
// own times, so the reference's "newest first" is not); truncated is set
// only when more than MaxResults files matched (the reference sets it at
// exactly 100); ties in modification time are broken by path.
package glob

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/glob/filewalk"
)

// Name is the tool's name, and its registry name.
const Name = "glob"

// MaxResults is the most files one call returns.
const MaxResults = 100

// Action is a file search by name pattern.
type Action struct {
	Pattern string `json:"pattern" desc:"Glob pattern for file names, e.g. \"*.go\", \"**/*_test.go\", \"src/**/*.{ts,tsx}\". Without a slash it matches names at any depth."`
	Path    string `json:"path,omitempty" desc:"Absolute path of the directory to search. Defaults to the working directory."`
}

// Observation lists the files found.
type Observation struct {
	event.ObservationBase
	// Files are absolute paths, most recently modified first.
	Files event.List[string] `json:"files"`
	// Pattern is the pattern as given.
	Pattern string `json:"pattern"`
	// SearchPath is the directory searched.
	SearchPath string `json:"search_path"`
	// Truncated is set when more than MaxResults files matched.
	Truncated bool `json:"truncated"`
}

func init() {
	event.RegisterKind[Action]("GlobAction")
	event.RegisterKind[Observation]("GlobObservation")
	tool.Register(Name, factory)
}

// factory makes the tool for a conversation; the spec takes no params.
func factory(ctx tool.Context, params json.RawMessage) ([]tool.Tool, error) {
	if err := noParams(params); err != nil {
		return nil, err
	}
	t, err := New(&Options{WorkingDir: ctx.WorkingDir})
	if err != nil {
		return nil, err
	}
	return []tool.Tool{t}, nil
}

// noParams checks that a spec's params object is empty.
func noParams(params json.RawMessage) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(params, &m); err != nil {
		return fmt.Errorf("params: %w", err)
	}
	for k := range m {
		return fmt.Errorf("unknown param %q: the tool takes no params", k)
	}
	return nil
}

// Options configures New. A nil *Options searches the process's working
// directory by default.
type Options struct {
	// WorkingDir is the directory searched when an action has no path.
	WorkingDir string
	// Timeout bounds one search; the default is DefaultTimeout.
	Timeout time.Duration
}

// DefaultTimeout bounds a search, as the reference bounds its rg run, so
// a pattern over a huge tree fails with advice instead of hanging.
const DefaultTimeout = 30 * time.Second

const description = `Find files by name with a glob pattern; returns absolute paths, most recently modified first.
* "*" matches within one path segment, "**" across directories, "{a,b}" either alternative, "[abc]" one character.
* A pattern without "/" matches file names at any depth ("*.go"); one with "/" matches paths relative to the search directory ("cmd/**/main.go").
* Hidden files and files ignored by .gitignore are skipped unless the pattern names them.
* At most 100 files are returned; narrow the pattern or the path to see more.`

// New returns the glob tool. It fails if the working directory is not a
// directory.
func New(opts *Options) (*tool.Typed[Action, *Observation], error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.WorkingDir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		o.WorkingDir = wd
	}
	wd, err := filepath.Abs(o.WorkingDir)
	if err != nil {
		return nil, err
	}
	o.WorkingDir = wd
	if fi, err := os.Stat(o.WorkingDir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("glob: working directory %q is not a directory", o.WorkingDir)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	desc := description + "\n\nThe working directory is " + o.WorkingDir + "."
	return tool.New(Name, desc, func(ctx context.Context, a *Action) (*Observation, error) {
		return run(ctx, &o, a)
	}, &tool.Options{
		Kind: "GlobTool",
		Annotations: &event.ToolAnnotations{
			Title:          Name,
			ReadOnlyHint:   true,
			IdempotentHint: true,
		},
	}), nil
}

// match is a file found and its modification time.
type match struct {
	path  string
	mtime time.Time
}

func run(ctx context.Context, o *Options, a *Action) (*Observation, error) {
	workingDir := o.WorkingDir
	obs := &Observation{Pattern: a.Pattern}
	fail := func(format string, args ...any) (*Observation, error) {
		obs.IsError = true
		obs.Content = event.List[event.Content]{event.Text(fmt.Sprintf(format, args...))}
		return obs, nil
	}
	if a.Pattern == "" {
		obs.SearchPath = a.Path
		return fail("pattern must not be empty; use \"**\" to list every file")
	}
	dir, pattern := a.Path, a.Pattern
	if dir == "" {
		dir, pattern = splitAbsolute(pattern)
		if dir == "" {
			dir = workingDir
		}
	}
	obs.SearchPath = dir
	root, err := filewalk.ResolveDir(workingDir, dir)
	if err != nil {
		return fail("%v", err)
	}
	obs.SearchPath = root
	if a.Path != "" {
		if pattern, err = relativeTo(root, pattern); err != nil {
			return fail("%v", err)
		}
	}
	over, err := filewalk.ParseOverrides(pattern)
	if err != nil {
		return fail("%v", err)
	}
	var found []match
	wctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	err = filewalk.Walk(wctx, root, &filewalk.Options{Overrides: over}, func(path, _ string, d fs.DirEntry) error {
		info, err := d.Info()
		if err != nil {
			return nil // vanished since listed
		}
		found = append(found, match{path, info.ModTime()})
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("glob: %w", ctx.Err())
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return fail("the search of %s took longer than %v and was stopped; search a smaller directory or use a narrower pattern", root, o.Timeout)
		}
		return fail("searching %s: %v", root, err)
	}
	files, truncated := newestFirst(found, MaxResults)
	obs.Files = files
	obs.Truncated = truncated
	obs.Content = event.List[event.Content]{event.Text(render(a.Pattern, root, files, truncated))}
	return obs, nil
}

// splitAbsolute splits an absolute (or "~") pattern into the directory
// before its first glob metacharacter and the rest, anchored at that
// directory. A relative pattern gives "" and the pattern unchanged.
func splitAbsolute(pattern string) (dir, rest string) {
	p := filewalk.ExpandHome(pattern)
	if !filepath.IsAbs(p) {
		return "", pattern
	}
	base, rest := doublestar.SplitPattern(filepath.ToSlash(p))
	if rest == "" || rest == "." {
		rest = "**"
	}
	// Anchor: "/src/*.go" means files directly in /src, not at any depth.
	return filepath.FromSlash(base), "/" + rest
}

// relativeTo turns an absolute pattern given together with a path into a
// pattern anchored at root. Other patterns are returned unchanged.
func relativeTo(root, pattern string) (string, error) {
	p := filewalk.ExpandHome(pattern)
	if !filepath.IsAbs(p) {
		return pattern, nil
	}
	dir, rest := splitAbsolute(p)
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		dir = resolved
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("pattern %q is outside the search path %s; give a pattern relative to the path", pattern, root)
	}
	if rel == "." {
		return rest, nil
	}
	return "/" + filepath.ToSlash(rel) + rest, nil
}

// newestFirst sorts by modification time, newest first (ties by path), and
// keeps at most limit paths.
func newestFirst(found []match, limit int) (paths []string, truncated bool) {
	slices.SortFunc(found, func(a, b match) int {
		if c := b.mtime.Compare(a.mtime); c != 0 {
			return c
		}
		return cmp.Compare(a.path, b.path)
	})
	if len(found) > limit {
		found, truncated = found[:limit], true
	}
	paths = make([]string, len(found))
	for i, m := range found {
		paths[i] = m.path
	}
	return paths, truncated
}

// render is the text the model reads.
func render(pattern, root string, files []string, truncated bool) string {
	if len(files) == 0 {
		return fmt.Sprintf("No files match %q in %s.", pattern, root)
	}
	var b strings.Builder
	noun := "files"
	if len(files) == 1 {
		noun = "file"
	}
	fmt.Fprintf(&b, "%d %s matching %q in %s, newest first:\n", len(files), noun, pattern, root)
	b.WriteString(strings.Join(files, "\n"))
	if truncated {
		fmt.Fprintf(&b, "\n[More than %d files matched; only the %d most recently modified are shown. Use a narrower pattern or path.]", MaxResults, MaxResults)
	}
	return b.String()
}
