// Package varref expands references to variables in strings: ${NAME},
// ${NAME:-default} and, if asked, $NAME.
package varref

import "github.com/gohands/gohands/internal/lazyregexp"

var (
	// all matches ${NAME}, ${NAME:-default} and $NAME.
	all = lazyregexp.New(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)`)
	// braced matches ${NAME} and ${NAME:-default}.
	braced = lazyregexp.New(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)
)

// Options says which references Expand replaces.
type Options struct {
	// Unbraced expands $NAME too.
	Unbraced bool
	// Defaults gives ${NAME:-default} its default when lookup does not
	// know NAME; otherwise the reference is kept.
	Defaults bool
}

// Expand replaces the references in s to names lookup knows by their
// values; the others are kept as written (or get their default, with
// opts.Defaults).
func Expand(s string, lookup func(name string) (string, bool), opts Options) string {
	re := braced
	if opts.Unbraced {
		re = all
	}
	return re.ReplaceAllStringFunc(s, func(ref string) string {
		m := re.FindStringSubmatch(ref)
		name := m[1]
		if len(m) > 3 {
			name += m[3]
		}
		if v, ok := lookup(name); ok {
			return v
		}
		if opts.Defaults && m[1] != "" && len(ref) > len(m[1])+3 && ref[len(m[1])+2] == ':' {
			return m[2]
		}
		return ref
	})
}
