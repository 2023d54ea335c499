package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrNotRegular is returned by OpenRegular for a path that is not a
// regular file: a directory, or a special file (a FIFO, a device, a
// socket) whose reads could block forever or never end.
var ErrNotRegular = errors.New("not a regular file")

// OpenRegular opens path for reading if it is a regular file (following
// symlinks). It never blocks: a FIFO is opened without waiting for a
// writer, then refused, as is every other special file. The file's
// information is that of the opened file, so it cannot be swapped between
// the check and the read.
func OpenRegular(path string) (*os.File, fs.FileInfo, error) {
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, fileType(fi.Mode()))
	}
	return f, fi, nil
}

func fileType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	}
	return "a special file"
}
