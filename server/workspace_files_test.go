package server_test

import (
	"encoding/base64"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server"
	"github.com/gohands/gohands/tools/browser"
)

// workspaceFixture starts a keyed server with one conversation whose
// workspace holds a report, a directory with an index, one without, an
// image, and links inside and outside.
func workspaceFixture(t *testing.T) (ts *testServer, id, dir string) {
	t.Helper()
	ts = newTestServer(t, &server.Options{SessionAPIKeys: []string{"k"}})
	dir = t.TempDir()
	outside := t.TempDir()
	for name, content := range map[string]string{
		"report.html": "<h1>REPORT-MARKER</h1>", "sub/index.html": "SUB-INDEX", "noindex/a.txt": "a",
		"../" + filepath.Base(outside) + "/secret.txt": "SECRET",
	} {
		p := filepath.Join(dir, name)
		if strings.HasPrefix(name, "..") {
			p = filepath.Join(outside, "secret.txt")
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	png, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
	os.WriteFile(filepath.Join(dir, "plot.png"), png, 0o644)
	os.Symlink(outside, filepath.Join(dir, "escape"))
	os.Symlink("report.html", filepath.Join(dir, "alias.html"))
	model := llmtest.NewChat(t)
	body := ts.startBody(model, nil)
	body["workspace"] = map[string]any{"working_dir": dir, "kind": "LocalWorkspace"}
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", body, &info)
	return ts, info["id"].(string), dir
}

func getWith(t *testing.T, url string, hdr map[string]string, cookie *http.Cookie) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if cookie != nil {
		req.AddCookie(cookie)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// TestWorkspaceFiles: the workspace routes serve files and directory
// indexes to the key or the workspace cookie (nothing else takes the
// cookie), keep to the workspace through .. and links, and answer the
// reference's statuses.
func TestWorkspaceFiles(t *testing.T) {
	t.Parallel()
	ts, id, _ := workspaceFixture(t)
	base := ts.http.URL + "/api/conversations/" + id + "/workspace"
	key := map[string]string{"X-Session-API-Key": "k"}
	if st, _, _ := getWith(t, base+"/report.html", nil, nil); st != 401 {
		t.Errorf("no key, no cookie: %d", st)
	}
	// The cookie.
	req, _ := http.NewRequest("POST", ts.http.URL+"/api/auth/workspace-session", nil)
	req.Header.Set("X-Session-API-Key", "k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cookies := resp.Cookies()
	if resp.StatusCode != 204 || len(cookies) != 1 {
		t.Fatalf("POST workspace-session: %d %v", resp.StatusCode, resp.Header)
	}
	ck := cookies[0]
	sc := resp.Header.Get("Set-Cookie")
	for _, want := range []string{"oh_workspace_session_key=", "Path=/api/conversations", "HttpOnly", "SameSite=None", "Secure", "Partitioned"} {
		if !strings.Contains(sc, want) {
			t.Errorf("Set-Cookie %q lacks %s", sc, want)
		}
	}
	if strings.Contains(sc, "=k;") {
		t.Errorf("the cookie holds the session key: %s", sc)
	}
	for _, tc := range []struct {
		path   string
		hdr    map[string]string
		cookie *http.Cookie
		status int
		body   string
	}{
		{"/report.html", key, nil, 200, "REPORT-MARKER"},
		{"/report.html", nil, ck, 200, "REPORT-MARKER"},
		{"", nil, ck, 404, "No index.html"},
		{"/sub/", nil, ck, 200, "SUB-INDEX"},
		{"/sub", nil, ck, 200, "SUB-INDEX"},
		{"/noindex", nil, ck, 404, "No index.html in directory"},
		{"/missing.txt", nil, ck, 404, "File not found"},
		{"/alias.html", nil, ck, 200, "REPORT-MARKER"},
		{"/escape/secret.txt", nil, ck, 400, "outside the workspace"},
		{"/..%2F" + "x", nil, ck, 400, "outside the workspace"},
		{"/report.html", nil, &http.Cookie{Name: "oh_workspace_session_key", Value: "k"}, 401, ""},
	} {
		st, body, _ := getWith(t, base+tc.path, tc.hdr, tc.cookie)
		if st != tc.status || !strings.Contains(body, tc.body) || strings.Contains(body, "SECRET") {
			t.Errorf("GET workspace%s: %d %q, want %d %q", tc.path, st, body, tc.status, tc.body)
		}
	}
	if st, _, h := getWith(t, base+"/plot.png", map[string]string{"Range": "bytes=0-3"}, ck); st != 206 || h.Get("Content-Type") != "image/png" {
		t.Errorf("a range of the image: %d %v", st, h)
	}
	if st, body, _ := getWith(t, ts.http.URL+"/api/conversations/"+unknownID+"/workspace/report.html", key, nil); st != 404 || !strings.Contains(body, "Conversation not found") {
		t.Errorf("unknown conversation: %d %s", st, body)
	}
	// The cookie opens the workspace routes only.
	if st, _, _ := getWith(t, ts.http.URL+"/api/conversations/count", nil, ck); st != 401 {
		t.Errorf("the cookie opened another route: %d", st)
	}
}

// workspacePage gets the workspace cookie with the key, then loads a
// workspace file with the cookie alone, by fetch and as an image.
const workspacePage = `<!doctype html><html><body><script>
const report = {};
const settle = (name, p) => p.then(v => { report[name] = v; }, e => { report[name] = "error: " + e; });
const file = "TARGET/api/conversations/ID/workspace/report.html";
function image() {
  return new Promise(resolve => {
    const img = new Image();
    img.onload = () => resolve("loaded");
    img.onerror = () => resolve("failed");
    img.src = "TARGET/api/conversations/ID/workspace/plot.png";
  });
}
(async () => {
  await settle("before", fetch(file, {credentials: "include"}).then(r => String(r.status)));
  await settle("image_before", image());
  await settle("session", fetch("TARGET/api/auth/workspace-session", {method: "POST", credentials: "include",
    headers: {"X-Session-API-Key": "KEY"}}).then(r => String(r.status)));
  await settle("after", fetch(file, {credentials: "include"}).then(r => r.text()));
  await settle("image_after", image());
  await fetch("/report", {method: "POST", body: JSON.stringify(report)});
})();
</script></body></html>`

// TestWorkspaceCookieBrowser: in headless Chromium, a page of another
// origin cannot load workspace files until it has exchanged the key for
// the workspace cookie; then the cookie alone loads a file by fetch and an
// image by <img>, which cannot send the key.
func TestWorkspaceCookieBrowser(t *testing.T) {
	t.Parallel()
	chromium, err := browser.FindChromium("")
	if err != nil {
		testenv.Missing(t, "%v", err)
	}
	ts, id, _ := workspaceFixture(t)
	site := newPageSite(t)
	got := site.open(t, chromium, strings.NewReplacer("TARGET", ts.http.URL, "ID", id, "KEY", "k").Replace(workspacePage))
	if got["before"] != "401" || got["image_before"] != "failed" {
		t.Errorf("before the cookie: %v", got)
	}
	if got["session"] != "204" || !strings.Contains(got["after"], "REPORT-MARKER") || got["image_after"] != "loaded" {
		t.Errorf("with the cookie: %v", got)
	}
}
