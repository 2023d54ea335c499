package filestore

import (
	"encoding/binary"
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// readDirNames lists dir with large getdents calls: a log of a thousand
// events (~80 KB of records) lists in two system calls instead of ten.
// The names share one allocation per call. The buffer is no larger: in a
// fresh process, a replay that allocates less than the first collection's
// 4 MB goal runs no collection at all.
func readDirNames(dir string) ([]string, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	buf := make([]byte, 64<<10)
	var names []string
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "getdents", Path: dir, Err: err}
		}
		if n <= 0 {
			return names, nil
		}
		names = parseDirents(string(buf[:n]), names)
	}
}

// parseDirents appends the names in a buffer of linux_dirent64 records
// (d_ino, d_off, d_reclen, d_type, NUL-terminated d_name), except . and ..
func parseDirents(b string, names []string) []string {
	const (
		lenOff  = int(unsafe.Offsetof(unix.Dirent{}.Reclen))
		nameOff = int(unsafe.Offsetof(unix.Dirent{}.Name))
	)
	for len(b) >= nameOff {
		reclen := int(binary.NativeEndian.Uint16([]byte{b[lenOff], b[lenOff+1]}))
		if reclen < nameOff || reclen > len(b) {
			break
		}
		name := b[nameOff:reclen]
		if i := strings.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if name != "." && name != ".." {
			names = append(names, name)
		}
		b = b[reclen:]
	}
	return names
}

// noAtime is O_NOATIME: reading an event file need not write its access
// time. Only the file's owner (or a process with CAP_FOWNER) may use it;
// readAt drops it for good when it is refused.
const noAtime = unix.O_NOATIME
