package pyclient_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gohands/gohands/internal/testenv"
)

// TestGohandsServer runs the client program against `gohands serve` and
// compares its transcript with the reference server's.
func TestGohandsServer(t *testing.T) {
	want := readGolden(t)
	py := testenv.ReferencePython(t)
	srv := model(t)
	g := startGohandsServer(t)
	got := runClient(t, py, g.URL, srv.URL)
	checkScenarios(t, got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("gohands' run differs from the reference's (%s, -reference +gohands):\n%s", transcriptGolden, diff)
	}
}
