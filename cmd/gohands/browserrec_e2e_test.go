package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/tools/browser"
)

// recordingSite serves two pages (/a, /b) and the pinned rrweb recorder
// (/rrweb.js) on loopback.
func recordingSite(t *testing.T) *httptest.Server {
	t.Helper()
	if _, err := browser.FindChromium(""); err != nil {
		testenv.Missing(t, "%v", err)
	}
	rrweb, err := os.ReadFile(filepath.Join("..", "..", "tools", "browser", "testdata", "rrweb", "node_modules", "rrweb", "dist", "rrweb.umd.cjs"))
	if err != nil {
		testenv.Missing(t, "rrweb is not installed (run ./scripts/deps.sh): %v", err)
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/rrweb.js":
			w.Header().Set("Content-Type", "text/javascript")
			w.Write(rrweb)
		case "/a":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<!doctype html><title>A</title><h1>First page</h1><p>Apples.</p>`)
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<!doctype html><title>B</title><h1>Second page</h1><p>Bananas.</p>`)
		}
	}))
	t.Cleanup(site.Close)
	return site
}

// recordingReplies open /a, start recording, open second (a URL) and stop.
func recordingReplies(site, second string) []llmtest.Reply {
	return []llmtest.Reply{
		{ToolCalls: []llmtest.ToolCall{call("n1", browser.NavigateName, map[string]any{"url": site + "/a"})}},
		{ToolCalls: []llmtest.ToolCall{call("r1", browser.StartRecName, map[string]any{})}},
		{ToolCalls: []llmtest.ToolCall{call("n2", browser.NavigateName, map[string]any{"url": second})}},
		{ToolCalls: []llmtest.ToolCall{call("r2", browser.StopRecName, map[string]any{})}},
		finishReply("recorded"),
	}
}

// checkRecording checks a run of recordingReplies: the stop's result, and
// the recording files in work, which hold as many events as the stop
// said, the metas of /a and of recorded (the second page's address as
// saved), both pages' text, and never leak.
func checkRecording(t *testing.T, reqs []llmtest.Request, work, site, recorded, leak string) {
	t.Helper()
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want 5", len(reqs))
	}
	ids, texts := toolResults(t, reqs[4])
	i := slices.Index(ids, "r2")
	if i < 0 {
		t.Fatalf("no result for the stop: %v %q", ids, texts)
	}
	m := regexp.MustCompile(`^Recording stopped\. Captured (\d+) events in (\d+) file\(s\)\. Saved to: (.+)$`).FindStringSubmatch(texts[i])
	if m == nil {
		t.Fatalf("the stop's result %q", texts[i])
	}
	recDir := filepath.Join(work, browser.RecordingDirName)
	if filepath.Dir(m[3]) != recDir || !strings.HasPrefix(filepath.Base(m[3]), "recording-") {
		t.Errorf("saved to %s, want a recording-<time> directory in %s", m[3], recDir)
	}
	files := mustGlob(t, filepath.Join(recDir, "recording-*", "*.json"))
	if fmt.Sprint(len(files)) != m[2] || len(files) < 2 {
		t.Errorf("%d recording files, the stop says %s (want one flushed before the second page and one at the stop)", len(files), m[2])
	}
	var n int
	hrefs, snapshots := map[string]bool{}, ""
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if leak != "" && strings.Contains(string(data), leak) {
			t.Errorf("%s holds %q", f, leak)
		}
		var evs []struct {
			Type int             `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(data, &evs); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		n += len(evs)
		for _, ev := range evs {
			switch ev.Type { // rrweb: 2 full snapshot, 4 meta
			case 2:
				snapshots += string(ev.Data)
			case 4:
				var meta struct{ Href string }
				json.Unmarshal(ev.Data, &meta)
				hrefs[meta.Href] = true
			}
		}
	}
	if fmt.Sprint(n) != m[1] {
		t.Errorf("%d events in the files, the stop says %s", n, m[1])
	}
	if !hrefs[site+"/a"] || !hrefs[recorded] {
		t.Errorf("recorded pages %v, want %s/a and %s", hrefs, site, recorded)
	}
	if !strings.Contains(snapshots, "Apples.") || !strings.Contains(snapshots, "Bananas.") {
		t.Errorf("the full snapshots lack the pages' text")
	}
}

// gohands run --browser records the browser session: the model opens a
// loopback page, starts recording, goes to a second page whose address
// holds a --secret value, and stops. The recorder comes from
// $GOHANDS_RRWEB_URL (served on loopback here); the workspace's recording
// directory holds rrweb's events of both pages, the secret masked, as
// many as the stop said.
func TestE2EBrowserRecording(t *testing.T) {
	site := recordingSite(t)
	const secret = "s3cret-e2e-rec-77"
	e := newE2E(t, recordingReplies(site.URL, site.URL+"/b?token="+secret)...)
	tmp := t.TempDir() // Chromium's profile goes under TMPDIR
	e.env = append(e.env, "TMPDIR="+tmp, browser.RecorderURLEnv+"="+site.URL+"/rrweb.js")
	e.mustRun(0, e.args("--browser", "--secret", "REC_TOKEN="+secret, "record the pages")...)
	checkRecording(t, e.srv.Requests(), e.work, site.URL, site.URL+"/b?token=<secret-hidden>", secret)
	if pids := processesMentioning(t, tmp); len(pids) > 0 {
		t.Errorf("processes of the run's Chromium left after it ended: %v", pids)
	}
}

// gohands serve records the browser session of a conversation whose start
// request lists the browser tool set.
func TestE2EBrowserRecordingServe(t *testing.T) {
	site := recordingSite(t)
	model := llmtest.New(t, recordingReplies(site.URL, site.URL+"/b")...)
	home, work := t.TempDir(), t.TempDir()
	tmp := t.TempDir() // Chromium's profile goes under TMPDIR
	srv := startServeProc(t, home, work, []string{"TMPDIR=" + tmp, browser.RecorderURLEnv + "=" + site.URL + "/rrweb.js"}, "--autotitle=false")
	id := srv.startConversation(model.URL, `[{"name":"`+browser.Name+`"}]`, work, "record the pages")
	if st := srv.waitStatus(id, 2*time.Minute, "finished", "error", "stuck"); st != "finished" {
		t.Fatalf("status %s, want finished\nserver log:\n%s", st, srv.logs())
	}
	checkRecording(t, model.Requests(), work, site.URL, site.URL+"/b", "")
	// A server stopped by SIGTERM stops its conversations' Chromiums.
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	srv.cmd.Wait()
	if pids := processesMentioning(t, tmp); len(pids) > 0 {
		t.Errorf("processes of the server's Chromium left after it ended: %v", pids)
		for _, pid := range pids {
			exec.Command("kill", "-9", pid).Run()
		}
	}
}
