package filewalk

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// verdict is what a set of rules says about a path.
type verdict int

const (
	undecided verdict = iota
	ignored
	whitelisted
)

// rule is one gitignore-style line.
type rule struct {
	pattern  string // doublestar pattern, without "!", leading or trailing "/"
	negate   bool   // the line started with "!"
	dirOnly  bool   // the line ended with "/"
	anchored bool   // match the path relative to the base, not just the name
}

// parseRule parses one line of an ignore file (or one -g glob). ok is false
// for blank lines and comments.
func parseRule(line string) (r rule, ok bool) {
	line = strings.TrimRight(line, "\r")
	// Trailing spaces are dropped unless escaped with a backslash.
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
		line = line[:len(line)-1]
	}
	if line == "" || strings.HasPrefix(line, "#") {
		return rule{}, false
	}
	switch {
	case strings.HasPrefix(line, "!"):
		r.negate = true
		line = line[1:]
	case strings.HasPrefix(line, `\!`), strings.HasPrefix(line, `\#`):
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if strings.HasPrefix(line, "/") {
		r.anchored = true
		line = strings.TrimLeft(line, "/")
	}
	if strings.Contains(line, "/") {
		r.anchored = true
	}
	if line == "" {
		return rule{}, false
	}
	r.pattern = line
	return r, true
}

// matches reports whether the rule matches rel, a slash-separated path
// relative to the rule's base directory.
func (r rule) matches(rel string, isDir bool) bool {
	if r.dirOnly && !isDir {
		return false
	}
	if r.anchored {
		return doublestar.MatchUnvalidated(r.pattern, rel)
	}
	return doublestar.MatchUnvalidated(r.pattern, path.Base(rel))
}

// ruleSet is the rules of one ignore file, relative to its directory.
type ruleSet struct {
	base  string // absolute directory the rules are relative to
	rules []rule
}

// match returns the verdict of the last rule matching abs. A negated rule
// whitelists.
func (s *ruleSet) match(abs string, isDir bool) verdict {
	rel, err := filepath.Rel(s.base, abs)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return undecided
	}
	rel = filepath.ToSlash(rel)
	for i := len(s.rules) - 1; i >= 0; i-- {
		if r := s.rules[i]; r.matches(rel, isDir) {
			if r.negate {
				return whitelisted
			}
			return ignored
		}
	}
	return undecided
}

// loadRules reads the ignore file name in dir. A missing file gives nil.
// Invalid patterns are dropped, as git does.
func loadRules(dir, name string) *ruleSet {
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil || len(data) == 0 {
		return nil
	}
	set := &ruleSet{base: dir}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		r, ok := parseRule(sc.Text())
		if ok && doublestar.ValidatePattern(r.pattern) {
			set.rules = append(set.rules, r)
		}
	}
	if len(set.rules) == 0 {
		return nil
	}
	return set
}

// Overrides are globs that select files the way ripgrep's -g flag does: a
// file is listed only if it matches a glob (when any glob is not negated),
// "!" globs exclude, the last matching glob wins, and a match beats the
// hidden and ignore-file rules. A glob without a slash matches a name at any
// depth; one with a slash matches the path relative to the search root.
type Overrides struct {
	rules      []rule
	whitelists int
}

// ParseOverrides checks and compiles globs.
func ParseOverrides(globs ...string) (*Overrides, error) {
	o := &Overrides{}
	for _, g := range globs {
		r, ok := parseRule(g)
		if !ok {
			return nil, fmt.Errorf("invalid glob pattern %q: it is empty or a comment", g)
		}
		if !doublestar.ValidatePattern(r.pattern) {
			return nil, fmt.Errorf("invalid glob pattern %q: unbalanced brackets or braces", g)
		}
		o.rules = append(o.rules, r)
		if !r.negate {
			o.whitelists++
		}
	}
	return o, nil
}

// match returns the overrides' verdict on rel, a slash-separated path
// relative to the search root.
func (o *Overrides) match(rel string, isDir bool) verdict {
	if o == nil || len(o.rules) == 0 {
		return undecided
	}
	for i := len(o.rules) - 1; i >= 0; i-- {
		if r := o.rules[i]; r.matches(rel, isDir) {
			if r.negate {
				return ignored
			}
			return whitelisted
		}
	}
	if o.whitelists > 0 && !isDir {
		return ignored
	}
	return undecided
}
