package fileeditor

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
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

// writeFile replaces the file at path with data atomically: data goes to a
// temporary file in the same directory, which is then renamed over path, so
// a reader or a crash sees the old content or the new, never a mix. An
// existing file keeps its permission bits. With create set, path must not
// exist (errExists otherwise) and the new file gets 0666 less the umask.
func writeFile(path string, data []byte, create bool) (err error) {
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
		return err
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
		return os.Rename(tmp, path)
	}
	// A hard link never replaces an existing file, so a file made by someone
	// else since the caller checked is not clobbered.
	switch lerr := os.Link(tmp, path); {
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
	return os.Rename(tmp, path)
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
