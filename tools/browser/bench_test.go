package browser_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gohands/gohands/tools/browser"
)

// benchPage serves a page with n links, n inputs and n paragraphs.
func benchPage(b *testing.B, n int) string {
	var sb strings.Builder
	sb.WriteString("<!doctype html><title>Bench</title><h1>Bench</h1>")
	for i := range n {
		fmt.Fprintf(&sb, `<p>Paragraph %d with <a href="/p/%d">a link</a> and <input placeholder="field %d"></p>`, i, i, i)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(sb.String()))
	}))
	b.Cleanup(srv.Close)
	return srv.URL
}

// BenchmarkGetState is one browser_get_state (DOM snapshot, element rules,
// JSON) on a page of 1,000 interactive elements.
func BenchmarkGetState(b *testing.B) {
	needChromium(b)
	ts, _ := newToolset(b, nil)
	ts.ok(b, browser.NavigateName, `{"url":"`+benchPage(b, 500)+`"}`)
	for b.Loop() {
		ts.ok(b, browser.GetStateName, `{}`)
	}
}

// BenchmarkGetContent is one browser_get_content (DOM snapshot to
// markdown) on the same page.
func BenchmarkGetContent(b *testing.B) {
	needChromium(b)
	ts, _ := newToolset(b, nil)
	ts.ok(b, browser.NavigateName, `{"url":"`+benchPage(b, 500)+`"}`)
	for b.Loop() {
		ts.ok(b, browser.GetContentName, `{"extract_links":true}`)
	}
}

// BenchmarkStartNavigateClose is a browser's whole life: start Chromium,
// open a page, close.
func BenchmarkStartNavigateClose(b *testing.B) {
	needChromium(b)
	url := benchPage(b, 10)
	for b.Loop() {
		bw := browser.New(nil)
		ts := toolset{}
		for _, tl := range bw.Tools() {
			ts[tl.Name()] = tl
		}
		ts.ok(b, browser.NavigateName, `{"url":"`+url+`"}`)
		if err := bw.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
