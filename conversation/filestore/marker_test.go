package filestore_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/conversation/internal/convtest"
	"github.com/gohands/gohands/internal/refenv"
	"github.com/gohands/gohands/internal/testenv"
)

func markers(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, filestore.EventsDir, filestore.LengthMarkerPrefix+"*"+filestore.LengthMarkerSuffix))
	if err != nil {
		t.Fatal(err)
	}
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	return m
}

// A store removes the reference's length marker when it takes the lock
// and leaves the marker of the final length when it releases it.
func TestLengthMarker(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, filestore.EventsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, filestore.EventsDir, ".eventlog-len-0.marker")
	if err := os.WriteFile(stale, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s := openLogT(t, dir)
	if m := markers(t, dir); len(m) != 0 {
		t.Fatalf("markers while open: %v", m)
	}
	for i := range 3 {
		if _, err := s.Append(convtest.UserMessage(fmt.Sprint("m", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if m := markers(t, dir); len(m) != 1 || m[0] != ".eventlog-len-3.marker" {
		t.Fatalf("markers after close: %v", m)
	}
	s = openLogT(t, dir) // the marker is not an event file: no warning, no damage
	if s.Len() != 3 {
		t.Fatalf("Len = %d", s.Len())
	}
	s.Close()
}

// A real reference 1.58.2 process keeps the event log open while gohands
// appends two events: its next append takes index 3 + 2, not the index it
// last knew, and the log has no duplicate index.
func TestReference158WriterBeside(t *testing.T) {
	// In parallel with the other reference test: each waits seconds on
	// the reference's import; neither uses SetWriteFault, whose tests run
	// before the parallel ones.
	t.Parallel()
	py := testenv.Reference158Python(t)
	dir := t.TempDir()
	home := t.TempDir()
	t.Cleanup(func() { refenv.Cleanup(home) })
	cmd := exec.Command(py, filepath.Join("testdata", "python-v1.58.2", "writer.py"), dir)
	cmd.Env = refenv.Env(home, "OPENHANDS_SUPPRESS_BANNER=1")
	cmd.Stderr = io.Discard
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	out := bufio.NewScanner(outPipe)
	expect := func(prefix string) string {
		t.Helper()
		for out.Scan() {
			if line := out.Text(); strings.HasPrefix(line, prefix) {
				return strings.TrimSpace(strings.TrimPrefix(line, prefix))
			}
		}
		t.Fatalf("the reference writer ended before %q: %v", prefix, out.Err())
		return ""
	}
	if got := expect("first"); got != "0" {
		t.Fatalf("python's first append got index %s", got)
	}
	expect("ready")
	if m := markers(t, dir); len(m) != 1 || m[0] != ".eventlog-len-1.marker" {
		t.Fatalf("the reference left markers %v", m)
	}

	s := openLogT(t, dir)
	for _, text := range []string{"from gohands, 1", "from gohands, 2"} {
		if _, err := s.Append(convtest.UserMessage(text)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(in, "go")
	if got := expect("second"); got != "3" {
		t.Fatalf("python's second append got index %s, want 3 (after gohands' two)", got)
	}
	cmd.Wait()

	names, _ := os.ReadDir(filepath.Join(dir, filestore.EventsDir))
	seen := map[string]string{}
	for _, n := range names {
		if !strings.HasPrefix(n.Name(), "event-") {
			continue
		}
		idx := strings.SplitN(n.Name(), "-", 3)[1]
		if prev, dup := seen[idx]; dup {
			t.Fatalf("two files with index %s: %s and %s", idx, prev, n.Name())
		}
		seen[idx] = n.Name()
	}
	s = openLogT(t, dir)
	defer s.Close()
	if s.Len() != 4 {
		t.Fatalf("gohands reads %d events, want 4", s.Len())
	}
	for i, want := range []string{"from python, first", "from gohands, 1", "from gohands, 2", "from python, second"} {
		raw, err := s.Raw(i)
		if err != nil || !strings.Contains(string(raw), want) {
			t.Errorf("event %d = %s, %v; want %q", i, raw, err, want)
		}
	}
}
