package varref

import "testing"

func TestExpand(t *testing.T) {
	lookup := func(n string) (string, bool) {
		v, ok := map[string]string{"TOK": "s3cret", "EMPTY": ""}[n]
		return v, ok
	}
	for _, c := range []struct {
		in   string
		opts Options
		want string
	}{
		{"a ${TOK} b", Options{}, "a s3cret b"},
		{"$TOK ${TOK}", Options{}, "$TOK s3cret"},
		{"$TOK ${TOK}", Options{Unbraced: true}, "s3cret s3cret"},
		{"${NOPE:-d} ${NOPE}", Options{}, "${NOPE:-d} ${NOPE}"},
		{"${NOPE:-d} ${NOPE}", Options{Defaults: true}, "d ${NOPE}"},
		{"${TOK:-d}", Options{Defaults: true}, "s3cret"},
		{"${EMPTY}x", Options{}, "x"},
	} {
		if got := Expand(c.in, lookup, c.opts); got != c.want {
			t.Errorf("Expand(%q, %+v) = %q, want %q", c.in, c.opts, got, c.want)
		}
	}
}
