// Package lazyregexp holds package-level regular expressions that are
// compiled when first used rather than when the program starts: a
// regexp.MustCompile in a package variable costs every program that
// imports the package, whether it ever matches anything or not.
//
// In a test binary the expressions compile at once, so that a bad one
// fails the package's tests rather than whichever call reaches it first.
package lazyregexp

import (
	"os"
	"regexp"
	"strings"
	"sync"
)

// A Regexp is a regexp.Regexp compiled on first use. It is safe for
// concurrent use.
type Regexp struct {
	expr string
	re   func() *regexp.Regexp
}

// inTest reports whether this is a test binary (as go test names them).
var inTest = len(os.Args) > 0 && strings.HasSuffix(strings.TrimSuffix(os.Args[0], ".exe"), ".test")

// New returns expr as a Regexp that is compiled, with regexp.MustCompile,
// when first used.
func New(expr string) *Regexp {
	r := &Regexp{expr: expr, re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })}
	if inTest {
		r.re()
	}
	return r
}

// Regexp returns the compiled expression, compiling it if need be.
func (r *Regexp) Regexp() *regexp.Regexp { return r.re() }

// String returns the source text of the expression.
func (r *Regexp) String() string { return r.expr }

// MatchString is regexp.Regexp.MatchString.
func (r *Regexp) MatchString(s string) bool { return r.re().MatchString(s) }

// FindString is regexp.Regexp.FindString.
func (r *Regexp) FindString(s string) string { return r.re().FindString(s) }

// FindStringSubmatch is regexp.Regexp.FindStringSubmatch.
func (r *Regexp) FindStringSubmatch(s string) []string { return r.re().FindStringSubmatch(s) }

// FindAllString is regexp.Regexp.FindAllString.
func (r *Regexp) FindAllString(s string, n int) []string { return r.re().FindAllString(s, n) }

// FindAllStringSubmatch is regexp.Regexp.FindAllStringSubmatch.
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.re().FindAllStringSubmatch(s, n)
}

// ReplaceAllString is regexp.Regexp.ReplaceAllString.
func (r *Regexp) ReplaceAllString(src, repl string) string { return r.re().ReplaceAllString(src, repl) }

// ReplaceAllStringFunc is regexp.Regexp.ReplaceAllStringFunc.
func (r *Regexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return r.re().ReplaceAllStringFunc(src, repl)
}
