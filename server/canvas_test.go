package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gohands/gohands/server"
)

// The routes of what gohands does not run (canvas extensions, app
// backends, VS Code): the reference's answers for a server where none is
// installed or running, with and without the key.
func TestUnavailableRoutes(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, &server.Options{SessionAPIKeys: []string{"k"}})
	missing := `{"name":"foo","state":"missing","revision":null,"prepared_revision":null,"pid":null,"port":null,"detail":"Canvas App is not installed or its manifest is invalid"}`
	noIngress := `{"detail":"Internal Server Error","exception":"503: Canvas App backend ingress is not configured"}`
	for _, c := range []struct {
		method, path, body string
		status             int
		want               string // the body, or a part of it after "~"
	}{
		{"GET", "/api/canvas-extensions/installed", "", 200, `{"canvas_extensions":[]}`},
		{"GET", "/api/canvas-extensions/installed/foo", "", 404, `{"detail":"Canvas extension 'foo' is not installed"}`},
		{"GET", "/api/canvas-extensions/installed/Foo", "", 422, "~string_pattern_mismatch"},
		{"PATCH", "/api/canvas-extensions/installed/foo", `{}`, 422, `~["body","enabled"]`},
		{"PATCH", "/api/canvas-extensions/installed/foo", `{"enabled":true}`, 404, `{"detail":"Canvas extension 'foo' is not installed"}`},
		{"DELETE", "/api/canvas-extensions/installed/foo", "", 404, `{"detail":"Canvas extension 'foo' is not installed"}`},
		{"GET", "/api/canvas-extensions/installed/foo/bundle", "", 404, `{"detail":"Canvas extension 'foo' bundle not found"}`},
		{"GET", "/api/canvas-extensions/installed/foo/icon", "", 404, `{"detail":"Canvas extension 'foo' icon not found"}`},
		{"POST", "/api/canvas-extensions/install", `{}`, 422, `~["body","source"]`},
		{"POST", "/api/canvas-extensions/install", `{"source":""}`, 422, "~string_too_short"},
		{"POST", "/api/canvas-extensions/install", `{"source":"github:owner/repo"}`, 400, "~Could not read canvas extension source"},
		{"GET", "/api/canvas-extensions/installed/foo/backend", "", 200, missing},
		{"POST", "/api/canvas-extensions/installed/foo/backend/prepare", `{}`, 422, `~["body","revision"]`},
		{"POST", "/api/canvas-extensions/installed/foo/backend/prepare", `{"revision":"abc"}`, 200, missing},
		{"POST", "/api/canvas-extensions/installed/foo/backend/start", `{"revision":"abc"}`, 200, missing},
		{"POST", "/api/canvas-extensions/installed/foo/backend/stop", "", 200, missing},
		{"DELETE", "/api/canvas-extensions/installed/foo/backend/data", "", 200, missing},
		{"GET", "/api/canvas-extensions/installed/foo/backend/logs", "", 200, `{"name":"foo","logs":"","truncated":false}`},
		{"GET", "/api/canvas-extensions/installed/foo/backend/logs?limit_bytes=0", "", 422, "~greater_than_equal"},
		{"GET", "/api/canvas-extensions/installed/foo/backend/logs?limit_bytes=abc", "", 422, "~int_parsing"},
		{"POST", "/app-backends/foo/session", "", 503, noIngress},
		{"DELETE", "/app-backends/foo/session", "", 503, noIngress},
		{"GET", "/app-backends/foo", "", 503, noIngress},
		{"PUT", "/app-backends/foo/api/items?x=1", `{}`, 503, noIngress},
		{"OPTIONS", "/app-backends/foo/a/b", "", 503, noIngress},
		{"GET", "/app-backends/foo/a%2F..%2Fb", "", 400, `{"detail":"Invalid backend path"}`},
		{"GET", "/app-backends/foo/%252e%252e/b", "", 400, `{"detail":"Invalid backend path"}`},
		{"GET", "/app-backends/Foo/x", "", 422, "~string_pattern_mismatch"},
		{"TRACE", "/app-backends/foo/session", "", 405, `{"detail":"Method Not Allowed"}`},
		{"PUT", "/app-backends/foo/session", "", 405, `{"detail":"Method Not Allowed"}`},
		{"GET", "/api/vscode/status", "", 200, `{"running":false,"enabled":true}`},
		{"GET", "/api/vscode/url?workspace_dir=workspace", "", 200, `{"url":null}`},
		{"GET", "/api/conversations/not-a-uuid/vscode/status", "", 422, "~uuid_parsing"},
		{"GET", "/api/conversations/00000000-0000-4000-8000-000000000000/vscode/url", "", 404, "~not found"},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			got, body := ts.on(t).do(c.method, c.path, nilIfEmpty(c.body))
			if got != c.status {
				t.Fatalf("status %d, want %d: %s", got, c.status, body)
			}
			if part, ok := strings.CutPrefix(c.want, "~"); ok {
				if !strings.Contains(string(body), part) {
					t.Errorf("body %s, want it to hold %s", body, part)
				}
			} else if string(body) != c.want {
				t.Errorf("body %s\nwant %s", body, c.want)
			}
		})
	}
	// The bridge authenticates by its own cookie: without the key it
	// still answers that it has no ingress; the control routes want it.
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/app-backends/foo/x", 503},
		{"HEAD", "/app-backends/foo", 503},
		{"POST", "/app-backends/foo/session", 401},
		{"GET", "/api/canvas-extensions/installed", 401},
		{"GET", "/api/vscode/status", 401},
		{"GET", "/docs/oauth2-redirect", 200},
	} {
		req, _ := http.NewRequest(c.method, ts.http.URL+c.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s %s without the key: %d, want %d", c.method, c.path, resp.StatusCode, c.status)
		}
	}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// POST /api/init reads its body before it checks the init key, as the
// reference does: malformed JSON is a 422 even without the key.
func TestInitMalformedBodyFirst(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, &server.Options{SessionAPIKeys: []string{"k"}, SecretKey: "init-key"})
	for _, c := range []struct {
		body   string
		status int
	}{{"{", 422}, {"{}", 401}, {"", 401}} {
		if got, body := ts.do("POST", "/api/init", nilIfEmpty(c.body)); got != c.status {
			t.Errorf("POST /api/init %q without the init key: %d %s, want %d", c.body, got, body, c.status)
		}
	}
}
