package server_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/server"
	"github.com/gohands/gohands/tools/browser"
)

// TestDocsOffline opens /docs and /redoc in headless Chromium that can
// reach nothing but loopback: Swagger UI and Redoc render the server's own
// document (its title, its operations), and every request the pages made
// went to the server.
func TestDocsOffline(t *testing.T) {
	t.Parallel()
	chromium, err := browser.FindChromium("")
	if err != nil {
		testenv.Missing(t, "%v", err)
	}
	ts := newTestServer(t, &server.Options{SessionAPIKeys: []string{"k"}})
	var doc struct {
		Info struct {
			Title string `json:"title"`
		} `json:"info"`
	}
	ts.must(200, "GET", "/openapi.json", nil, &doc)
	srv, _ := url.Parse(ts.http.URL)

	// Every request for another host goes to this proxy, which answers
	// none and records it: the pages must send it nothing.
	var mu sync.Mutex
	var outside []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		// Chromium's own services (updates, sign-in, time) are not the
		// pages'.
		if !strings.HasSuffix(host, ".google.com") && !strings.HasSuffix(host, ".googleapis.com") {
			mu.Lock()
			outside = append(outside, r.Method+" "+r.Host+r.URL.Path)
			mu.Unlock()
		}
		http.Error(w, "offline", http.StatusBadGateway)
	}))
	defer proxy.Close()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("proxy-server", proxy.URL))
	actx, cancel := chromedp.NewExecAllocator(t.Context(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 5*time.Minute) // a hang guard only: one scrolled read of /docs took over 100 s at load 11
	defer cancel()
	// scrolledText is the text the page showed while scrolled through
	// from top to bottom, one line per line shown. Each step waits two
	// frames or 100 ms, whichever comes first: a loaded headless Chromium
	// once produced no frame for minutes, and innerText lays the page out
	// by itself.
	const scrolledText = `(async () => {
		const seen = new Set();
		const frame = () => new Promise(r => {
			requestAnimationFrame(() => requestAnimationFrame(r));
			setTimeout(r, 100);
		});
		for (let y = 0; ; y += innerHeight / 2) {
			scrollTo(0, y);
			await frame();
			for (const l of document.body.innerText.split("\n")) seen.add(l);
			if (y + innerHeight >= document.documentElement.scrollHeight) break;
		}
		scrollTo(0, 0);
		return [...seen].join("\n");
	})()`
	const resources = `performance.getEntriesByType("resource").map(e => e.name)`
	// show opens path and waits until the page shows what sel selects;
	// it returns its text and the page's whole text and resources.
	show := func(path, sel string) (text, all string, res []string) {
		t.Helper()
		if sel == "" {
			sel = "body"
		}
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Navigate(ts.http.URL+path)); err != nil {
			t.Fatal(err)
		}
		text, err := chromedp.Run(ctx, chromedp.Poll[string](`((document.querySelector(`+strconv.Quote(sel)+`) || {}).innerText || "").includes(`+strconv.Quote(doc.Info.Title)+`) && document.querySelector(`+strconv.Quote(sel)+`).innerText`))
		if err != nil {
			body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML.slice(0, 3000)`))
			t.Fatalf("%s: %s never showed: %v\n%s", path, sel, err, body)
		}
		// The operations render after the title. Swagger UI renders a long
		// list of operations (150 tags and operations or more) and of
		// schemas only where the window shows it, so the page is read while
		// scrolled from top to bottom.
		for {
			all, err = chromedp.Run(ctx, chromedp.Evaluate[string](scrolledText, chromedp.EvalAwaitPromise))
			if err != nil {
				t.Fatalf("%s: reading the page: %v", path, err)
			}
			if strings.Contains(all, "OpenAI Compatibility") && strings.Contains(all, "/alive") {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("%s: the operations never showed: %v\n%.3000s", path, ctx.Err(), all)
			case <-time.After(100 * time.Millisecond):
			}
		}
		res, _ = chromedp.Run(ctx, chromedp.Evaluate[[]string](resources))
		return text, all, res
	}
	swaggerTitle, swaggerOps, swaggerRes := show("/docs", ".swagger-ui .info .title")
	redocTitle, redocText, redocRes := show("/redoc", "h1")
	if !strings.Contains(swaggerTitle, doc.Info.Title) || !strings.Contains(redocTitle, doc.Info.Title) {
		t.Errorf("titles: swagger %q, redoc %q, want %q", swaggerTitle, redocTitle, doc.Info.Title)
	}
	// The groups of operations, by tag, as both pages list them.
	// (Redoc lists only a group's first operations until asked for more.)
	for _, op := range []string{"Conversations", "Settings", "Workspaces", "OpenAI Compatibility", "/server_info"} {
		if !strings.Contains(swaggerOps, op) || !strings.Contains(redocText, op) {
			t.Errorf("%s is not shown (swagger: %v)", op, strings.Contains(swaggerOps, op))
		}
	}
	requested := append(swaggerRes, redocRes...)
	var fromServer int
	for _, u := range requested {
		if p, err := url.Parse(u); err == nil && p.Host == srv.Host {
			fromServer++
		}
	}
	if fromServer < 5 {
		t.Errorf("the pages loaded %d resources from the server, want their scripts, style and document: %v", fromServer, requested)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(outside) > 0 {
		t.Errorf("the pages sent requests outside the server: %v", outside)
	}
	// Redoc's CDN logo is listed by the page (its policy blocked it: the
	// proxy saw nothing).
	b, _ := json.Marshal(requested)
	t.Logf("resources: %s", b)
}
