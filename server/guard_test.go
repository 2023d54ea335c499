package server_test

import (
	"bytes"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/server"
)

// guardRequest is a request to the guard: what a browser or a client
// would send.
type guardRequest struct {
	name                       string
	method, path, host, origin string
	site, ctype, body          string
	key                        string
	want                       int // 0: not refused by the guard
}

// bashBody runs a command that leaves a marker file in dir.
func bashBody(dir string) string {
	return `{"command":"touch ` + filepath.Join(dir, "marker") + `","timeout":10}`
}

// TestSameOriginGuard drives a key-less server (and one with a key) with
// the requests a web page can make and the ones real clients make: the
// first are refused before any handler runs, the second pass.
func TestSameOriginGuard(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ts := newTestServer(t, &server.Options{AllowedHosts: []string{"devbox.lan"}})
	u, _ := url.Parse(ts.http.URL)
	self := u.Host // 127.0.0.1:port
	_, port, _ := net.SplitHostPort(self)
	run := "/api/bash/execute_bash_command"
	for _, tc := range []guardRequest{
		// What a page on another origin can send without a preflight.
		{name: "text/plain fetch from another port", method: "POST", path: run, host: self, origin: "http://127.0.0.1:9", ctype: "text/plain", body: bashBody(dir), want: 403},
		{name: "text/plain form without Origin", method: "POST", path: run, host: self, ctype: "text/plain", body: bashBody(dir), want: 415},
		{name: "urlencoded form", method: "POST", path: run, host: self, ctype: "application/x-www-form-urlencoded", body: "a=b", want: 415},
		{name: "multipart to a JSON route", method: "POST", path: run, host: self, ctype: "multipart/form-data; boundary=x", body: "--x--", want: 415},
		{name: "cross-site marker", method: "POST", path: run, host: self, site: "cross-site", ctype: "application/json", body: bashBody(dir), want: 403},
		{name: "same-site is another origin", method: "POST", path: run, host: self, site: "same-site", ctype: "application/json", body: bashBody(dir), want: 403},
		{name: "null origin", method: "POST", path: run, host: self, origin: "null", ctype: "application/json", body: bashBody(dir), want: 403},
		{name: "https origin of the same host", method: "POST", path: run, host: self, origin: "https://" + self, ctype: "application/json", body: bashBody(dir), want: 403},
		{name: "cross-origin GET", method: "GET", path: "/api/conversations/search", host: self, origin: "http://evil.example", want: 403},
		{name: "websocket from another origin", method: "GET", path: "/sockets/bash-events", host: self, origin: "http://localhost:9", want: 403},
		// DNS rebinding: the page's own name, resolved to 127.0.0.1.
		{name: "rebinding name", method: "GET", path: "/api/conversations/search", host: "evil.example:" + port, want: 421},
		{name: "rebinding name, same origin", method: "POST", path: run, host: "evil.example:" + port, origin: "http://evil.example:" + port, ctype: "application/json", body: bashBody(dir), want: 421},
		{name: "a name of localhost's own", method: "GET", path: "/alive", host: "evil.localhost.example:" + port, want: 421},
		// What real clients send.
		{name: "reference client JSON", method: "POST", path: run, host: self, ctype: "application/json", body: `{"command":"true"}`},
		{name: "same-origin page", method: "POST", path: run, host: self, origin: "http://" + self, site: "same-origin", ctype: "application/json", body: `{"command":"true"}`},
		{name: "localhost", method: "GET", path: "/alive", host: "localhost:" + port},
		{name: "LOCALHOST.", method: "GET", path: "/alive", host: "LOCALHOST.:" + port},
		{name: "ipv6 literal", method: "GET", path: "/alive", host: "[::1]:" + port},
		{name: "an allowed name", method: "GET", path: "/alive", host: "devbox.lan:" + port},
		{name: "typed in the address bar", method: "GET", path: "/alive", host: self, site: "none"},
		{name: "no body", method: "POST", path: "/api/conversations/00000000000000000000000000000000/pause", host: self},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := guardDo(t, ts.http.URL, tc)
			if tc.want == 0 {
				if status == 403 || status == 415 || status == 421 {
					t.Errorf("refused with %d: %s", status, body)
				}
				return
			}
			if status != tc.want {
				t.Errorf("status %d, want %d: %s", status, tc.want, body)
			}
			if !strings.Contains(body, `"detail"`) {
				t.Errorf("the refusal has no detail: %s", body)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "marker")); err == nil {
		t.Error("a refused request ran its command")
	}
}

