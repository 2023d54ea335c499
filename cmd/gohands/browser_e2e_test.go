package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/tools/browser"
)

// --browser gives the agent the browser tools: the model opens a page
// served on loopback and reads it. The run's Chromium goes away with it.
func TestE2EBrowser(t *testing.T) {
	if _, err := browser.FindChromium(""); err != nil {
		testenv.Missing(t, "%v", err)
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>Opening hours</title><h1>Opening hours</h1><p>We open at nine.</p>`)
	}))
	defer site.Close()

	e := newE2E(t)
	// Chromium's profile goes under TMPDIR: its processes can be found by it.
	tmp := t.TempDir()
	e.env = append(e.env, "TMPDIR="+tmp)
	e.srv.Add(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_1", browser.NavigateName, map[string]any{"url": site.URL})}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_2", browser.GetContentName, map[string]any{})}},
		finishReply("They open at nine."),
	)
	e.mustRun(0, e.args("--browser", "When does the shop open?")...)
	reqs := e.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if got := requestTools(t, reqs[0]); !slices.Contains(got, browser.NavigateName) || !slices.Contains(got, browser.GetStateName) {
		t.Errorf("tools with --browser: %v", got)
	}
	_, texts := toolResults(t, reqs[2])
	if len(texts) != 2 || texts[0] != "Navigated to: "+site.URL || !strings.Contains(texts[1], "# Opening hours\nWe open at nine.") {
		t.Errorf("tool results %q", texts)
	}
	if pids := processesMentioning(t, tmp); len(pids) > 0 {
		t.Errorf("processes of the run's Chromium left after it ended: %v", pids)
	}

	// Without --browser there are no browser tools.
	e2 := newE2E(t, finishReply("done"))
	e2.mustRun(0, e2.args("hi")...)
	if got := requestTools(t, e2.srv.Requests()[0]); slices.Contains(got, browser.NavigateName) {
		t.Errorf("browser tools without --browser: %v", got)
	}
}

// processesMentioning returns the pids of the processes whose command line
// contains s.
func processesMentioning(t *testing.T, s string) []string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Logf("no /proc: %v", err)
		return nil
	}
	var pids []string
	for _, e := range entries {
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(cmd, []byte(s)) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}
