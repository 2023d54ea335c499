// Package filewalk walks a directory tree the way ripgrep chooses the files
// it searches, so the glob tool and grep's pure-Go fallback see the same
// files as `rg --files`:
//
//   - hidden entries (names starting with ".") are skipped;
//   - .rgignore and .ignore files are honoured everywhere, .gitignore files
//     and .git/info/exclude only inside a git repository, including those in
//     the parent directories of the root (a nested repository is not
//     governed by the .gitignore files of the one around it);
//   - override globs (ripgrep's -g) select files and beat the rules above;
//   - symbolic links are neither followed nor listed.
//
// Unlike ripgrep, entries named .git are always skipped, even when an
// override glob such as "*" would list a repository's internals.
// Global git excludes (core.excludesFile) are not read.
package filewalk

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Options configures Walk. A nil *Options walks with no overrides.
type Options struct {
	// Overrides select files as ripgrep's -g globs do.
	Overrides *Overrides
}

// WalkFunc is called for each regular file Walk selects. path is absolute
// (root joined with the relative path) and rel is slash-separated, relative
// to root. Returning fs.SkipAll stops the walk without error; any other
// error stops it and is returned by Walk.
type WalkFunc func(path, rel string, d fs.DirEntry) error

// level holds the ignore rules found in one directory.
type level struct {
	rgignore, ignore, gitignore, exclude *ruleSet
}

type walker struct {
	ctx   context.Context
	over  *Overrides
	fn    WalkFunc
	chain []level
	// repo is the index in chain of the current repository's root: git
	// rules of directories above it do not apply (a nested repository is
	// not governed by its parent's .gitignore).
	repo int
}

// Walk calls fn for every regular file under root that ripgrep would search,
// directory by directory in lexical order. root must be an existing
// directory. Directories that cannot be read are skipped, as ripgrep does.
func Walk(ctx context.Context, root string, opts *Options, fn WalkFunc) error {
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	fi, err := os.Stat(root)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &fs.PathError{Op: "walk", Path: root, Err: errors.New("not a directory")}
	}
	w := &walker{ctx: ctx, fn: fn}
	if opts != nil {
		w.over = opts.Overrides
	}
	gitRoot := findGitRoot(root)
	// Ignore files in the parents of root apply too, outermost first.
	var parents []string
	for d := filepath.Dir(root); ; d = filepath.Dir(d) {
		parents = append(parents, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if root == filepath.Dir(root) {
		parents = nil
	}
	for i := len(parents) - 1; i >= 0; i-- {
		if parents[i] == gitRoot {
			w.repo = len(w.chain)
		}
		w.chain = append(w.chain, loadLevel(parents[i], gitRoot))
	}
	if root == gitRoot {
		w.repo = len(w.chain)
	}
	err = w.dir(root, "", gitRoot)
	if errors.Is(err, fs.SkipAll) {
		return nil
	}
	return err
}

// findGitRoot returns the nearest directory at or above dir that holds a
// .git entry, or "".
func findGitRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// loadLevel reads the ignore files of dir. gitRoot is the repository dir
// belongs to, or "" outside a repository.
func loadLevel(dir, gitRoot string) level {
	l := level{rgignore: loadRules(dir, ".rgignore"), ignore: loadRules(dir, ".ignore")}
	if gitRoot != "" && isWithin(dir, gitRoot) {
		l.gitignore = loadRules(dir, ".gitignore")
		if dir == gitRoot {
			if ex := loadRules(filepath.Join(dir, ".git", "info"), "exclude"); ex != nil {
				ex.base = dir
				l.exclude = ex
			}
		}
	}
	return l
}

// isWithin reports whether dir is root or below it.
func isWithin(dir, root string) bool {
	return dir == root || strings.HasPrefix(dir, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}

// dir walks the directory abs (rel relative to the root).
func (w *walker) dir(abs, rel, gitRoot string) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil // unreadable: skip, as ripgrep does
	}
	oldRepo := w.repo
	for _, e := range entries {
		if e.Name() == ".git" && abs != gitRoot {
			gitRoot = abs // a nested repository starts here
			w.repo = len(w.chain)
			break
		}
	}
	w.chain = append(w.chain, loadLevel(abs, gitRoot))
	defer func() {
		w.chain = w.chain[:len(w.chain)-1]
		w.repo = oldRepo
	}()

	for _, e := range entries {
		name := e.Name()
		if name == ".git" {
			continue
		}
		childAbs := filepath.Join(abs, name)
		childRel := name
		if rel != "" {
			childRel = rel + "/" + name
		}
		t := e.Type()
		switch {
		case t.IsDir():
			if w.skip(childAbs, childRel, name, true) {
				continue
			}
			if err := w.dir(childAbs, childRel, gitRoot); err != nil {
				return err
			}
		case t.IsRegular():
			if w.skip(childAbs, childRel, name, false) {
				continue
			}
			if err := w.fn(childAbs, childRel, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// skip decides whether an entry is left out, with ripgrep's precedence:
// overrides, then ignore files (.rgignore over .ignore over .gitignore over
// git's exclude file, deeper directories first), then hidden names.
func (w *walker) skip(abs, rel, name string, isDir bool) bool {
	switch w.over.match(rel, isDir) {
	case ignored:
		return true
	case whitelisted:
		return false
	}
	switch w.ignored(abs, isDir) {
	case ignored:
		return true
	case whitelisted:
		return false
	}
	return strings.HasPrefix(name, ".")
}

func (w *walker) ignored(abs string, isDir bool) verdict {
	pickers := [...]struct {
		git  bool
		pick func(*level) *ruleSet
	}{
		{false, func(l *level) *ruleSet { return l.rgignore }},
		{false, func(l *level) *ruleSet { return l.ignore }},
		{true, func(l *level) *ruleSet { return l.gitignore }},
		{true, func(l *level) *ruleSet { return l.exclude }},
	}
	for _, p := range pickers {
		low := 0
		if p.git {
			low = w.repo
		}
		for i := len(w.chain) - 1; i >= low; i-- {
			if s := p.pick(&w.chain[i]); s != nil {
				if v := s.match(abs, isDir); v != undecided {
					return v
				}
			}
		}
	}
	return undecided
}

// ResolveDir turns the path argument of a search tool into the absolute,
// symlink-free directory to search. An empty path means workingDir; a
// leading "~" is the user's home. The errors are written for the model:
// a relative path is refused (with a hint when it exists under
// workingDir), as are missing paths and files.
func ResolveDir(workingDir, path string) (string, error) {
	if path == "" {
		path = workingDir
	}
	path = ExpandHome(path)
	if !filepath.IsAbs(path) {
		msg := fmt.Sprintf("path must be an absolute directory path, got %q", path)
		if workingDir != "" {
			if fi, err := os.Stat(filepath.Join(workingDir, path)); err == nil && fi.IsDir() {
				msg += fmt.Sprintf("; did you mean %q?", filepath.Join(workingDir, path))
			}
		}
		return "", errors.New(msg)
	}
	resolved, err := filepath.EvalSymlinks(filepath.Clean(path))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("directory %s does not exist", path)
		}
		return "", fmt.Errorf("cannot use %s: %w", path, err)
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return "", fmt.Errorf("cannot use %s: %w", path, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is a file, not a directory", path)
	}
	return resolved, nil
}

// ExpandHome replaces a leading "~" (alone or followed by a slash) with the
// user's home directory. Other paths are returned unchanged.
func ExpandHome(path string) string {
	if path != "~" && !strings.HasPrefix(path, "~/") {
		return path
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return path
	}
	return filepath.Join(home, path[1:])
}
