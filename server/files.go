package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// pathQuery is the path parameter of the file and git routes.
type pathQuery struct {
	Path string `query:"path" required:"true" description:"Absolute path on the server."`
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
			writeUploadErr(w, err)
			return
		}
		if part.FormName() != "file" {
			continue
		}
		if err := writeFileFrom(q.Path, part); err != nil {
			writeUploadErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, ok)
		return
	}
}

func writeUploadErr(w http.ResponseWriter, err error) {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		writeDetail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("Upload larger than %d bytes", mb.Limit))
		return
	}
	writeDetail(w, http.StatusInternalServerError, "Failed to upload file: "+err.Error())
}

// writeFileFrom streams src into path through a temporary file, so a
// failed upload leaves no partial file.
func writeFileFrom(path string, src io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".upload-*")
	if err != nil {
		return err
	}
	if _, err := io.Copy(tmp, src); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
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
	f, err := os.Open(q.Path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			writeDetail(w, http.StatusNotFound, "File not found: "+q.Path)
			return
		}
		writeDetail(w, http.StatusBadRequest, err.Error())
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		writeDetail(w, http.StatusBadRequest, "Path is not a file")
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": filepath.Base(q.Path)}))
	http.ServeContent(w, r, "", fi.ModTime(), f)
}

// gitQuery are the parameters of the git routes.
type gitQuery struct {
	Path string `query:"path" required:"true" description:"Repository (changes) or file (diff) path."`
	Ref  string `query:"ref" description:"Ref to compare with (default HEAD)."`
}

// gitChange is one changed file.
type gitChange struct {
	Status string `json:"status" enum:"ADDED,DELETED,UPDATED,MOVED"`
	Path   string `json:"path"`
}

// gitDiff is a file before and after.
type gitDiff struct {
	Modified *string `json:"modified"`
	Original *string `json:"original"`
}

// emptyTree is git's empty tree, the base of a repository without commits.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"--no-pager"}, args...)...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// repoRoot returns the repository holding dir, or "" if none.
func repoRoot(dir string) string {
	out, err := git(dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// baseRef is ref, HEAD by default, or the empty tree before the first
// commit.
func baseRef(root, ref string) (string, error) {
	if ref == "" {
		ref = "HEAD"
	}
	if strings.HasPrefix(ref, "-") {
		return "", fmt.Errorf("invalid ref %q", ref)
	}
	if _, err := git(root, "rev-parse", "--verify", "--quiet", ref+"^{commit}"); err != nil {
		if ref == "HEAD" {
			return emptyTree, nil
		}
		return "", fmt.Errorf("unknown ref %q", ref)
	}
	return ref, nil
}

func (s *Server) handleGitChanges(w http.ResponseWriter, r *http.Request) {
	var q gitQuery
	if err := decodeQuery(r, &q); err != nil {
		writeErr(w, err)
		return
	}
	dir := q.Path
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		writeJSON(w, http.StatusOK, []gitChange{})
		return
	}
	root := repoRoot(dir)
	if root == "" {
		writeJSON(w, http.StatusOK, []gitChange{})
		return
	}
	ref, err := baseRef(root, q.Ref)
	if err != nil {
		writeDetail(w, http.StatusBadRequest, err.Error())
		return
	}
	out, err := git(root, "diff", "--name-status", "-z", ref, "--")
	if err != nil {
		writeDetail(w, http.StatusBadRequest, err.Error())
		return
	}
	changes := []gitChange{}
	f := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
	for i := 0; i < len(f) && f[i] != ""; {
		st := f[i]
		switch {
		case strings.HasPrefix(st, "R") && i+2 < len(f):
			changes = append(changes, gitChange{"DELETED", f[i+1]}, gitChange{"ADDED", f[i+2]})
			i += 3
			continue
		case strings.HasPrefix(st, "C") && i+2 < len(f):
			changes = append(changes, gitChange{"ADDED", f[i+2]})
			i += 3
			continue
		}
		if i+1 >= len(f) {
			break
		}
		status := "UPDATED"
		switch st {
		case "A":
			status = "ADDED"
		case "D":
			status = "DELETED"
		}
		changes = append(changes, gitChange{status, f[i+1]})
		i += 2
	}
	untracked, err := git(root, "ls-files", "--others", "--exclude-standard", "-z")
	if err == nil {
		for _, p := range strings.Split(untracked, "\x00") {
			if p != "" {
				changes = append(changes, gitChange{"ADDED", p})
			}
		}
	}
	writeJSON(w, http.StatusOK, changes)
}

func (s *Server) handleGitDiff(w http.ResponseWriter, r *http.Request) {
	var q gitQuery
	if err := decodeQuery(r, &q); err != nil {
		writeErr(w, err)
		return
	}
	var d gitDiff
	root := repoRoot(filepath.Dir(q.Path))
	if root == "" || q.Path == "" {
		writeJSON(w, http.StatusOK, d)
		return
	}
	// Both sides lose one trailing newline and a missing side is "", as
	// in the reference.
	trim := func(s string) *string {
		s = strings.TrimSuffix(s, "\n")
		return &s
	}
	d.Modified, d.Original = trim(""), trim("")
	if data, err := os.ReadFile(q.Path); err == nil {
		d.Modified = trim(string(data))
	}
	ref, err := baseRef(root, q.Ref)
	if err != nil {
		writeDetail(w, http.StatusBadRequest, err.Error())
		return
	}
	rel, err := filepath.Rel(root, q.Path)
	if err == nil && ref != emptyTree && !strings.HasPrefix(rel, "..") {
		if out, err := git(root, "show", ref+":"+filepath.ToSlash(rel)); err == nil {
			d.Original = trim(out)
		}
	}
	writeJSON(w, http.StatusOK, d)
}
