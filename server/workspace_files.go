package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A conversation's workspace served as static files, for pages that embed
// what the agent made (an HTML report, a plot) in an <iframe> or <img>,
// which cannot send the X-Session-API-Key header: the reference's
// /api/conversations/{id}/workspace/... and its workspace-session cookie.
// POST /api/auth/workspace-session, with the key, sets an HttpOnly cookie
// scoped to /api/conversations that these routes alone accept.
//
// The reference's cookie holds the session key itself; gohands' holds a
// keyed digest of it (HMAC-SHA256), which any server with the same keys
// checks and which does not give the key away. Paths stay inside the
// workspace, symbolic links included; a directory serves its index.html.

const (
	workspaceCookieName  = "oh_workspace_session_key"
	workspaceCookieScope = "/api/conversations"
	// workspaceCookieMaxAge is the reference's (browsers clamp it to
	// about 400 days).
	workspaceCookieMaxAge = 10 * 365 * 24 * time.Hour
)

func (s *Server) workspaceRoutes() []*route {
	const tag = "Workspace"
	return []*route{
		{method: "POST", path: "/api/auth/workspace-session", summary: "Set the cookie that lets a browser load workspace files (HttpOnly, scoped to /api/conversations)", tag: "Auth", status: 204, resp: []byte{}, errors: []int{401}, h: s.handleWorkspaceSession},
		{method: "DELETE", path: "/api/auth/workspace-session", summary: "Clear the workspace cookie", tag: "Auth", status: 204, resp: []byte{}, errors: []int{401}, h: s.handleWorkspaceSessionDelete},
		{method: "GET", path: "/api/conversations/{conversation_id}/workspace", summary: "The workspace's index.html (the session key, or the workspace cookie)", tag: tag, public: true, resp: []byte{}, errors: []int{206, 400, 401, 404, 422}, h: s.handleWorkspaceFile},
		{method: "GET", path: "/api/conversations/{conversation_id}/workspace/{file_path}", summary: "A file of the conversation's workspace, or a directory's index.html (the session key, or the workspace cookie)", tag: tag, public: true, query: &workspaceFileParam{}, resp: []byte{}, errors: []int{206, 400, 401, 404, 422}, h: s.handleWorkspaceFile},
	}
}

type workspaceFileParam struct {
	FilePath string `path:"file_path" description:"A path in the workspace; a directory serves its index.html"`
}

