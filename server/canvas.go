package server

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// Canvas extensions (/api/canvas-extensions) are the reference's
// installable web apps for the OpenHands canvas, with an optional backend
// process reached through the app-backend bridge (/app-backends). gohands
// installs none and runs no app backend, so these routes give the
// reference's answers for a server where nothing is installed: an empty
// list, 404 for an extension, a backend in state "missing", and a bridge
// whose ingress is not configured (503, before any key is asked, as the
// reference's cookie-authenticated bridge answers). An install is refused
// with the reference's 400 for a source it cannot read, saying why.

// canvasNamePattern is the reference's extension name.
var canvasNamePattern = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)

type canvasPath struct {
	Name string `path:"extension_name" pattern:"^[a-z0-9]+(?:-[a-z0-9]+)*$"`
}

type canvasInstallRequest struct {
	Source   *string `json:"source"`
	Ref      *string `json:"ref"`
	RepoPath *string `json:"repo_path"`
	Force    bool    `json:"force"`
}

type canvasStateRequest struct {
	Enabled *bool `json:"enabled"`
}

type canvasRevisionRequest struct {
	Revision *string `json:"revision"`
}

type canvasLogsQuery struct {
	Name       string `path:"extension_name" pattern:"^[a-z0-9]+(?:-[a-z0-9]+)*$"`
	LimitBytes int    `query:"limit_bytes" minimum:"1" maximum:"262144"`
}

type canvasList struct {
	CanvasExtensions []struct{} `json:"canvas_extensions"`
}

// canvasBackendStatus is the reference's BackendStatus.
type canvasBackendStatus struct {
	Name             string  `json:"name"`
	State            string  `json:"state"`
	Revision         *string `json:"revision"`
	PreparedRevision *string `json:"prepared_revision"`
	PID              *int    `json:"pid"`
	Port             *int    `json:"port"`
	Detail           string  `json:"detail"`
}

type canvasBackendLogs struct {
	Name      string `json:"name"`
	Logs      string `json:"logs"`
	Truncated bool   `json:"truncated"`
}

type appBackendSession struct {
	IngressURL string `json:"ingress_url"`
	ExpiresAt  string `json:"expires_at"`
}

// errNoIngress is the bridge's answer: the reference's when its
// app_backend_public_url is not set.
var errNoIngress = statusErr(http.StatusServiceUnavailable, "Canvas App backend ingress is not configured")

func (s *Server) canvasRoutes() []*route {
	const (
		p  = "/api/canvas-extensions"
		ip = p + "/installed/{extension_name}"
		tc = "Canvas Extensions"
		tb = "Canvas App Backends"
	)
	nf := []int{404, 422}
	return []*route{
		{method: "POST", path: p + "/install", summary: "Install a canvas extension (gohands installs none: 400 with the reason)", tag: tc, body: canvasInstallRequest{}, resp: struct{}{}, errors: []int{400, 409, 422}, h: handle(s, nil, s.handleCanvasInstall)},
		{method: "GET", path: p + "/installed", summary: "The installed canvas extensions (none)", tag: tc, resp: canvasList{}, h: handle(s, nil, func(*request[none, none]) (any, error) {
			return canvasList{CanvasExtensions: []struct{}{}}, nil
		})},
		{method: "GET", path: ip, summary: "An installed canvas extension", tag: tc, query: &canvasPath{}, resp: struct{}{}, errors: nf, h: handle(s, nil, canvasNotInstalled[none])},
		{method: "PATCH", path: ip, summary: "Enable or disable an installed canvas extension", tag: tc, query: &canvasPath{}, body: canvasStateRequest{}, resp: struct{}{}, errors: nf, h: handle(s, nil, func(in *request[canvasPath, canvasStateRequest]) (any, error) {
			if in.body.Enabled == nil {
				return nil, &invalidError{loc: []any{"body", "enabled"}, typ: "missing", msg: "Field required"}
			}
			return canvasNotInstalled(in)
		})},
		{method: "DELETE", path: ip, summary: "Uninstall a canvas extension", tag: tc, query: &canvasPath{}, resp: struct{}{}, errors: nf, h: handle(s, nil, canvasNotInstalled[none])},
		{method: "GET", path: ip + "/bundle", summary: "An installed canvas extension's bundle", tag: tc, query: &canvasPath{}, resp: struct{}{}, errors: nf, h: handle(s, nil, canvasAssetMissing("bundle"))},
		{method: "GET", path: ip + "/icon", summary: "An installed canvas extension's icon", tag: tc, query: &canvasPath{}, resp: struct{}{}, errors: nf, h: handle(s, nil, canvasAssetMissing("icon"))},
		{method: "GET", path: ip + "/backend", summary: "The extension's backend state (always missing)", tag: tc, query: &canvasPath{}, resp: canvasBackendStatus{}, errors: []int{422}, h: handle(s, nil, canvasMissingBackend[none])},
		{method: "POST", path: ip + "/backend/prepare", summary: "Prepare a backend revision", tag: tc, query: &canvasPath{}, body: canvasRevisionRequest{}, resp: canvasBackendStatus{}, errors: []int{409, 422}, h: handle(s, nil, canvasRevision)},
		{method: "POST", path: ip + "/backend/start", summary: "Start a prepared backend revision", tag: tc, query: &canvasPath{}, body: canvasRevisionRequest{}, resp: canvasBackendStatus{}, errors: []int{409, 422}, h: handle(s, nil, canvasRevision)},
		{method: "POST", path: ip + "/backend/stop", summary: "Stop the backend", tag: tc, query: &canvasPath{}, resp: canvasBackendStatus{}, errors: []int{422}, h: handle(s, nil, canvasMissingBackend[none])},
		{method: "GET", path: ip + "/backend/logs", summary: "The backend's recent output", tag: tc, query: &canvasLogsQuery{}, resp: canvasBackendLogs{}, errors: []int{422}, h: handle(s, nil, func(in *request[canvasLogsQuery, none]) (any, error) {
			return canvasBackendLogs{Name: in.query.Name, Logs: ""}, nil
		})},
		{method: "DELETE", path: ip + "/backend/data", summary: "Delete the backend's data", tag: tc, query: &canvasPath{}, resp: canvasBackendStatus{}, errors: []int{409, 422}, h: handle(s, nil, canvasMissingBackend[none])},
		{method: "POST", path: "/app-backends/{extension_name}/session", summary: "A browser session for an app backend (503: no ingress)", tag: tb, query: &canvasPath{}, resp: appBackendSession{}, errors: []int{403, 409, 422, 503}, h: handle(s, nil, func(*request[canvasPath, none]) (any, error) { return nil, errNoIngress })},
		{method: "DELETE", path: "/app-backends/{extension_name}/session", summary: "Revoke an app backend's browser session (503: no ingress)", tag: tb, query: &canvasPath{}, status: http.StatusNoContent, errors: []int{403, 422, 503}, h: handle(s, nil, func(*request[canvasPath, none]) (any, error) { return nil, errNoIngress })},
	}
}

