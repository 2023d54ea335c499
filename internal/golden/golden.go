// Package golden compares a test's output with a file under testdata, and
// rewrites the file instead when the test binary runs with -update. Every
// package's golden tests share this one flag:
//
//	go test ./event/ -run Golden -update
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata instead of comparing with them")

// Update reports whether the test binary runs with -update, for tests that
// write their golden files themselves (a tree of files, a file produced by
// another program).
func Update() bool { return *update }

// Check compares got with the file at path and reports a difference as an
// error of t; with -update it writes got to path, creating its directory.
// It reports whether got matched (or was written).
func Check(t testing.TB, path string, got []byte) bool {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return true
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if bytes.Equal(got, want) {
		return true
	}
	t.Errorf("%s differs (-want +got; go test -update rewrites it after a deliberate change):\n%s", path, cmp.Diff(string(want), string(got)))
	return false
}
