//go:build unix

package filestore

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
)

// readAt reads the file name of directory dirfd into buf (from its
// start, growing it as needed) and returns the bytes read. The name is
// passed as bytes with room for its NUL terminator after it, so that a
// caller reusing one name buffer opens a file without an allocation. A read that
// does not fill the space offered is taken as the end of the file, as it
// is for regular files: that saves the read that would return 0, one of
// three system calls per event file. A file cut short meanwhile is caught
// by the JSON scan or decode that follows every read.
//
// Files are opened with O_NOATIME where allowed: the first read of a file
// since it was written (every file of a conversation opened for the first
// time) would otherwise update its access time under relatime, ~2 µs of
// system time per file on ext4.
func readAt(dirfd int, name []byte, buf []byte) ([]byte, error) {
	flags := unix.O_RDONLY | unix.O_CLOEXEC
	if noAtime != 0 && !atimeRefused.Load() {
		flags |= noAtime
	}
	cname := append(name, 0)
	fd, err := openat(dirfd, cname, flags)
	if err == unix.EPERM && flags&noAtime != 0 {
		atimeRefused.Store(true) // not the owner: read as anyone may
		fd, err = openat(dirfd, cname, flags&^noAtime)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: string(name), Err: err}
	}
	defer unix.Close(fd)
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			if len(buf) > maxEventFileBytes {
				return nil, fmt.Errorf("%s is larger than %d bytes", name, maxEventFileBytes)
			}
			buf = append(buf, make([]byte, max(cap(buf), 4096))...)[:len(buf)]
		}
		m, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: string(name), Err: err}
		}
		short := m < cap(buf)-len(buf)
		buf = buf[:len(buf)+m]
		if m == 0 || short {
			return buf, nil
		}
	}
}

// openat is unix.Openat for a NUL-terminated name, which it does not
// copy, retrying on EINTR.
func openat(dirfd int, cname []byte, flags int) (int, error) {
	for {
		fd, _, errno := unix.Syscall6(unix.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(&cname[0])), uintptr(flags), 0, 0, 0)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return -1, errno
		}
		return int(fd), nil
	}
}

// readEvents is ReadEvents for the events directory evdir. The files are
// read and decoded on a few goroutines, as a cache-less Open reads them;
// each event's short strings share blocks with the others its goroutine
// decoded.
func readEvents(evdir string) ([]event.Event, error) {
	dfd, err := unix.Open(evdir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err == unix.ENOENT {
		return nil, nil
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: evdir, Err: err}
	}
	defer unix.Close(dfd)
	names, err := readDirNames(evdir)
	if err != nil {
		return nil, err
	}
	files := logOrder(names)
	events := make([]event.Event, len(files))
	errs := make([]error, len(files))
	scanAll(len(files), func(sc *scanner, i int) {
		sc.name = append(sc.name[:0], files[i]...)
		data, err := sc.read(dfd, sc.name)
		if err != nil {
			if pe, ok := err.(*os.PathError); ok {
				pe.Path = filepath.Join(evdir, files[i])
			}
			errs[i] = err
			return
		}
		if events[i], _, err = event.UnmarshalKeys(data, &sc.strs); err != nil {
			errs[i] = fmt.Errorf("%s: %w", files[i], err)
		}
	})
	for i, err := range errs {
		if err != nil {
			return events[:i], err
		}
	}
	return events, nil
}

// atimeRefused is set once an open with O_NOATIME has failed with EPERM.
var atimeRefused atomic.Bool

// scanFiles fills the entries the index cache did not (have[i] false)
// from their files, on a few goroutines: for a conversation the reference
// wrote, which has no cache, reading a thousand small files is most of
// an open. It records each file's checksum in s.sums and returns each
// index's error, nil if none failed, and what decoding each file gave
// (nil if no file was decoded) for Store.keep.
//
// Each file is decoded here, while its bytes are at hand: a cache-less
// open is nearly always followed by a replay or a resume that decodes
// every event in log order on one goroutine, while here the decoding is
// spread over the open's goroutines (half the wall time on two cores).
// The bytes themselves are not kept: each goroutine reads every file into
// one buffer, so the scan touches no fresh memory for them (a fresh
// process pays a page fault per 4 KB page it touches first, ~1 µs each).
// Raw reads a file again, checked against the size and checksum taken
// here. A file that does not decode keeps its error for Event.
func (s *Store) scanFiles(ids []string, entries []conversation.Entry, have []bool) (errs []error, kept []keptFile) {
	var todo []int
	for i := range ids {
		if !have[i] {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return nil, nil
	}
	kept = make([]keptFile, len(ids))
	var (
		errOnce     sync.Once
		decodeBytes atomic.Int64
	)
	scanAll(len(todo), func(sc *scanner, j int) {
		i := todo[j]
		if err := s.scanFile(sc, i, ids[i], &entries[i], &kept[i], &decodeBytes); err != nil {
			errOnce.Do(func() { errs = make([]error, len(ids)) })
			errs[i] = err // distinct i per goroutine
		}
	})
	return errs, kept
}

// scanner is what one scanning goroutine reuses from file to file: the
// buffer files are read into, the name being opened, and the blocks the
// decoded events' short strings are copied into (so the events of one
// scan are kept together).
type scanner struct {
	buf, name []byte
	strs      event.Strings
}

// read reads file name of directory dirfd into sc.buf and returns its
// bytes, valid until the next read. Name may be sc.name.
func (sc *scanner) read(dirfd int, name []byte) ([]byte, error) {
	if sc.buf == nil {
		sc.buf = make([]byte, 0, scanBufSize)
	}
	data, err := readAt(dirfd, name, sc.buf[:0])
	if err != nil {
		return nil, err
	}
	sc.buf = data[:0]
	return data, nil
}

// scanAll calls f for items 0 to n-1 on a few goroutines, one scanner
// each, and returns when all are done. The goroutines take the items a
// few at a time from a shared counter, not a fixed share each: on a busy
// machine one of them may wait for a core while the other goes on.
func scanAll(n int, f func(sc *scanner, i int)) {
	var next atomic.Int64
	const chunk = 16
	scan := func() {
		var sc scanner
		for {
			lo := int(next.Add(chunk)) - chunk
			if lo >= n {
				return
			}
			for i := lo; i < min(lo+chunk, n); i++ {
				f(&sc, i)
			}
		}
	}
	workers := min(runtime.GOMAXPROCS(0), 4, n/64+1)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(scan)
	}
	wg.Wait()
}