// workspaceToken is the cookie's value for key.
func workspaceToken(key string) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte("gohands workspace session"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// workspaceAuthorized reports whether r holds the key or a workspace
// cookie made from one of the keys.
func (s *Server) workspaceAuthorized(r *http.Request) bool {
	if len(s.opts.SessionAPIKeys) == 0 || s.authorized(r.Header.Get("X-Session-API-Key")) {
		return true
	}
	ck, err := r.Cookie(workspaceCookieName)
	if err != nil || ck.Value == "" {
		return false
	}
	ok := 0
	for _, k := range s.opts.SessionAPIKeys {
		ok |= subtle.ConstantTimeCompare([]byte(workspaceToken(k)), []byte(ck.Value))
	}
	return ok == 1
}

// secureContext reports whether the browser that sent r stores Secure
// cookies from it: over HTTPS (as a TLS proxy in front says), or from a
// loopback host, which browsers treat as secure.
func secureContext(r *http.Request) bool {
	proto := strings.TrimSpace(strings.Split(r.Header.Get("X-Forwarded-Proto"), ",")[0])
	if strings.EqualFold(proto, "https") || (proto == "" && r.TLS != nil) {
		return true
	}
	host := strings.TrimSpace(strings.Split(r.Header.Get("X-Forwarded-Host"), ",")[0])
	if host == "" {
		host = r.Host
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	switch strings.ToLower(strings.Trim(host, "[]")) {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	return false
}

// setWorkspaceCookie writes the cookie: SameSite=None so that a page of
// another site can embed the files, Secure and Partitioned (CHIPS) where
// the browser accepts them.
func setWorkspaceCookie(w http.ResponseWriter, r *http.Request, value string, maxAge time.Duration) {
	ck := &http.Cookie{
		Name: workspaceCookieName, Value: value, Path: workspaceCookieScope,
		MaxAge: int(maxAge.Seconds()), HttpOnly: true, SameSite: http.SameSiteNoneMode,
		Secure: secureContext(r),
	}
	if maxAge <= 0 {
		ck.MaxAge = -1 // Max-Age=0: drop it now
	}
	ck.Partitioned = ck.Secure
	http.SetCookie(w, ck)
}

func (s *Server) handleWorkspaceSession(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("X-Session-API-Key")
	if len(s.opts.SessionAPIKeys) == 0 {
		key = "" // nothing to prove: an empty cookie, as the reference sets
	}
	value := ""
	if key != "" {
		value = workspaceToken(key)
	}
	setWorkspaceCookie(w, r, value, workspaceCookieMaxAge)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleWorkspaceSessionDelete(w http.ResponseWriter, r *http.Request) {
	setWorkspaceCookie(w, r, "", 0)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleWorkspaceFile(w http.ResponseWriter, r *http.Request) {
	if !s.workspaceAuthorized(r) {
		writeDetail(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	id, err := conversationID(r)
	if err != nil {
		writeErr(w, err)
		return
	}
	c, err := s.lookupErr(id)
	if err != nil {
		writeErr(w, err)
		return
	}
	if c == nil || c.isGone() {
		writeDetail(w, http.StatusNotFound, "Conversation not found: "+id)
		return
	}
	c.mu.Lock()
	var ws struct {
		Kind       string `json:"kind"`
		WorkingDir string `json:"working_dir"`
	}
	_ = json.Unmarshal(c.meta.Workspace, &ws)
	c.mu.Unlock()
	if ws.Kind != "" && ws.Kind != "LocalWorkspace" {
		writeDetail(w, http.StatusNotFound, "Conversation workspace is not local; cannot be served")
		return
	}
	if ws.WorkingDir == "" {
		ws.WorkingDir = s.opts.WorkspacePath
	}
	root, err := filepath.EvalSymlinks(ws.WorkingDir)
	if fi, serr := os.Stat(root); err != nil || serr != nil || !fi.IsDir() {
		writeDetail(w, http.StatusNotFound, "Workspace directory does not exist")
		return
	}
	target, err := resolveInside(root, r.PathValue("file_path"))
	if err != nil {
		writeDetail(w, http.StatusBadRequest, "Path is outside the workspace")
		return
	}
	fi, err := os.Stat(target)
	if err == nil && fi.IsDir() {
		target = filepath.Join(target, "index.html")
		if fi, err = os.Stat(target); err != nil || !fi.Mode().IsRegular() {
			writeDetail(w, http.StatusNotFound, "No index.html in directory")
			return
		}
	}
	if err != nil || !fi.Mode().IsRegular() {
		writeDetail(w, http.StatusNotFound, "File not found")
		return
	}
	f, err := os.Open(target)
	if err != nil {
		writeDetail(w, http.StatusNotFound, "File not found")
		return
	}
	defer f.Close()
	// ServeContent streams the file (and its ranges) with its type.
	http.ServeContent(w, r, fi.Name(), fi.ModTime(), f)
}

// errOutside is a path that leaves the workspace.
var errOutside = errors.New("outside the workspace")

// resolveInside resolves rel under root (root has no symbolic links),
// following links, and fails when the result leaves root. A path that
// does not exist resolves as far as it does.
func resolveInside(root, rel string) (string, error) {
	p := filepath.Join(root, filepath.FromSlash(rel))
	if !inside(root, p) {
		return "", errOutside
	}
	real, err := filepath.EvalSymlinks(p)
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	if err != nil || !inside(root, real) {
		return "", errOutside
	}
	return real, nil
}

func inside(root, p string) bool {
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}
