package fileeditor

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// resolve returns the real location of path: symlinks are followed, so an
// edit through a link changes its target and keeps the link, and both names
// share one lock and one history. A path that does not exist yet resolves
// through its parent directory.
func resolve(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	dir, base := filepath.Split(filepath.Clean(path))
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return filepath.Join(r, base)
	}
	return filepath.Clean(path)
}

// pathLocks hands out one mutex per key, dropping it when nobody holds or
// waits for it, so the map does not grow with every file ever touched.
type pathLocks struct {
	mu sync.Mutex
	m  map[string]*pathLock
}

type pathLock struct {
	mu    sync.Mutex
	users int
}

// lock locks key and returns the function that unlocks it.
func (p *pathLocks) lock(key string) (unlock func()) {
	p.mu.Lock()
	if p.m == nil {
		p.m = make(map[string]*pathLock)
	}
	l := p.m[key]
	if l == nil {
		l = new(pathLock)
		p.m[key] = l
	}
	l.users++
	p.mu.Unlock()

	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		p.mu.Lock()
		if l.users--; l.users == 0 {
			delete(p.m, key)
		}
		p.mu.Unlock()
	}
}

// errExists is returned by writeFile when create finds the path taken.
var errExists = errors.New("file exists")

// rename and link are os.Rename and os.Link; tests replace them to
// simulate file systems that refuse them, and races.
var (
	rename = os.Rename
	link   = os.Link
)

// writeFile replaces the file at path with data atomically: data goes to a
// temporary file in the same directory, which is then renamed over path, so
// a reader or a crash sees the old content or the new, never a mix. An
// existing file keeps its permission bits. With create set, path must not
// exist (errExists otherwise) and the new file gets 0666 less the umask.
//
// Where an existing file cannot be replaced by a rename (a file
// bind-mounted into a container, a writable file in a read-only directory)
// it is overwritten in place instead: not atomic, but the edit is made.
func writeFile(path string, data []byte, create bool) error {
	err := writeAtomic(path, data, create)
	if err == nil || create || !inPlaceHelps(err) {
		return err
	}
	f, ierr := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if ierr != nil {
		return err // report why the normal way failed
	}
	_, ierr = f.Write(data)
	if cerr := f.Close(); ierr == nil {
		ierr = cerr
	}
	return ierr
}

// inPlaceHelps reports whether err, from writeAtomic, is one that writing
// the file in place avoids.
func inPlaceHelps(err error) bool {
	return errors.Is(err, syscall.EBUSY) || errors.Is(err, syscall.EXDEV) ||
		errors.Is(err, errTemp) && (errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS))
}

// errTemp marks failures to create the temporary file.
var errTemp = errors.New("cannot create a temporary file")

func writeAtomic(path string, data []byte, create bool) (err error) {
	var mode fs.FileMode
	if !create {
		fi, err := os.Stat(path)
		if err != nil {
			return err
		}
		mode = fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	}
	dir, base := filepath.Split(path)
	tmp, f, err := createTemp(dir, "."+base+".", ".tmp")
	if err != nil {
		return fmt.Errorf("%w: %w", errTemp, err)
	}
	defer func() {
		if f != nil {
			f.Close()
		}
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if !create {
		if err = f.Chmod(mode); err != nil {
			return err
		}
	}
	if err = f.Sync(); err != nil {
		return err
	}
	err = f.Close()
	f = nil
	if err != nil {
		return err
	}
	if !create {
		return rename(tmp, path)
	}
	// A hard link never replaces an existing file, so a file made by someone
	// else since the caller checked is not clobbered.
	switch lerr := link(tmp, path); {
	case lerr == nil:
		os.Remove(tmp)
		return nil
	case errors.Is(lerr, fs.ErrExist):
		err = errExists
		return err
	}
	// The file system has no hard links: fall back to a plain rename.
	if _, serr := os.Lstat(path); serr == nil {
		err = errExists
		return err
	}
	return rename(tmp, path)
}

// createTemp creates a new file in dir named prefix+random+suffix with
// permissions 0666 less the umask (os.CreateTemp would use 0600, which a
// newly created source file should not get).
func createTemp(dir, prefix, suffix string) (string, *os.File, error) {
	for range 10 {
		var r [6]byte
		rand.Read(r[:])
		name := filepath.Join(dir, prefix+hex.EncodeToString(r[:])+suffix)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return name, f, err
	}
	return "", nil, errors.New("cannot create a temporary file in " + dir)
}
