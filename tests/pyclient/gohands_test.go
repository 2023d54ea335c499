package pyclient_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gohands/gohands/internal/testenv"
)

// TestGohandsServer runs the client program against `gohands serve` and
// compares its transcript with the reference server's.
func TestGohandsServer(t *testing.T) {
	t.Parallel()
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

// TestGohandsServerLateArm runs the confirm scenario with the reference
// client arming itself for a run's end a second after the server has
// answered POST /run (testdata/late_arm.py): the run that stops to wait
// for confirmation is over, and its full_state snapshot sent, before the
// client listens for it. The client then polls GET /api/conversations/{id}
// each second; it must still see a snapshot of the ended run, and each
// run must return well before the program's 20 s timeout. On a loaded
// machine the same interleaving happens without the delay (the client's
// thread loses the CPU between the answer and the arming): it timed out
// TestGohandsServer's confirm scenario.
func TestGohandsServerLateArm(t *testing.T) {
	t.Parallel()
	want := readGolden(t)["scenarios"].(map[string]any)["confirm"]
	py := testenv.ReferencePython(t)
	srv := model(t)
	g := startGohandsServer(t)
	got := runProgram(t, py, "late_arm.py", g.URL, srv.URL, "--delay", "1", "--timeout", "20")
	if n, _ := got["late_runs"].(float64); n != 3 {
		t.Errorf("%v POST /run answers were held, want 3", got["late_runs"])
	}
	if diff := cmp.Diff(want, got["scenarios"].(map[string]any)["confirm"]); diff != "" {
		t.Errorf("confirm scenario (-reference +gohands, late arming):\n%s", diff)
	}
}
