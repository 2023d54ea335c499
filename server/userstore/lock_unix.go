//go:build unix

package userstore

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes f's exclusive advisory lock, which other processes (the
// reference's server on the same files) respect too.
func lockFile(f *os.File) (unlock func(), err error) {
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		return nil, err
	}
	return func() { unix.Flock(int(f.Fd()), unix.LOCK_UN) }, nil
}
