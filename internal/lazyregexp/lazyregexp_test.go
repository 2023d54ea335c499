package lazyregexp

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

func TestMatches(t *testing.T) {
	r := New(`^([a-z]+)-(\d+)$`)
	if !r.MatchString("abc-12") || r.MatchString("abc-") {
		t.Error("MatchString")
	}
	if m := r.FindStringSubmatch("ab-3"); len(m) != 3 || m[1] != "ab" || m[2] != "3" {
		t.Errorf("FindStringSubmatch = %q", m)
	}
	w := New(`\d+`)
	if got := w.ReplaceAllString("a1b22", "#"); got != "a#b#" {
		t.Errorf("ReplaceAllString = %q", got)
	}
	if got := w.FindAllString("1 2 3", -1); strings.Join(got, ",") != "1,2,3" {
		t.Errorf("FindAllString = %q", got)
	}
	if w.String() != `\d+` || w.Regexp().String() != `\d+` {
		t.Errorf("String = %q", w.String())
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { w.MatchString("7") })
	}
	wg.Wait()
}

// Outside a test binary nothing is compiled until first use, so a bad
// expression panics only then; inside one it panics at New.
func TestCompiledOnFirstUse(t *testing.T) {
	if os.Getenv("LAZYREGEXP_CHILD") == "1" {
		inTest = false
		r := New(`(`) // would panic here if compiled at once
		os.Stdout.WriteString("made\n")
		r.MatchString("x")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestCompiledOnFirstUse$")
	cmd.Env = append(os.Environ(), "LAZYREGEXP_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "made\n") || !strings.Contains(string(out), "missing closing )") {
		t.Errorf("want New to succeed and the first match to panic; err %v, output:\n%s", err, out)
	}
	defer func() {
		if recover() == nil {
			t.Error("New of a bad expression did not panic in a test binary")
		}
	}()
	New(`(`)
}