// scanFile reads event file i (id id) with sc, fills its entry and
// checksum, and, while decodeBytes (the bytes of the files decoded so
// far) stays within maxKeptBytes, decodes it into *kept.
func (s *Store) scanFile(sc *scanner, i int, id string, ent *conversation.Entry, kept *keptFile, decodeBytes *atomic.Int64) error {
	sc.name = appendEventFileName(sc.name[:0], i, id)
	data, err := sc.read(s.eventsFD, sc.name)
	if err != nil {
		return err
	}
	s.sums[i] = fileSum{checksum(data), true}
	var (
		k    keptFile
		keys event.Keys
	)
	if decodeBytes.Add(int64(len(data))) <= maxKeptBytes {
		// The decoder copies what it keeps: buf can be reused
		// (TestCachelessOpenKeepsNoBytes).
		k.ev, keys, k.err = event.UnmarshalKeys(data, &sc.strs)
	}
	if k.ev != nil {
		// It decoded, so it is well-formed: no need to check it again,
		// nor to scan it at all if the decoder saw all its keys.
		*ent, err = conversation.DecodedEntry(i, data, k.ev, keys)
	} else {
		*ent, err = conversation.ScanEntry(i, data)
	}
	if err == nil && ent.ID != id {
		err = fmt.Errorf("file name says id %s, content says %s", id, ent.ID)
	}
	if err != nil {
		return err
	}
	*kept = k
	return nil
}

// scanBufSize is the buffer each scanning goroutine starts with: larger
// than most event files (a larger one grows it).
const scanBufSize = 16 << 10

// keptFile is what a cache-less open's decoding of one event file gave:
// the event, or the error. Both are zero where the file was not decoded.
type keptFile struct {
	ev  event.Event
	err error
}

// keep makes kept (by index) what Event returns before reading a file,
// for keepScanned at most. It reports
// whether it kept anything; if so, it calls releaseGC once all is taken
// or dropped.
func (s *Store) keep(kept []keptFile, releaseGC func()) bool {
	n := 0
	for _, k := range kept {
		if k.ev != nil || k.err != nil {
			n++
		}
	}
	if n == 0 {
		return false
	}
	s.keptMu.Lock()
	defer s.keptMu.Unlock()
	s.kept, s.keptN, s.keptGC = kept, n, releaseGC
	s.keptTimer = time.AfterFunc(keepScanned, s.dropKept)
	return true
}

// takeKept returns what the open's decoding of event i's file gave, ok
// false if it has none, and forgets it: the caller owns the event.
func (s *Store) takeKept(i int) (k keptFile, ok bool) {
	s.keptMu.Lock()
	defer s.keptMu.Unlock()
	if i >= len(s.kept) || s.kept[i] == (keptFile{}) {
		return keptFile{}, false
	}
	k = s.kept[i]
	s.kept[i] = keptFile{}
	if s.keptN--; s.keptN == 0 {
		s.kept = nil
		s.keptTimer.Stop()
		s.releaseKeptGC()
	}
	return k, true
}

// releaseKeptGC releases the collector goal the kept files held, if any;
// under keptMu.
func (s *Store) releaseKeptGC() {
	if s.keptGC != nil {
		s.keptGC()
		s.keptGC = nil
	}
}

func (s *Store) dropKept() {
	s.keptMu.Lock()
	defer s.keptMu.Unlock()
	if s.keptTimer != nil {
		s.keptTimer.Stop()
	}
	s.kept, s.keptN = nil, 0
	s.releaseKeptGC()
}
