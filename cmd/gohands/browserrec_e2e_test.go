package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/tools/browser"
)

// gohands run --browser records the browser session: the model opens a
// loopback page, starts recording, goes to a second page whose address
// holds a --secret value, and stops. The recorder comes from
// $GOHANDS_RRWEB_URL (served on loopback here); the workspace's recording
// directory holds rrweb's events of both pages, the secret masked, as
// many as the stop said.
func TestE2EBrowserRecording(t *testing.T) {
	if _, err := browser.FindChromium(""); err != nil {
		testenv.Missing(t, "%v", err)
	}
	rrweb, err := os.ReadFile(filepath.Join("..", "..", "tools", "browser", "testdata", "rrweb", "node_modules", "rrweb", "dist", "rrweb.umd.cjs"))
	if err != nil {
		testenv.Missing(t, "rrweb is not installed (run ./scripts/deps.sh): %v", err)
	}
	const secret = "s3cret-e2e-rec-77"
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
	defer site.Close()

	e := newE2E(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("n1", browser.NavigateName, map[string]any{"url": site.URL + "/a"})}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("r1", browser.StartRecName, map[string]any{})}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("n2", browser.NavigateName, map[string]any{"url": site.URL + "/b?token=" + secret})}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("r2", browser.StopRecName, map[string]any{})}},
		finishReply("recorded"),
	)
	tmp := t.TempDir() // Chromium's profile goes under TMPDIR
	e.env = append(e.env, "TMPDIR="+tmp, browser.RecorderURLEnv+"="+site.URL+"/rrweb.js")
	e.mustRun(0, e.args("--browser", "--secret", "REC_TOKEN="+secret, "record the pages")...)

	reqs := e.srv.Requests()
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
	recDir := filepath.Join(e.work, browser.RecordingDirName)
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
		if strings.Contains(string(data), secret) {
			t.Errorf("%s holds the secret", f)
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
	if !hrefs[site.URL+"/a"] || !hrefs[site.URL+"/b?token=<secret-hidden>"] {
		t.Errorf("recorded pages %v", hrefs)
	}
	if !strings.Contains(snapshots, "Apples.") || !strings.Contains(snapshots, "Bananas.") {
		t.Errorf("the full snapshots lack the pages' text")
	}
	if pids := processesMentioning(t, tmp); len(pids) > 0 {
		t.Errorf("processes of the run's Chromium left after it ended: %v", pids)
	}
}
