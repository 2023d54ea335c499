//go:build unix

package archive

import (
	"os"

	"golang.org/x/sys/unix"
)

// openFlags open a file without blocking on a FIFO that took its place,
// nor following a symbolic link that did.
const openFlags = os.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_NOFOLLOW
