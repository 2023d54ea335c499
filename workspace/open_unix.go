//go:build unix

package workspace

import (
	"os"

	"golang.org/x/sys/unix"
)

// openNonBlocking opens path read-only; O_NONBLOCK makes opening a FIFO
// return at once (it changes nothing for a regular file's reads).
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
}
