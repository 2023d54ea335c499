package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
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

// attackPage is a page of another origin that tries, the ways a page can
// without the user's help, to run a command and write a file through a
// key-less server at TARGET, then reports what it saw to its own origin.
const attackPage = `<!doctype html><html><body>
<form id="f" method="POST" enctype="text/plain" target="sink" action="TARGET/api/bash/execute_bash_command">
<input name='{"command":"touch MARKER-form","timeout":10,"x":"' value='"}'></form>
<iframe name="sink" id="sink"></iframe>
<script>
const report = {};
const settle = (name, p) => p.then(v => { report[name] = v; }, e => { report[name] = "error: " + e; });
function socketOpens() {
  return new Promise(resolve => {
    const ws = new WebSocket("TARGET".replace("http", "ws") + "/sockets/bash-events");
    ws.onopen = () => { ws.close(); resolve("opened"); };
    ws.onerror = () => resolve("refused");
  });
}
function formPosted() {
  return new Promise(resolve => {
    document.getElementById("sink").onload = () => resolve("loaded");
    document.getElementById("f").submit();
  });
}
const upload = new FormData();
upload.append("file", new Blob(["written by a page"]), "x");
Promise.all([
  settle("fetch", fetch("TARGET/api/bash/execute_bash_command", {method: "POST", mode: "no-cors",
    headers: {"Content-Type": "text/plain"}, body: JSON.stringify({command: "touch MARKER-fetch", timeout: 10})}).then(r => r.type)),
  settle("upload", fetch("TARGET/api/file/upload?path=UPLOAD", {method: "POST", mode: "no-cors", body: upload}).then(r => r.type)),
  settle("read", fetch("TARGET/api/bash/bash_events/search").then(r => r.text())),
  settle("socket", socketOpens()),
  settle("form", formPosted()),
]).then(() => fetch("/report", {method: "POST", body: JSON.stringify(report)}));
</script></body></html>`

// TestSameOriginBrowser opens the attack page in headless Chromium, served
// from another loopback port than the key-less server's, and checks that
// nothing it sent ran: no marker file, no uploaded file, no bash command,
// no socket.
func TestSameOriginBrowser(t *testing.T) {
	t.Parallel()
	chromium, err := browser.FindChromium("")
	if err != nil {
		testenv.Missing(t, "%v", err)
	}
	dir := t.TempDir()
	ts := newTestServer(t, &server.Options{})
	upload := filepath.Join(dir, "uploaded")
	marker := filepath.Join(dir, "marker")
	page := strings.NewReplacer("TARGET", ts.http.URL, "MARKER", marker, "UPLOAD", upload).Replace(attackPage)

	reports := make(chan map[string]string, 1)
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, page)
		case "/report":
			var m map[string]string
			json.NewDecoder(r.Body).Decode(&m)
			select {
			case reports <- m:
			default:
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer attacker.Close()

	cmd := exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), attacker.URL+"/")
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
	var report map[string]string
	select {
	case report = <-reports:
	case <-time.After(2 * time.Minute): // a hang guard only
		t.Fatalf("the page never reported; chromium said:\n%s", stderr.String())
	}
	t.Logf("the page saw: %v", report)
	if report["socket"] != "refused" {
		t.Errorf("the page opened the bash socket: %q", report["socket"])
	}
	if strings.Contains(report["read"], "items") {
		t.Errorf("the page read the server's answer: %s", report["read"])
	}
	for _, f := range []string{marker + "-fetch", marker + "-form", upload} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s was written by the page", filepath.Base(f))
		}
	}
	// The server never saw a command: the bash log is empty.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.http.URL+"/api/bash/bash_events/search", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var events struct {
		Items []any `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&events); err != nil {
		t.Fatal(err)
	}
	if len(events.Items) != 0 {
		t.Errorf("the server ran %d bash events from the page: %s", len(events.Items), fmt.Sprint(events.Items...))
	}
}
