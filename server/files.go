package server

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/gohands/gohands/workspace"
)

// pathQuery is the path parameter of the file and git routes.
type pathQuery struct {
	Path string `query:"path" required:"true" minLength:"1" description:"Absolute path on the server."`
}

// uploadForm documents the multipart upload.
type uploadForm struct {
	File []byte `formData:"file" format:"binary" required:"true"`
}

func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	var q pathQuery
	if err := decodeQuery(r, &q); err != nil {
		writeErr(w, err)
		return
	}
	if q.Path == "" {
		writeErr(w, &invalidError{loc: []any{"query", "path"}, typ: "missing", msg: "Field required"})
		return
	}
	if !filepath.IsAbs(q.Path) {
		writeDetail(w, http.StatusBadRequest, "Path must be absolute")
		return
	}
	if err := uploadTarget(q.Path); err != nil {
		writeUploadErr(w, err)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxUploadBytes)
	mr, err := r.MultipartReader()
	if err != nil {
		writeErr(w, &invalidError{loc: []any{"body", "file"}, typ: "missing", msg: "Field required: a multipart form with a file field"})
		return
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			writeErr(w, &invalidError{loc: []any{"body", "file"}, typ: "missing", msg: "Field required"})
			return
		}
		if err != nil {
			writeUploadErr(w, uploadBodyErr(err))
			return
		}
		if part.FormName() != "file" {
			continue
		}
		n, err := writeFileFrom(q.Path, uploadBody{part})
		if err != nil {
			writeUploadErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, uploadResult{Success: true, FileSize: n})
		return
	}
}

// uploadResult is the upload's answer: the reference's FileUploadResult.
type uploadResult struct {
	Success  bool  `json:"success"`
	FileSize int64 `json:"file_size"`
}

func writeUploadErr(w http.ResponseWriter, err error) {
	var mb *http.MaxBytesError
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &mb):
		writeDetail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("Upload larger than %d bytes", mb.Limit))
	case errors.Is(err, errUploadTarget), errors.Is(err, errUploadBody), errors.As(err, &pe), errors.As(err, &le), errors.Is(err, syscall.ENOSPC):
		// The path or the disk, not the server: the caller can act on it.
		writeDetail(w, http.StatusBadRequest, "Failed to upload file: "+err.Error())
	default:
		writeDetail(w, http.StatusInternalServerError, "Failed to upload file: "+err.Error())
	}
}

var errUploadTarget = errors.New("the upload's path is not a file")

// errUploadBody marks a request body that could not be read to its end
// (cut off, or not the multipart form it says it is): the caller's fault.
var errUploadBody = errors.New("the request's body could not be read")

// uploadBody marks its reader's errors with errUploadBody, so that they
// are told from the errors of writing the file.
type uploadBody struct{ r io.Reader }

func (b uploadBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		err = uploadBodyErr(err)
	}
	return n, err
}

// uploadBodyErr marks err, met reading the request's body, with
// errUploadBody.
func uploadBodyErr(err error) error { return fmt.Errorf("%w: %w", errUploadBody, err) }

// uploadTarget refuses, before the body is read, a path that cannot name
// a file: one with a NUL byte, or one ending in a separator, "." or ".."
// (a directory, which the rename would refuse after the parents were made).
func uploadTarget(path string) error {
	if strings.IndexByte(path, 0) >= 0 {
		return fmt.Errorf("%w: the path holds a NUL byte", errUploadTarget)
	}
	switch path[strings.LastIndexByte(path, '/')+1:] {
	case "", ".", "..":
		return fmt.Errorf("%w: %s names a directory", errUploadTarget, path)
	}
	return nil
}

// writeFileFrom streams src into path through a temporary file beside it,
// so a failed upload leaves no partial file; the temporary file, and the
// parent directories it made, are removed whatever fails, the rename
// included. It returns the size written.
func writeFileFrom(path string, src io.Reader) (n int64, err error) {
	if err := uploadTarget(path); err != nil {
		return 0, err
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("%w: %s is a directory or a special file", errUploadTarget, path)
	}
	made, err := mkdirAll(filepath.Dir(path))
	defer func() {
		if err != nil {
			// Innermost first; a directory another upload wrote into stays.
			for i := len(made) - 1; i >= 0; i-- {
				os.Remove(made[i])
			}
		}
	}()
	if err != nil {
		return 0, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".upload-*")
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if n, err = io.Copy(tmp, src); err != nil {
		return 0, err
	}
	if err := tmp.Close(); err != nil {
		return 0, err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return 0, err
	}
	return n, os.Rename(tmp.Name(), path)
}

