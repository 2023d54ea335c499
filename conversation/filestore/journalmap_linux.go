package filestore

import "syscall"

// mapJournal reserves the first size bytes of the journal on disk and maps
// them. A store into a shared file mapping lands in the page cache, so it
// survives the process being killed as a write(2) would, without the
// system call. Reserving the blocks first means filling a page cannot fail
// for lack of disk space, which would arrive as SIGBUS.
func mapJournal(fd, size int) ([]byte, error) {
	if err := syscall.Fallocate(fd, 0, 0, int64(size)); err != nil {
		return nil, err
	}
	return syscall.Mmap(fd, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
}
