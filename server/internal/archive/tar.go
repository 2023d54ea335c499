package archive

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Stats is what a tarball holds: its regular files and their bytes.
type Stats struct {
	Files int64
	Bytes int64
}

// TarGz writes a gzip tarball of dir to w: a member for every directory
// and regular file not excluded, named <base of dir>/<relative path>,
// then the manifest (ManifestName; left out when the tree has a file of
// that name). Symbolic links and special files are left out, and files are
// opened through an os.Root of dir, so a link swapped in while the tree is
// walked cannot lead out of it. A file that changes size while it is read
// is cut or padded with zeros to the size its header declares, so the
// stream stays well-formed; one that vanishes is skipped. Memory does not
// grow with the tree: each file is copied through a fixed buffer.
func TarGz(ctx context.Context, w io.Writer, dir string, excludes []string) (Stats, error) {
	var st Stats
	root, err := os.OpenRoot(dir)
	if err != nil {
		return st, err
	}
	defer root.Close()
	zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return st, err
	}
	tw := tar.NewWriter(zw)
	base := filepath.Base(dir)
	manifest := base + "/" + ManifestName
	collision := false
	buf := make([]byte, 256<<10)
	err = fs.WalkDir(root.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			if rel == "." {
				return err
			}
			return nil // vanished or unreadable while walked: skipped
		}
		if d.IsDir() {
			if rel != "." && (Excluded(rel, excludes, true) || sensitiveGitInternal(rel)) {
				return fs.SkipDir
			}
			name := base
			if rel != "." {
				name = base + "/" + rel
			}
			fi, err := d.Info()
			if err != nil {
				return nil
			}
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: int64(fi.Mode().Perm()), ModTime: fi.ModTime(), Format: tar.FormatPAX})
		}
		if !d.Type().IsRegular() || Excluded(rel, excludes, false) || sensitiveGitInternal(rel) {
			return nil
		}
		n, ok, err := addFile(tw, root, rel, base+"/"+rel, buf)
		if err != nil || !ok {
			return err
		}
		if base+"/"+rel == manifest {
			collision = true
		}
		st.Files++
		st.Bytes += n
		return nil
	})
	if err != nil {
		return st, err
	}
	if !collision {
		m, _ := json.MarshalIndent(map[string]any{
			"format": "tar.gz", "source": base, "file_count": st.Files, "total_bytes": st.Bytes, "excludes": orEmpty(excludes),
		}, "", "  ")
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: manifest, Mode: 0o644, Size: int64(len(m)), ModTime: time.Unix(0, 0), Format: tar.FormatPAX}); err != nil {
			return st, err
		}
		if _, err := tw.Write(m); err != nil {
			return st, err
		}
	}
	if err := tw.Close(); err != nil {
		return st, err
	}
	return st, zw.Close()
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// addFile adds the regular file rel of root as name, with the size of the
// open file; ok is false when it is skipped (gone, unreadable, no longer
// regular). An error is the writer's.
func addFile(tw *tar.Writer, root *os.Root, rel, name string, buf []byte) (n int64, ok bool, err error) {
	f, err := root.OpenFile(rel, openFlags, 0)
	if err != nil {
		return 0, false, nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return 0, false, nil
	}
	size := fi.Size()
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: int64(fi.Mode().Perm()), Size: size, ModTime: fi.ModTime(), Format: tar.FormatPAX}); err != nil {
		return 0, false, err
	}
	// Exactly size bytes: cut a file that grew, pad one that shrank.
	copied, err := io.CopyBuffer(onlyWriter{tw}, io.LimitReader(f, size), buf)
	if err != nil && !isReadErr(err) {
		return 0, false, err
	}
	for copied < size {
		k := min(int64(len(buf)), size-copied)
		clear(buf[:k])
		if _, err := tw.Write(buf[:k]); err != nil {
			return 0, false, err
		}
		copied += k
	}
	return size, true, nil
}

// onlyWriter hides the tar writer's ReadFrom, so a read error and a write
// error can be told apart (readErr wraps the former).
type onlyWriter struct{ w io.Writer }

func (o onlyWriter) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if err != nil {
		err = &writeErr{err}
	}
	return n, err
}

type writeErr struct{ err error }

func (e *writeErr) Error() string { return e.err.Error() }
func (e *writeErr) Unwrap() error { return e.err }

// isReadErr reports whether err, from a copy into an onlyWriter, is the
// file's (a read failing mid-way: the rest is padded) rather than the
// writer's.
func isReadErr(err error) bool {
	var we *writeErr
	return !errors.As(err, &we)
}
