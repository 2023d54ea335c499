package visualizer

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gohands/gohands/internal/testenv"
)

// Files that are no terminal answer neither ioctl.
func TestNotATerminal(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, f := range []*os.File{null, r, w} {
		if isTerminal(f) || termWidth(f) != 0 {
			t.Errorf("%s: isTerminal %v, termWidth %d; want false, 0", f.Name(), isTerminal(f), termWidth(f))
		}
	}
}

// A pseudo-terminal is one, and reports the width set on it.
func TestPseudoTerminal(t *testing.T) {
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		testenv.Missing(t, "/dev/ptmx: %v", err)
	}
	defer ptmx.Close()
	if err := unix.IoctlSetWinsize(int(ptmx.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 123}); err != nil {
		t.Fatal(err)
	}
	if !isTerminal(ptmx) {
		t.Error("isTerminal(/dev/ptmx) = false")
	}
	if w := termWidth(ptmx); w != 123 {
		t.Errorf("termWidth = %d, want 123", w)
	}
}
