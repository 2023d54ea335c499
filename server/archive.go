package server

import (
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/gohands/gohands/server/internal/archive"
)

// archiveQuery are the parameters of /api/file/archive (the reference
// 1.58's).
type archiveQuery struct {
	Path               string   `query:"path" required:"true" description:"Absolute path of the directory to archive. A directory that is no git repository but holds exactly one (three levels down at most) is archived as that repository."`
	Format             *string  `query:"format" enum:"git-delta,tar.gz" description:"git-delta (default): a git patch of the working-tree changes against a base ref; tar.gz: a gzip tarball of the files."`
	BaseRef            *string  `query:"base_ref" description:"git-delta only: the ref to diff against (default HEAD, or the empty tree before the first commit)."`
	UseDefaultExcludes *bool    `query:"use_default_excludes" description:"Leave out the default patterns (node_modules/, .venv/, caches, build outputs; default true)."`
	Exclude            []string `query:"exclude" description:"More glob patterns to leave out (repeatable)."`
}

func (s *Server) archiveRoute() *route {
	return &route{method: "GET", path: "/api/file/archive", summary: "Archive a directory, streamed: a git patch of its changes (git-delta) or a gzip tarball (tar.gz); symbolic links are never followed out of it", tag: "Files", query: &archiveQuery{}, resp: mediaTypes{"text/x-patch", "application/gzip"}, errors: []int{400, 404, 422, 500}, h: s.handleArchive}
}

// handleArchive streams the archive as it is made: nothing is staged on
// disk but git-delta's scratch index, and memory does not grow with the
// tree. Once the first byte is sent the status is 200; a failure after it
// aborts the response, so the client sees a cut transfer, never a short
// archive that looks whole.
func (s *Server) handleArchive(w http.ResponseWriter, r *http.Request) {
	var q archiveQuery
	if err := decodeQuery(r, &q); err != nil {
		writeErr(w, err)
		return
	}
	format := "git-delta"
	if q.Format != nil {
		format = *q.Format
	}
	if !filepath.IsAbs(q.Path) {
		writeDetail(w, http.StatusBadRequest, "Path must be absolute")
		return
	}
	fi, err := os.Stat(q.Path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		writeDetail(w, http.StatusNotFound, "Directory not found")
		return
	case err != nil:
		writeDetail(w, http.StatusBadRequest, "Cannot access path: "+err.Error())
		return
	case !fi.IsDir():
		writeDetail(w, http.StatusBadRequest, "Path is not a directory")
		return
	}
	baseRef := ""
	if q.BaseRef != nil {
		baseRef = *q.BaseRef
		if strings.HasPrefix(baseRef, "-") {
			writeDetail(w, http.StatusBadRequest, "base_ref must not start with '-'")
			return
		}
	}
	target, err := filepath.EvalSymlinks(q.Path)
	if err != nil {
		writeDetail(w, http.StatusBadRequest, "Cannot access path: "+err.Error())
		return
	}
	var excludes []string
	if q.UseDefaultExcludes == nil || *q.UseDefaultExcludes {
		excludes = append(excludes, archive.DefaultExcludes...)
	}
	excludes = append(excludes, q.Exclude...)
	root := archive.RepoRoot(target)
	ctx := r.Context()
	sw := &sentWriter{w: w}

	h := w.Header()
	if _, err := os.Lstat(filepath.Join(root, ".git")); err == nil {
		m := archive.RepoMetadata(ctx, root)
		for name, v := range map[string]string{"X-Archive-Repo-Remote": m.Remote, "X-Archive-Branch": m.Branch, "X-Archive-Head-Commit": m.HeadCommit} {
			if v != "" {
				h.Set(name, url.PathEscape(v))
			}
		}
		h.Set("X-Archive-Repo-Root", url.PathEscape(root))
	}
	name := filepath.Base(root)
	if format == "tar.gz" {
		h.Set("Content-Type", "application/gzip")
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name + ".tar.gz"}))
		if _, err := archive.TarGz(ctx, sw, root, excludes); err != nil {
			abortStream(sw, "tar.gz archive of "+root, err)
		}
		return
	}
	d, err := archive.NewDelta(ctx, root, baseRef, excludes)
	switch {
	case errors.Is(err, archive.ErrNotRepository):
		writeDetail(w, http.StatusBadRequest, "Not a git repository: "+root)
		return
	case errors.Is(err, archive.ErrBadRef):
		writeDetail(w, http.StatusBadRequest, "base_ref "+quoteRef(baseRef)+" could not be resolved")
		return
	case err != nil:
		writeDetail(w, http.StatusInternalServerError, "Failed to generate git delta: "+err.Error())
		return
	}
	defer d.Close()
	if d.BaseCommit != "" {
		h.Set("X-Archive-Base-Commit", d.BaseCommit)
		ref := baseRef
		if ref == "" {
			ref = "auto"
		}
		h.Set("X-Archive-Base-Ref", url.PathEscape(ref))
	}
	h.Set("Content-Type", "text/x-patch")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name + ".patch"}))
	if err := d.WriteTo(ctx, sw); err != nil {
		abortStream(sw, "git-delta archive of "+root, err)
	}
}

func quoteRef(ref string) string { return "'" + ref + "'" }

// sentWriter is the response, counting what went out.
type sentWriter struct {
	w http.ResponseWriter
	n int64
}

func (s *sentWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	s.n += int64(n)
	return n, err
}

// abortStream ends a streamed answer that failed: before any byte went
// out it is a 500; after, the connection is cut (http.ErrAbortHandler) so
// the client cannot take what it got for the whole.
func abortStream(w *sentWriter, what string, err error) {
	slog.Warn("server: archive failed", "archive", what, "err", err)
	if w.n == 0 {
		w.w.Header().Del("Content-Disposition")
		writeDetail(w.w, http.StatusInternalServerError, "Failed to archive directory: "+err.Error())
		return
	}
	panic(http.ErrAbortHandler)
}
