package visualizer

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// isTerminal reports whether f is a terminal: it answers the terminal
// attributes request, which /dev/null and pipes do not.
func isTerminal(f *os.File) bool {
	var t unix.Termios
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), unix.TCGETS, uintptr(unsafe.Pointer(&t)))
	return errno == 0
}

// termWidth returns the number of columns of terminal f, or 0.
func termWidth(f *os.File) int {
	var ws struct{ rows, cols, x, y uint16 }
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), unix.TIOCGWINSZ, uintptr(unsafe.Pointer(&ws)))
	if errno != 0 {
		return 0
	}
	return int(ws.cols)
}
