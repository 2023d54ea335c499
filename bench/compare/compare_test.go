package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/pgtest"
	"github.com/gohands/gohands/internal/testenv"
)

// TestMain lets the test binary be the gohands child of replay and
// resume, as the compare binary is.
func TestMain(m *testing.M) {
	if runChild() {
		return
	}
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// TestCompareSmall runs the whole comparison at a small size and checks
// that the table is complete: every row, a positive figure on each side.
// It never looks at the figures themselves. The process jobs and the
// server jobs run as two comparisons at once: each is a chain of
// programs, the reference's taking seconds of CPU each to start, and on
// a loaded machine two chains get twice the share of one.
func TestCompareSmall(t *testing.T) {
	t.Parallel()
	py := testenv.ReferencePython(t)
	bin := gohandsBinary(t)
	// The smallest sizes, RSS read without waiting, one server per side
	// for the server jobs, and the reference's think run as the stored
	// conversation (as many steps): the reference's start-ups (seconds
	// each, tens under load) are most of the time.
	config := func(jobs string) *config {
		return &config{Gohands: bin, Python: py, Steps: 2, Runs: 1, ReplaySteps: 2, Replays: 1, Conversations: 2,
			Concurrent: 3, CrowdSteps: 2, Latency: 50 * time.Millisecond, Stored: 30, Log: testWriter{t},
			Settle: time.Millisecond, OneServer: true, Jobs: jobs}
	}
	t.Run("process,replay", func(t *testing.T) {
		t.Parallel()
		c := config("process,replay")
		c.OneServer = false // no server jobs
		checkTable(t, c, []string{
			"start-up, one model call: wall (s)", "start-up, one model call: CPU (s)", "start-up, one model call: peak RSS (MB)",
			"2 think steps: wall (s)", "2 think steps: CPU (s)", "2 think steps: peak RSS (MB)",
			"2 terminal steps: wall (s)", "2 terminal steps: CPU (s)", "2 terminal steps: peak RSS (MB)",
			"full replay of the stored conversation (ms)", openRow, "resume of it to the first model request (ms)",
		})
	})
	t.Run("server,crowd,startup", func(t *testing.T) {
		t.Parallel()
		want := []string{"server: create 2 conversations (ms)", "server: idle RSS (MB)", "server: RSS per idle conversation (MB)"}
		crowd := "server: 3 conversations running at once, 2 steps each, model latency 50ms: "
		for _, r := range []string{"wall (s)", "steps per second", "agent's time per step p50 (ms)", "agent's time per step p99 (ms)", "peak RSS (MB)", "RSS per running conversation (MB)"} {
			want = append(want, crowd+r)
		}
		for _, r := range []string{"to /health (ms)", "to the first page of 100 listed (ms)", "each of the first pages of 100 (ms)", "RSS (MB)"} {
			want = append(want, "server: start-up over 30 stored conversations: "+r)
		}
		checkTable(t, config("server,crowd,startup"), want)
	})
}

// checkTable runs the comparison c and checks that its table has the
// rows want, and only those, each with a positive figure on each side and
// a ratio (openRow: a gohands figure only).
func checkTable(t *testing.T, c *config, want []string) {
	c.Log = testWriter{t}
	tab, err := compare(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	tab.write(&b)
	t.Logf("\n%s", b.String())

	rows := tableRows(b.String())
	for _, row := range want {
		cells, ok := rows[row]
		if !ok {
			t.Errorf("no row %q", row)
			continue
		}
		if row == openRow { // gohands only
			if v, err := strconv.ParseFloat(strings.TrimSpace(cells[1]), 64); err != nil || v <= 0 || strings.TrimSpace(cells[0]) != "-" {
				t.Errorf("row %q: %q", row, cells)
			}
			continue
		}
		for i, side := range []string{"reference", "gohands"} {
			v, err := strconv.ParseFloat(strings.TrimSpace(cells[i]), 64)
			if err != nil || v <= 0 {
				// Memory per conversation is a difference of two
				// readings of a server that, here, holds the other
				// jobs' conversations too (OneServer): any figure will
				// do.
				if !(err == nil && strings.Contains(row, "RSS per")) {
					t.Errorf("row %q: %s figure %q", row, side, cells[i])
				}
			}
		}
		if strings.TrimSpace(cells[2]) == "-" && !strings.Contains(row, "RSS per") {
			t.Errorf("row %q: no ratio", row)
		}
	}
	if len(rows) != len(want)+2 { // the header and its rule too
		t.Errorf("%d rows, want %d", len(rows)-1, len(want))
	}
}

// TestCompareCluster runs the cluster job (gohands only) at a small size:
// every row, and every read through node B answered after node A was
// killed.
func TestCompareCluster(t *testing.T) {
	t.Parallel()
	if _, err := pgtest.BinDir(); err != nil {
		testenv.Missing(t, "%v", err)
	}
	c := &config{Gohands: gohandsBinary(t), Jobs: "cluster", Sides: "gohands", Runs: 1,
		ClusterConversations: 3, ClusterRounds: 2, Log: testWriter{t}}
	tab, err := compare(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	tab.write(&b)
	t.Logf("\n%s", b.String())
	rows := tableRows(b.String())
	prefix := "cluster: 2 nodes on PostgreSQL, node A killed (SIGKILL), reads of its 3 finished conversations through node B: "
	for _, r := range []string{"answered (%)", "latency p50 (ms)", "latency p99 (ms)", "from the kill to the first answer (ms)"} {
		cells, ok := rows[prefix+r]
		if !ok {
			t.Errorf("no row %q", prefix+r)
			continue
		}
		if ref := strings.TrimSpace(cells[0]); ref != "-" {
			t.Errorf("row %q: reference figure %q, want -", r, ref)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(cells[1]), 64)
		if err != nil || v <= 0 {
			t.Errorf("row %q: gohands figure %q", r, cells[1])
		}
		if r == "answered (%)" && v != 100 {
			t.Errorf("%s%% of the reads through node B answered, want all", cells[1])
		}
	}
	if len(rows) != 4+2 {
		t.Errorf("%d rows, want 4", len(rows)-2)
	}
}

// gohandsBinary builds cmd/gohands once for the tests: with the race
// detector when they run with it, so that its packages come from the
// build cache the test binary filled.
func gohandsBinary(t *testing.T) string {
	bin, err := buildGohands()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// buildDir holds the binary gohandsBinary built, if it did.
var buildDir string

var buildGohands = sync.OnceValues(func() (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", err
	}
	if buildDir, err = os.MkdirTemp("", "gohands-compare-test-"); err != nil {
		return "", err
	}
	bin := filepath.Join(buildDir, "gohands")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	if out, err := exec.Command(goTool, append(args, "github.com/gohands/gohands/cmd/gohands")...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/gohands: %v\n%s", err, out)
	}
	return bin, nil
})

// tableRows returns the cells of each row of a table that write printed,
// by the row's name; the header and its rule are rows too.
func tableRows(s string) map[string][]string {
	rows := map[string][]string{}
	for line := range strings.Lines(s) {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) == 4 {
			rows[strings.TrimSpace(cells[0])] = cells[1:]
		}
	}
	return rows
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
