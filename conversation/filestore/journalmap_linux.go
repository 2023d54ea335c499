package filestore

import "golang.org/x/sys/unix"

// mapJournal reserves the first size bytes of the journal on disk and maps
// them. A store into a shared file mapping lands in the page cache, so it
// survives the process being killed as a write(2) would, without the
// system call. Reserving the blocks first means filling a page cannot fail
// for lack of disk space, which would arrive as SIGBUS.
func mapJournal(fd, size int) ([]byte, error) {
	if err := unix.Fallocate(fd, 0, 0, int64(size)); err != nil {
		return nil, err
	}
	return unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
}
