package filewalk

import (
	"path"
	"testing"
)

// FuzzRules checks that no ignore-file line or override glob, however
// malformed, makes parsing or matching panic, and that a pattern without
// magic characters or a slash matches its own name.
func FuzzRules(f *testing.F) {
	for _, s := range []string{"*.go", "!keep.log", "build/", "/root.txt", "a/**/b", "\\#x", "[a-", "{a,b", "x\\ ", "**", "*.{go,mod}"} {
		f.Add(s, "dir/"+s)
	}
	f.Fuzz(func(t *testing.T, line, rel string) {
		if r, ok := parseRule(line); ok {
			r.matches(rel, false)
			r.matches(rel, true)
		}
		o, err := ParseOverrides(line)
		if err != nil {
			return
		}
		o.match(rel, false)
		o.match(rel, true)
		name := path.Base(rel)
		if line == name && name != "" && name[0] != '!' && name[0] != '#' && !hasMeta(name) && name == rel {
			if o.match(rel, false) != whitelisted {
				t.Errorf("override %q does not select %q", line, rel)
			}
		}
	})
}

func hasMeta(s string) bool {
	for _, c := range s {
		switch c {
		case '*', '?', '[', ']', '{', '}', '\\', '/', ' ', '\r', '.':
			return true
		}
	}
	return false
}