func (s *Server) handleCanvasInstall(in *request[none, canvasInstallRequest]) (any, error) {
	if in.body.Source == nil {
		return nil, &invalidError{loc: []any{"body", "source"}, typ: "missing", msg: "Field required"}
	}
	if *in.body.Source == "" {
		return nil, &invalidError{loc: []any{"body", "source"}, typ: "string_too_short", msg: "String should have at least 1 character"}
	}
	return nil, statusErr(http.StatusBadRequest, "Could not read canvas extension source: gohands does not install canvas extensions")
}

func canvasNotInstalled[B any](in *request[canvasPath, B]) (any, error) {
	return nil, statusErr(http.StatusNotFound, "Canvas extension '%s' is not installed", in.query.Name)
}

func canvasAssetMissing(what string) func(*request[canvasPath, none]) (any, error) {
	return func(in *request[canvasPath, none]) (any, error) {
		return nil, statusErr(http.StatusNotFound, "Canvas extension '%s' %s not found", in.query.Name, what)
	}
}

func canvasMissingBackend[B any](in *request[canvasPath, B]) (any, error) {
	return canvasBackendStatus{Name: in.query.Name, State: "missing", Detail: "Canvas App is not installed or its manifest is invalid"}, nil
}

func canvasRevision(in *request[canvasPath, canvasRevisionRequest]) (any, error) {
	if in.body.Revision == nil {
		return nil, &invalidError{loc: []any{"body", "revision"}, typ: "missing", msg: "Field required"}
	}
	return canvasMissingBackend(in)
}

// handleAppBackend is the bridge to an app backend, every method at
// /app-backends/NAME and below: a bad name or a path that climbs out is
// refused, anything else meets the unconfigured ingress. It needs no
// session key (the reference's bridge authenticates by its own cookie).
func (s *Server) handleAppBackend(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case "GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD":
	default: // the methods the reference's bridge proxies
		w.Header().Set("Allow", "GET, POST, PUT, PATCH, DELETE, OPTIONS, HEAD")
		writeDetail(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	}
	if r.PathValue("path") == "session" {
		// POST and DELETE are the session routes'. The reference's bridge
		// would proxy another method to the backend's own /session; with no
		// ingress here, the published document's 405 says more than 503.
		w.Header().Set("Allow", "POST, DELETE")
		writeDetail(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	}
	name := r.PathValue("extension_name")
	if !canvasNamePattern.MatchString(name) || len(name) > 255 {
		writeErr(w, &invalidError{loc: []any{"path", "extension_name"}, typ: "string_pattern_mismatch", msg: "String should match pattern '" + canvasNamePattern.String() + "'"})
		return
	}
	if !cleanBackendPath(r.PathValue("path")) {
		writeDetail(w, http.StatusBadRequest, "Invalid backend path")
		return
	}
	writeErr(w, errNoIngress)
}

// cleanBackendPath reports whether p, decoded until it no longer
// changes, has no backslash and no . or .. segment.
func cleanBackendPath(p string) bool {
	for range len(p) + 1 {
		d, err := url.PathUnescape(p)
		if err != nil {
			return false
		}
		if d == p {
			return !strings.Contains(p, `\`) && !strings.Contains("/"+p+"/", "/./") && !strings.Contains("/"+p+"/", "/../")
		}
		p = d
	}
	return false
}

// serverErrorBody is the reference's answer to an HTTP error of status
// 500 or more: the detail is hidden behind "Internal Server Error" and
// the exception names status and detail.
func serverErrorBody(status int, detail string) map[string]string {
	return map[string]string{"detail": "Internal Server Error", "exception": fmt.Sprintf("%d: %s", status, detail)}
}
