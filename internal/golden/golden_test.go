package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	errs  []string
	fatal bool
}

func (r *recorder) Helper()                   {}
func (r *recorder) Errorf(f string, a ...any) { r.errs = append(r.errs, f) }
func (r *recorder) Fatalf(f string, a ...any) { r.fatal = true; panic(r) }
func (r *recorder) Fatal(a ...any)            { r.fatal = true; panic(r) }

func check(r *recorder, path string, got []byte) (ok bool) {
	defer func() {
		if p := recover(); p != nil && p != r {
			panic(p)
		}
	}()
	return Check(r, path, got)
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "x.golden")

	r := &recorder{TB: t}
	if check(r, path, []byte("a\n")) || !r.fatal {
		t.Errorf("a missing file: ok, fatal = %v, want a fatal error", r.fatal)
	}

	*update = true
	r = &recorder{TB: t}
	ok := check(r, path, []byte("a\nb\n"))
	*update = false
	if !ok || len(r.errs) > 0 || r.fatal {
		t.Fatalf("-update: ok %v, errors %v", ok, r.errs)
	}
	if b, _ := os.ReadFile(path); string(b) != "a\nb\n" {
		t.Fatalf("-update wrote %q", b)
	}

	r = &recorder{TB: t}
	if !check(r, path, []byte("a\nb\n")) || len(r.errs) > 0 {
		t.Errorf("same output: errors %v", r.errs)
	}
	r = &recorder{TB: t}
	if check(r, path, []byte("a\nc\n")) || len(r.errs) != 1 || !strings.Contains(r.errs[0], "differs") {
		t.Errorf("changed output: errors %v", r.errs)
	}
}
