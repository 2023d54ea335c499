package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/procgroup"
	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/server"
	"github.com/gohands/gohands/tools/browser"
)

// corsDo sends a request with an Origin and returns the status and the
// Access-Control-Allow-Origin answered.
func corsDo(t *testing.T, url, method, path, origin string, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url+path, nil)
	req.Header.Set("Origin", origin)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin")
}

// TestCORS checks which origins each kind of server lets read its
// answers: a keyed server the configured origins, the regex's, loopback
// ones and any on the workspace cookie routes; a key-less server only the
// configured ones (the same-origin guard refuses the rest, loopback pages
// included).
func TestCORS(t *testing.T) {
	t.Parallel()
	const app, other = "https://app.example", "https://evil.example"
	keyed := newTestServer(t, &server.Options{SessionAPIKeys: []string{"k"}, AllowCORSOrigins: []string{app}, AllowCORSOriginRegex: `https://[a-z]+\.corp\.example`})
	open := newTestServer(t, &server.Options{AllowCORSOrigins: []string{app}})
	key := map[string]string{"X-Session-API-Key": "k"}
	pre := map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "x-session-api-key,content-type"}
	for _, tc := range []struct {
		name, url, method, path, origin string
		hdr                             map[string]string
		status                          int
		acao                            string
	}{
		{"keyed: configured origin", keyed.http.URL, "GET", "/api/conversations/count", app, key, 200, app},
		{"keyed: regex origin", keyed.http.URL, "GET", "/api/conversations/count", "https://dev.corp.example", key, 200, "https://dev.corp.example"},
		{"keyed: regex is anchored", keyed.http.URL, "GET", "/api/conversations/count", "https://dev.corp.example.evil.example", key, 200, ""},
		{"keyed: loopback origin", keyed.http.URL, "GET", "/api/conversations/count", "http://localhost:3000", key, 200, "http://localhost:3000"},
		{"keyed: other origin not allowed", keyed.http.URL, "GET", "/api/conversations/count", other, key, 200, ""},
		{"keyed: other origin on a workspace cookie route", keyed.http.URL, "DELETE", "/api/auth/workspace-session", other, nil, 0, other},
		{"keyed: preflight of an allowed origin, no key", keyed.http.URL, "OPTIONS", "/api/conversations", app, pre, 200, app},
		{"keyed: preflight of another origin", keyed.http.URL, "OPTIONS", "/api/conversations", other, pre, 400, ""},
		{"keyed: still needs the key", keyed.http.URL, "GET", "/api/conversations/count", app, nil, 401, app},
		{"key-less: configured origin passes the guard", open.http.URL, "GET", "/api/conversations/count", app, nil, 200, app},
		{"key-less: preflight of the configured origin", open.http.URL, "OPTIONS", "/api/bash/execute_bash_command", app, pre, 200, app},
		{"key-less: loopback page refused", open.http.URL, "GET", "/api/conversations/count", "http://localhost:3000", nil, 403, ""},
		{"key-less: other origin refused", open.http.URL, "GET", "/api/conversations/count", other, nil, 403, ""},
		{"key-less: preflight of another origin", open.http.URL, "OPTIONS", "/api/conversations", other, pre, 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, acao := corsDo(t, tc.url, tc.method, tc.path, tc.origin, tc.hdr)
			if tc.status != 0 && status != tc.status || acao != tc.acao {
				t.Errorf("status %d, Access-Control-Allow-Origin %q; want %d, %q", status, acao, tc.status, tc.acao)
			}
		})
	}
	if _, err := server.New(&server.Options{ConversationsPath: t.TempDir(), AllowCORSOriginRegex: "("}); err == nil {
		t.Error("a bad allow_cors_origin_regex was accepted")
	}
}

