package filestore_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/internal/testenv"
)

// TestReadOthersFiles: event files are opened with O_NOATIME, which only
// their owner (or CAP_FOWNER) may use; a reader that is neither still
// reads every event. The reader is this binary run by root without
// CAP_FOWNER on files owned by another user.
func TestReadOthersFiles(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Missing(t, "root, to give the event files another owner")
	}
	setpriv := testenv.Program(t, "setpriv")
	dir, evs := writeLog(t, 6)
	os.Remove(filepath.Join(dir, filestore.IndexFile)) // every file read by the open
	for i, e := range evs {
		if err := os.Chown(eventPath(dir, i, e.EventBase().ID), 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(setpriv, "--bounding-set", "-fowner", "--inh-caps", "-fowner", "--", os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=reader", "DIR="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if got := strings.TrimSpace(string(out)); err != nil || got != "read 6" {
		t.Fatalf("reader without CAP_FOWNER: %q, %v\n%s", got, err, stderr.String())
	}
}
