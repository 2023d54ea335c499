package browser_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/tools/browser"
)

// rrwebScript is the recorder pinned by testdata/rrweb/package-lock.json
// (installed by scripts/deps.d/40-npm.sh).
func rrwebScript(t testing.TB) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "rrweb", "node_modules", "rrweb", "dist", "rrweb.umd.cjs"))
	if err != nil {
		testenv.Missing(t, "rrweb is not installed (run ./scripts/deps.sh): %v", err)
	}
	return string(data)
}

// TestRecording: a recording started on a form follows the tab to the
// page the form leads to; the saved files hold rrweb's events of both
// pages (meta, full snapshots, the typing masked) and no secret value.
func TestRecording(t *testing.T) {
	needChromium(t)
	script := rrwebScript(t)
	srv := site(t)
	const secret = "s3cret-Token-42"
	dir := filepath.Join(t.TempDir(), "ws", browser.RecordingDirName)
	ts, _ := newToolset(t, &browser.Options{
		LoadTimeout:    10 * time.Second,
		ActionTimeout:  20 * time.Second,
		RecordingDir:   dir,
		RecorderScript: script,
		Mask:           func(s string) string { return strings.ReplaceAll(s, secret, "<secret-hidden>") },
	})

	if o := ts.call(t, browser.StopRecName, `{}`); !o.IsError || !strings.Contains(text(o), "Not recording") {
		t.Errorf("stop before start: error %v %q", o.IsError, text(o))
	}
	ts.ok(t, browser.NavigateName, `{"url":"`+srv.URL+`/form"}`)
	if got := ts.ok(t, browser.StartRecName, `{}`); got != "Recording started" {
		t.Errorf("start: %q", got)
	}
	if got := ts.ok(t, browser.StartRecName, `{}`); got != "Already recording" {
		t.Errorf("second start: %q", got)
	}
	s := ts.state(t)
	name := s.index(t, "name input", func(tag, _, ph, _ string) bool { return tag == "input" && ph == "Your name" })
	send := s.index(t, "submit button", func(tag, text, _, _ string) bool { return tag == "button" && text == "Send" })
	ts.ok(t, browser.TypeName, fmt.Sprintf(`{"index":%d,"text":%q}`, name, secret))
	ts.ok(t, browser.ClickName, fmt.Sprintf(`{"index":%d}`, send))
	got := ts.ok(t, browser.StopRecName, `{}`)
	m := regexp.MustCompile(`^Recording stopped\. Captured (\d+) events in (\d+) file\(s\)\. Saved to: (.+)$`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("stop: %q", got)
	}
	if filepath.Dir(m[3]) != dir || !strings.HasPrefix(filepath.Base(m[3]), "recording-") {
		t.Errorf("saved to %s, want a recording-<time> directory in %s", m[3], dir)
	}
	files, err := filepath.Glob(filepath.Join(m[3], "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(len(files)) != m[2] {
		t.Errorf("%d files, the stop says %s", len(files), m[2])
	}
	var events []struct {
		Type int             `json:"type"`
		Data json.RawMessage `json:"data"`
	}
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
		events = append(events, evs...)
	}
	if fmt.Sprint(len(events)) != m[1] {
		t.Errorf("%d events in the files, the stop says %s", len(events), m[1])
	}
	// rrweb event types: 2 full snapshot, 3 incremental (data.source 5
	// is an input, its text masked), 4 meta (with the page's href).
	metas, texts, incremental, inputs := map[string]bool{}, "", 0, 0
	for _, e := range events {
		switch e.Type {
		case 2:
			texts += string(e.Data)
		case 3:
			incremental++
			var in struct {
				Source int
				Text   *string
			}
			json.Unmarshal(e.Data, &in)
			if in.Source == 5 && in.Text != nil {
				inputs++
				if strings.Trim(*in.Text, "*") != "" {
					t.Errorf("input recorded unmasked: %s", e.Data)
				}
			}
		case 4:
			var meta struct{ Href string }
			json.Unmarshal(e.Data, &meta)
			metas[meta.Href] = true
		}
	}
	if incremental == 0 || inputs == 0 {
		t.Errorf("%d incremental events, %d inputs", incremental, inputs)
	}
	if !metas[srv.URL+"/form"] || !metas[srv.URL+"/result?name=<secret-hidden>&bio=&secret=x"] {
		t.Errorf("pages %v", metas)
	}
	for _, want := range []string{`"tagName":"form"`, `"textContent":"Hello, <secret-hidden>!"`, `"placeholder":"Your name"`} {
		if !strings.Contains(texts, want) {
			t.Errorf("no %s in the snapshots", want)
		}
	}
	if strings.Contains(texts, "var x") {
		t.Error("script text in the snapshots")
	}

	// Recording again starts a new directory; without a page change the
	// stop still saves the page's snapshot.
	ts.ok(t, browser.StartRecName, `{}`)
	if got := ts.ok(t, browser.StopRecName, `{}`); !strings.Contains(got, "Saved to: "+dir) || strings.Contains(got, m[3]) || strings.Contains(got, "Captured 0 events") {
		t.Errorf("second recording: %q", got)
	}
}

// TestRecordingNeedsWorkspace: without a directory to save in, starting
// a recording is the model's error.
func TestRecordingNeedsWorkspace(t *testing.T) {
	needChromium(t)
	ts, _ := newToolset(t, nil)
	if o := ts.call(t, browser.StartRecName, `{}`); !o.IsError || !strings.Contains(text(o), "no workspace") {
		t.Errorf("start without a directory: error %v %q", o.IsError, text(o))
	}
}