// corsPage reads the server's answers from a page of another origin, with
// the session key when KEY is set (a preflighted request), and opens its
// bash socket.
const corsPage = `<!doctype html><html><body><script>
const report = {};
const settle = (name, p) => p.then(v => { report[name] = v; }, e => { report[name] = "error: " + e; });
const headers = "KEY" ? {"X-Session-API-Key": "KEY"} : {};
function socketOpens() {
  return new Promise(resolve => {
    const ws = new WebSocket("TARGET".replace("http", "ws") + "/sockets/bash-events" + ("KEY" ? "?session_api_key=KEY" : ""));
    ws.onopen = () => { ws.close(); resolve("opened"); };
    ws.onerror = () => resolve("refused");
  });
}
Promise.all([
  settle("read", fetch("TARGET/api/conversations/count", {headers}).then(r => r.text())),
  settle("post", fetch("TARGET/api/settings/secrets", {method: "PUT", headers: {...headers, "Content-Type": "application/json"},
    body: JSON.stringify({name: "FROM_PAGE", value: "v"})}).then(r => String(r.status))),
  settle("socket", socketOpens()),
]).then(() => fetch("/report", {method: "POST", body: JSON.stringify(report)}));
</script></body></html>`

// pageSite serves one page on a loopback origin of its own and takes
// what the page reports.
type pageSite struct {
	*httptest.Server
	page    chan string
	reports chan map[string]string
}

func newPageSite(t *testing.T) *pageSite {
	p := &pageSite{page: make(chan string, 1), reports: make(chan map[string]string, 1)}
	var current string
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			select {
			case current = <-p.page:
			default:
			}
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, current)
		case "/report":
			var m map[string]string
			json.NewDecoder(r.Body).Decode(&m)
			select {
			case p.reports <- m:
			default:
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(p.Close)
	return p
}

// open shows page in headless Chromium and returns what it reported.
func (p *pageSite) open(t *testing.T, chromium, page string) map[string]string {
	t.Helper()
	p.page <- page
	dir := t.TempDir()
	cmd := exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), p.URL+"/")
	procgroup.Own(cmd)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		procgroup.Kill(cmd)
		cmd.Wait()
	}()
	select {
	case m := <-p.reports:
		t.Logf("the page of %s saw: %v", p.URL, m)
		return m
	case <-time.After(2 * time.Minute): // a hang guard only
		t.Fatalf("the page never reported; chromium said:\n%s", stderr.String())
	}
	return nil
}

// TestCORSBrowser: in headless Chromium, a page of an origin in
// AllowCORSOrigins reads the answers of a keyed and of a key-less server,
// writes through them and opens their sockets; a page of another loopback
// origin does none of it on the key-less server (the guard refuses the
// requests themselves), and on the keyed one it may (loopback origins are
// allowed there, as in the reference, and the key is the proof).
func TestCORSBrowser(t *testing.T) {
	t.Parallel()
	chromium, err := browser.FindChromium("")
	if err != nil {
		testenv.Missing(t, "%v", err)
	}
	for _, tc := range []struct {
		name string
		key  string
	}{{"keyed", "k"}, {"key-less", ""}} {
		t.Run(tc.name, func(t *testing.T) {
			allowed, other := newPageSite(t), newPageSite(t)
			opts := &server.Options{AllowCORSOrigins: []string{allowed.URL}, PersistenceDir: t.TempDir()}
			if tc.key != "" {
				opts.SessionAPIKeys = []string{tc.key}
			}
			ts := newTestServer(t, opts)
			page := strings.NewReplacer("TARGET", ts.http.URL, "KEY", tc.key).Replace(corsPage)
			got := allowed.open(t, chromium, page)
			if got["read"] != "0" || got["post"] != "200" || got["socket"] != "opened" {
				t.Errorf("the allowed page: %v, want read 0, post 200, socket opened", got)
			}
			if st, _ := ts.on(t).do("DELETE", "/api/settings/secrets/FROM_PAGE", nil); st != 200 {
				t.Errorf("the allowed page's secret is not there (status %d)", st)
			}
			got = other.open(t, chromium, page)
			if tc.key != "" {
				return
			}
			if !strings.HasPrefix(got["read"], "error") || !strings.HasPrefix(got["post"], "error") || got["socket"] != "refused" {
				t.Errorf("a page of another origin got through to the key-less server: %v", got)
			}
			if st, _ := ts.on(t).do("GET", "/api/settings/secrets/FROM_PAGE", nil); st != 404 {
				t.Errorf("the refused page wrote a secret (status %d)", st)
			}
		})
	}
}