// TestSameOriginUpload checks the one multipart route: the reference
// client's upload passes, a page's does not.
func TestSameOriginUpload(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil)
	u, _ := url.Parse(ts.http.URL)
	dir := t.TempDir()
	for _, tc := range []struct {
		name, origin, site string
		want               int
	}{
		{name: "reference client", want: 200},
		{name: "form on another origin", origin: "http://127.0.0.1:9", site: "same-site", want: 403},
		{name: "form on another site", site: "cross-site", want: 403},
		{name: "same-origin page", origin: "http://" + u.Host, site: "same-origin", want: 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			mw := multipart.NewWriter(&b)
			fw, _ := mw.CreateFormFile("file", "x")
			fw.Write([]byte("content"))
			mw.Close()
			target := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
			status, body := guardDo(t, ts.http.URL, guardRequest{method: "POST", path: "/api/file/upload?path=" + url.QueryEscape(target),
				host: u.Host, origin: tc.origin, site: tc.site, ctype: mw.FormDataContentType(), body: b.String()})
			if status != tc.want {
				t.Fatalf("status %d, want %d: %s", status, tc.want, body)
			}
			_, err := os.Stat(target)
			if written := err == nil; written != (tc.want == 200) {
				t.Errorf("file written: %v, want %v", written, tc.want == 200)
			}
		})
	}
}

// TestKeyedServerUnknownPath checks that with a key an unknown path
// answers 401 before 404, as the reference's does, and that the key, not
// the origin, decides.
func TestKeyedServerUnknownPath(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, &server.Options{SessionAPIKeys: []string{"k"}})
	u, _ := url.Parse(ts.http.URL)
	for _, tc := range []guardRequest{
		{name: "unknown path without key", method: "GET", path: "/api/no-such-route", host: u.Host, want: 401},
		{name: "unknown path with key", method: "GET", path: "/api/no-such-route", host: u.Host, key: "k", want: 404},
		{name: "another origin with the key", method: "GET", path: "/api/conversations/search", host: u.Host, origin: "http://app.example", key: "k", want: 200},
		{name: "another origin without the key", method: "GET", path: "/api/conversations/search", host: u.Host, origin: "http://app.example", want: 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if status, body := guardDo(t, ts.http.URL, tc); status != tc.want {
				t.Errorf("status %d, want %d: %s", status, tc.want, body)
			}
		})
	}
}

func guardDo(t *testing.T, base string, tc guardRequest) (int, string) {
	t.Helper()
	req, err := http.NewRequest(tc.method, base+tc.path, strings.NewReader(tc.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = tc.host
	for k, v := range map[string]string{"Origin": tc.origin, "Sec-Fetch-Site": tc.site, "Content-Type": tc.ctype, "X-Session-API-Key": tc.key} {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	if strings.HasPrefix(tc.path, "/sockets/") {
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "websocket")
		req.Header.Set("Sec-WebSocket-Version", "13")
		req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	}
	// A socket that opens (a guard that let it through) answers 101 and
	// then nothing: the timeout is a hang guard.
	c := &http.Client{Timeout: time.Minute}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusSwitchingProtocols {
		return resp.StatusCode, ""
	}
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

// FuzzSameOrigin checks the guard's promise on any Host and Origin: a
// key-less server lets a request through only when its Host is an IP
// literal, a localhost name or an allowed name, and its Origin, if any,
// is exactly the server's own.
func FuzzSameOrigin(f *testing.F) {
	for _, s := range [][2]string{
		{"127.0.0.1:8000", ""}, {"127.0.0.1:8000", "http://127.0.0.1:8000"}, {"127.0.0.1:8000", "http://127.0.0.1:8001"},
		{"evil.example:8000", "http://evil.example:8000"}, {"localhost:8000", "http://LOCALHOST:8000"},
		{"[::1]:8000", "http://[::1]:8000"}, {"127.0.0.1:8000", "null"}, {"a.localhost", "http://a.localhost"},
		{"127.0.0.1:8000", "http://127.0.0.1:8000/path"}, {"", "http://x"}, {"devbox.lan", "ftp://devbox.lan"},
	} {
		f.Add(s[0], s[1])
	}
	srv, err := server.New(&server.Options{AllowedHosts: []string{"devbox.lan"}, ConversationsPath: f.TempDir() + "/c",
		WorkspacePath: f.TempDir(), BashEventsDir: f.TempDir() + "/b"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, host, origin string) {
		if strings.ContainsAny(host+origin, "\r\n\x00") {
			return // not a header value
		}
		req := httptest.NewRequest("GET", "http://127.0.0.1/alive", nil)
		req.Host = host
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			return
		}
		h := host
		if hh, _, err := net.SplitHostPort(host); err == nil {
			h = hh
		}
		h = strings.ToLower(strings.TrimSuffix(strings.Trim(h, "[]"), "."))
		if h != "" && net.ParseIP(h) == nil && h != "localhost" && !strings.HasSuffix(h, ".localhost") && h != "devbox.lan" {
			t.Errorf("Host %q passed", host)
		}
		if origin != "" {
			ou, err := url.Parse(origin)
			if err != nil || ou.Scheme != "http" || !strings.EqualFold(ou.Host, host) {
				t.Errorf("Origin %q passed for Host %q", origin, host)
			}
		}
	})
}