// mkdirAll is os.MkdirAll that returns the directories it made,
// outermost first.
func mkdirAll(dir string) (made []string, err error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || d == filepath.Dir(d) {
			break
		}
		missing = append(missing, d)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		// Some of them may have been made before the failure.
		for i := len(missing) - 1; i >= 0; i-- {
			if _, serr := os.Lstat(missing[i]); serr == nil {
				made = append(made, missing[i])
			}
		}
		return made, err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		made = append(made, missing[i])
	}
	return made, nil
}

func (s *Server) handleDownload(w http.ResponseWriter, r *http.Request) {
	var q pathQuery
	if err := decodeQuery(r, &q); err != nil {
		writeErr(w, err)
		return
	}
	if q.Path == "" {
		writeErr(w, &invalidError{loc: []any{"query", "path"}, typ: "missing", msg: "Field required"})
		return
	}
	if !filepath.IsAbs(q.Path) {
		writeDetail(w, http.StatusBadRequest, "Path must be absolute")
		return
	}
	// A FIFO would block the open, and a device the read, forever.
	f, fi, err := workspace.OpenRegular(q.Path)
	if err != nil {
		switch {
		case errors.Is(err, os.ErrNotExist):
			writeDetail(w, http.StatusNotFound, "File not found: "+q.Path)
		case errors.Is(err, workspace.ErrNotRegular):
			writeDetail(w, http.StatusBadRequest, "Path is not a file: "+err.Error())
		default:
			writeDetail(w, http.StatusBadRequest, err.Error())
		}
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": filepath.Base(q.Path)}))
	http.ServeContent(w, r, "", fi.ModTime(), f)
}

// gitQuery are the parameters of the git routes.
type gitQuery struct {
	Path string `query:"path" required:"true" minLength:"1" description:"Repository (changes) or file (diff) path."`
	Ref  string `query:"ref" description:"Ref to compare with (default HEAD)."`
}

// gitChange and gitDiff are the git routes' answers.
type (
	gitChange = workspace.GitChange
	gitDiff   = workspace.GitDiff
)

func (s *Server) handleGitChanges(w http.ResponseWriter, r *http.Request) {
	var q gitQuery
	if err := decodeQuery(r, &q); err != nil {
		writeErr(w, err)
		return
	}
	changes, err := workspace.Changes(r.Context(), q.Path, q.Ref)
	if err != nil {
		writeDetail(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, changes)
}

// diffQuery are the parameters of the diff route: a ref to compare the
// file on disk with, or a commit whose change to the file is wanted.
type diffQuery struct {
	Path   string  `query:"path" required:"true" minLength:"1" description:"The file path to get diff for."`
	Ref    string  `query:"ref" description:"Ref to compare with (default HEAD)."`
	Commit *string `query:"commit" pattern:"^[0-9a-fA-F]{4,64}$" description:"A commit: the diff is the change it made to the file (vs its first parent). Excludes ref."`
}

func (s *Server) handleGitDiff(w http.ResponseWriter, r *http.Request) {
	var q diffQuery
	if err := decodeQuery(r, &q); err != nil {
		writeErr(w, err)
		return
	}
	if q.Commit != nil {
		if !workspace.IsSHA(*q.Commit) {
			writeErr(w, shaInvalid("query", "commit"))
			return
		}
		if _, given := r.URL.Query()["ref"]; given {
			writeDetail(w, http.StatusBadRequest, "'ref' and 'commit' are mutually exclusive")
			return
		}
		d, err := workspace.CommitDiff(r.Context(), q.Path, *q.Commit)
		if err != nil {
			writeDetail(w, http.StatusBadRequest, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, d)
		return
	}
	d, err := workspace.Diff(r.Context(), q.Path, q.Ref)
	if err != nil {
		writeDetail(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, d)
}
