package server

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// CORS: which web pages of other origins may call the API from a browser
// and read the answers (the reference's allow_cors_origins and
// allow_cors_origin_regex). An allowed origin gets its Origin echoed with
// credentials allowed, and its preflights (OPTIONS with
// Access-Control-Request-Method) are answered before any key check, as
// browsers send them without the key.
//
// Only what is configured is opened. A server with session keys also
// allows loopback origins (localhost, 127.0.0.1, any port) and, on the
// workspace cookie routes, any http(s) origin, as the reference does: the
// key (or the workspace cookie) is still needed for anything but a
// preflight. A server without keys allows only the configured origins:
// for them alone the same-origin guard (guard.go) stands aside, and the
// Host check against DNS rebinding still applies.

// corsMethods are the methods a preflight is told are allowed.
const corsMethods = "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT"

// workspaceCookiePath reports whether path is a route authenticated by the
// workspace-session cookie.
func workspaceCookiePath(path string) bool {
	if path == "/api/auth/workspace-session" {
		return true
	}
	rest, ok := strings.CutPrefix(path, "/api/conversations/")
	if !ok {
		return false
	}
	_, after, found := strings.Cut(rest, "/")
	return found && (after == "workspace" || strings.HasPrefix(after, "workspace/"))
}

// compileCORS compiles the configured origin pattern, matched against the
// whole origin.
func compileCORS(pattern string) (*regexp.Regexp, error) {
	if pattern == "" {
		return nil, nil
	}
	return regexp.Compile(`^(?:` + pattern + `)$`)
}

// corsAllowed reports whether a page of origin may call path.
func (s *Server) corsAllowed(origin, path string) bool {
	if slices.Contains(s.opts.AllowCORSOrigins, origin) || slices.Contains(s.opts.AllowCORSOrigins, "*") {
		return true
	}
	if s.corsRegex != nil && s.corsRegex.MatchString(origin) {
		return true
	}
	if len(s.opts.SessionAPIKeys) == 0 {
		return false
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	switch u.Hostname() {
	case "localhost", "127.0.0.1":
		return true
	}
	return workspaceCookiePath(path)
}

// cors answers a preflight or adds the CORS headers of an allowed origin.
// It reports whether the request is answered (a preflight), and whether
// its origin is allowed.
func (s *Server) cors(w http.ResponseWriter, r *http.Request) (answered, allowed bool) {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false, false
	}
	preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
	allowed = s.corsAllowed(origin, r.URL.Path)
	h := w.Header()
	h.Add("Vary", "Origin")
	if !allowed {
		if preflight {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte("Disallowed CORS origin"))
			return true, false
		}
		return false, false
	}
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Allow-Credentials", "true")
	if !preflight {
		return false, true
	}
	h.Set("Access-Control-Allow-Methods", corsMethods)
	if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
		h.Set("Access-Control-Allow-Headers", req)
	}
	h.Set("Access-Control-Max-Age", "600")
	h.Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	w.Write([]byte("OK"))
	return true, true
}
