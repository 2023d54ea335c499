package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/testenv"
)

// TestMain lets the test binary be the gohands child of replay and
// resume, as the compare binary is.
func TestMain(m *testing.M) {
	if runChild() {
		return
	}
	os.Exit(m.Run())
}

// TestCompareSmall runs the whole comparison at a small size and checks
// that the table is complete: every row, a positive figure on each side.
// It never looks at the figures themselves.
func TestCompareSmall(t *testing.T) {
	py := testenv.ReferencePython(t)
	goTool := testenv.Program(t, "go")
	bin := filepath.Join(t.TempDir(), "gohands")
	if out, err := exec.Command(goTool, "build", "-o", bin, "github.com/gohands/gohands/cmd/gohands").CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/gohands: %v\n%s", err, out)
	}
	c := &config{Gohands: bin, Python: py, Steps: 2, Runs: 1, ReplaySteps: 3, Replays: 1, Conversations: 2,
		Concurrent: 3, CrowdSteps: 2, Latency: 50 * time.Millisecond, Stored: 30, Log: testWriter{t}}
	tab, err := compare(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	tab.write(&b)
	t.Logf("\n%s", b.String())

	want := []string{
		"start-up, one model call: wall (s)", "start-up, one model call: CPU (s)", "start-up, one model call: peak RSS (MB)",
		"2 think steps: wall (s)", "2 think steps: CPU (s)", "2 think steps: peak RSS (MB)",
		"2 terminal steps: wall (s)", "2 terminal steps: CPU (s)", "2 terminal steps: peak RSS (MB)",
		"full replay of the stored conversation (ms)", "resume of it to the first model request (ms)",
		"server: create 2 conversations (ms)", "server: idle RSS (MB)", "server: RSS per idle conversation (MB)",
	}
	crowd := "server: 3 conversations running at once, 2 steps each, model latency 50ms: "
	for _, r := range []string{"wall (s)", "steps per second", "agent's time per step p50 (ms)", "agent's time per step p99 (ms)", "peak RSS (MB)", "RSS per running conversation (MB)"} {
		want = append(want, crowd+r)
	}
	for _, r := range []string{"to /health (ms)", "to the first page of 100 listed (ms)", "each of the first pages of 100 (ms)", "RSS (MB)"} {
		want = append(want, "server: start-up over 30 stored conversations: "+r)
	}
	rows := map[string][]string{}
	for line := range strings.Lines(b.String()) {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) == 4 {
			rows[strings.TrimSpace(cells[0])] = cells[1:]
		}
	}
	for _, row := range want {
		cells, ok := rows[row]
		if !ok {
			t.Errorf("no row %q", row)
			continue
		}
		for i, side := range []string{"reference", "gohands"} {
			v, err := strconv.ParseFloat(strings.TrimSpace(cells[i]), 64)
			if err != nil || v <= 0 {
				// Memory per idle conversation may round to zero
				// only if the server took none: still a figure.
				if !(err == nil && strings.HasPrefix(row, "server: RSS per")) {
					t.Errorf("row %q: %s figure %q", row, side, cells[i])
				}
			}
		}
		if strings.TrimSpace(cells[2]) == "-" && !strings.HasPrefix(row, "server: RSS per") {
			t.Errorf("row %q: no ratio", row)
		}
	}
	if len(rows) != len(want)+2 { // the header and its rule too
		t.Errorf("%d rows, want %d", len(rows)-1, len(want))
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
