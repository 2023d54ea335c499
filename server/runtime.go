package server

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// The runtime-scoped routes (/api/conversations/{runtime_conversation_id}/
// bash|file|git/...) are the server-level bash, file and git routes
// addressed through a conversation, as the reference's are: the
// conversation must exist, and a path or workspace_dir they are given must
// lie inside its workspace once symlinks are resolved (so neither ".." nor
// a link leads out of it). The bash service is the server's own: the
// reference shares one between the two forms as well.

const runtimePrefix = "/api/conversations/{runtime_conversation_id}"

// runtimeScoped reports whether the server-level route rt has a
// runtime-scoped twin: every bash route, every file route but the file
// browser's (home, search_subdirs), and the git routes of one repository.
func runtimeScoped(rt *route) bool {
	switch {
	case strings.HasPrefix(rt.path, "/api/bash/"):
		return true
	case strings.HasPrefix(rt.path, "/api/file/"):
		return rt.path != "/api/file/home" && rt.path != "/api/file/search_subdirs"
	case strings.HasPrefix(rt.path, "/api/git/"):
		return rt.path != "/api/git/repositories/search"
	case strings.HasPrefix(rt.path, "/api/vscode/"):
		return true
	}
	return false
}

// runtimeRoutes returns the runtime-scoped twins of routes.
func (s *Server) runtimeRoutes(routes []*route) []*route {
	var out []*route
	for _, rt := range routes {
		if !runtimeScoped(rt) {
			continue
		}
		twin := *rt
		twin.path = runtimePrefix + strings.TrimPrefix(rt.path, "/api")
		twin.summary = rt.summary + " (in the conversation's workspace)"
		twin.errors = append(append([]int(nil), rt.errors...), http.StatusNotFound, http.StatusUnprocessableEntity)
		twin.h = s.inRuntime(rt.h)
		out = append(out, &twin)
	}
	return out
}

// inRuntime wraps a server-level handler: it checks the conversation and
// the paths of the request first, with the reference's answers.
func (s *Server) inRuntime(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := parseUUID(r.PathValue("runtime_conversation_id"))
		if err != nil {
			writeErr(w, &invalidError{loc: []any{"path", "runtime_conversation_id"}, typ: "uuid_parsing", msg: "Input should be a valid UUID"})
			return
		}
		c, err := s.lookupErr(id)
		if err != nil {
			writeErr(w, err)
			return
		}
		if c == nil || c.isGone() {
			writeDetail(w, http.StatusNotFound, "Conversation not found")
			return
		}
		root := c.workDir()
		q := r.URL.Query()
		for _, name := range []string{"path", "workspace_dir"} {
			p, given := q[name]
			if !given || len(p) == 0 {
				continue
			}
			if !insideDir(root, p[len(p)-1]) {
				writeDetail(w, http.StatusUnprocessableEntity, name+" must be inside the conversation workspace")
				return
			}
		}
		if traj := r.PathValue("conversation_id"); traj != "" {
			tid, err := parseUUID(traj)
			if err != nil {
				writeDetail(w, http.StatusUnprocessableEntity, "Invalid trajectory conversation id")
				return
			}
			if tid != id {
				writeDetail(w, http.StatusUnprocessableEntity, "Trajectory must belong to the selected conversation")
				return
			}
		}
		h(w, r)
	}
}

// workDir is the conversation's workspace directory, from its record.
func (c *conv) workDir() string {
	c.mu.Lock()
	raw := c.meta.Workspace
	c.mu.Unlock()
	var ws struct {
		WorkingDir string `json:"working_dir"`
	}
	_ = json.Unmarshal(raw, &ws)
	if ws.WorkingDir == "" {
		return c.s.opts.WorkspacePath
	}
	return ws.WorkingDir
}

// insideDir reports whether p is an absolute path that lies in root (or is
// root) once both are resolved: "." and ".." applied and the symlinks of
// their existing parts followed, as Python's Path.resolve does.
func insideDir(root, p string) bool {
	if !filepath.IsAbs(p) || strings.IndexByte(p, 0) >= 0 {
		return false
	}
	rr, rp := resolvePath(root), resolvePath(p)
	rel, err := filepath.Rel(rr, rp)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// resolvePath is p with its symlinks followed and "." and ".." applied in
// order, component by component, as POSIX realpath (and Python's
// Path.resolve) does; components that do not exist are kept as written. A
// dangling link is followed to where it points, so a file created through
// it is judged by where it would land.
func resolvePath(p string) string { return resolveFrom("/", p, 0) }

// maxLinks bounds the links followed, as the kernel's ELOOP does.
const maxLinks = 40

func resolveFrom(base, p string, links int) string {
	out := base
	if filepath.IsAbs(p) {
		out = "/"
	}
	for part := range strings.SplitSeq(p, "/") {
		switch part {
		case "", ".":
			continue
		case "..":
			out = filepath.Dir(out)
			continue
		}
		next := filepath.Join(out, part)
		fi, err := os.Lstat(next)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 || links >= maxLinks {
			out = next
			continue
		}
		target, err := os.Readlink(next)
		if err != nil {
			out = next
			continue
		}
		links++
		out = resolveFrom(out, target, links)
	}
	return out
}
