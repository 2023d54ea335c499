package server

import (
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// A server without session keys trusts whoever can reach its port: by
// default only this machine, since it listens on loopback. A web page the
// user opens is on this machine too, and a browser lets it send requests
// to 127.0.0.1: a form or a "simple" fetch (text/plain, form encodings,
// no custom header) is sent without asking the server first, and DNS
// rebinding (a name of the attacker's that resolves to 127.0.0.1) lets
// the page read the answers as well. sameOrigin shuts both doors for a
// key-less server:
//
//   - the Host must be one this server is reached by: an IP literal (a
//     rebinding page always uses a name), localhost, or a name in
//     Options.AllowedHosts;
//   - a request a browser marks as coming from another origin is refused:
//     an Origin other than the server's own (scheme, host and port), or a
//     Sec-Fetch-Site of cross-site or same-site (another port of the same
//     host is same-site, and another origin);
//   - a state-changing request must not have a body type a page can send
//     without a preflight (text/plain, application/x-www-form-urlencoded,
//     multipart/form-data), except multipart on the upload route, which
//     the checks above already confine to same-origin callers.
//
// Clients that are not browsers (the reference's Python client, curl with
// a JSON body, gohands' own) send neither Origin nor Sec-Fetch-Site and
// pass. With session keys the key is the proof, and a page has none.
//
// A page of an origin the operator allowed (AllowCORSOrigins,
// AllowCORSOriginRegex: trusted) passes all but the Host check.
//
// The reference's agent server has no such check: a key-less reference
// server on loopback can be driven by any page the user visits.
func (s *Server) sameOrigin(r *http.Request, trusted bool) (status int, detail string) {
	if len(s.opts.SessionAPIKeys) > 0 {
		return 0, ""
	}
	if !s.allowedHost(r.Host) {
		return http.StatusMisdirectedRequest, "Host " + quote(r.Host) + " is not one this server answers to without a session key; use 127.0.0.1 or localhost, or start it with --allowed-host"
	}
	if trusted {
		return 0, ""
	}
	if o := r.Header.Get("Origin"); o != "" && !sameOriginAs(o, r) {
		return http.StatusForbidden, "cross-origin request refused: Origin " + quote(o) + " is not this server's; without a session key only same-origin callers are trusted"
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
		return http.StatusForbidden, "cross-site request refused: without a session key only same-origin callers are trusted"
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return 0, ""
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "multipart/form-data":
		if s.formRoute(r) {
			return 0, ""
		}
		fallthrough
	case "text/plain", "application/x-www-form-urlencoded":
		return http.StatusUnsupportedMediaType, "Content-Type " + quote(ct) + " is refused on a server without a session key (a web page can send it); send application/json"
	}
	return 0, ""
}

// formRoute reports whether r is for the one route that takes a
// multipart form.
func (s *Server) formRoute(r *http.Request) bool {
	return r.Method == http.MethodPost && r.URL.Path == "/api/file/upload"
}

// allowedHost reports whether hostport (a request's Host) names this
// server.
func (s *Server) allowedHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	switch {
	case host == "":
		return true // HTTP/1.0 without Host: not a browser
	case net.ParseIP(host) != nil:
		return true
	case host == "localhost" || strings.HasSuffix(host, ".localhost"):
		return true // RFC 6761: resolved to loopback, never by DNS
	}
	return slices.ContainsFunc(s.opts.AllowedHosts, func(a string) bool { return strings.EqualFold(a, host) })
}

// sameOriginAs reports whether origin is the origin r was sent to.
func sameOriginAs(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false // "null" (a sandboxed frame, a file: page) included
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return u.Scheme == scheme && strings.EqualFold(u.Host, r.Host)
}

// quote writes s as a short quoted string for an error message.
func quote(s string) string {
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}
