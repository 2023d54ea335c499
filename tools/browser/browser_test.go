package browser_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/freeport"
	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/browser"

	"golang.org/x/sys/unix"
)

// needChromium fails the test under CI, and skips it elsewhere, when no
// Chromium is installed.
func needChromium(t testing.TB) {
	t.Helper()
	if _, err := browser.FindChromium(""); err != nil {
		testenv.Missing(t, "%v", err)
	}
}

// site serves the test pages on loopback: a form and its result, links,
// a link that opens a second tab, a slow page, a page that never finishes
// loading, a long page and a 404.
func site(t testing.TB) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	page := func(w http.ResponseWriter, title, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title><style>body{font:16px sans-serif}</style><script>var x = 1;</script></head><body>%s</body></html>", title, body)
	}
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Home", `<h1>Test site</h1>
<p>Welcome to the <b>test</b> site.</p>
<ul><li><a href="/form">The form</a></li><li><a href="/second" target="_blank">Second tab</a></li><li><a href="/slow">Slow page</a></li></ul>
<div role="button" onclick="document.getElementById('out').textContent='div clicked'">Fake button</div>
<p id="out"></p>`)
	})
	mux.HandleFunc("/form", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Form", `<h1>Sign up</h1>
<form action="/result" method="get">
<label>Name <input name="name" placeholder="Your name"></label>
<textarea name="bio" placeholder="About you"></textarea>
<input type="hidden" name="secret" value="x">
<button type="submit">Send</button>
</form>`)
	})
	mux.HandleFunc("/result", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Result", fmt.Sprintf("<h1>Thanks</h1><p>Hello, %s!</p><p>Bio: %s</p><table><tr><th>Field</th><th>Value</th></tr><tr><td>name</td><td>%s</td></tr></table>",
			html.EscapeString(r.FormValue("name")), html.EscapeString(r.FormValue("bio")), html.EscapeString(r.FormValue("name"))))
	})
	mux.HandleFunc("/second", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Second", `<h1>The second tab</h1><script>localStorage.setItem("seen", "yes")</script>`)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(700 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		page(w, "Slow", `<h1>Slow but there</h1>`)
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html><head><title>Hanging</title></head><body><h1>Arrived so far</h1><a href="/">home</a>`)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // never finishes
	})
	mux.HandleFunc("/long", func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		for i := range 300 {
			fmt.Fprintf(&b, "<p>Paragraph %d of a long page.</p>", i)
		}
		b.WriteString(`<a href="/">bottom link</a>`)
		page(w, "Long", b.String())
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}

// toolset returns the browser tools by name.
type toolset map[string]tool.Tool

func newToolset(t testing.TB, opts *browser.Options) (toolset, *browser.Browser) {
	t.Helper()
	b := browser.New(opts)
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("closing the browser: %v", err)
		}
	})
	ts := toolset{}
	for _, tl := range b.Tools() {
		ts[tl.Name()] = tl
	}
	return ts, b
}

// call runs a tool as the agent does, from the model's JSON arguments.
func (ts toolset) call(t testing.TB, name, args string) *browser.Observation {
	t.Helper()
	c, err := tool.PrepareCall(toolList(ts), name, args, true)
	if err != nil {
		t.Fatalf("%s %s: %v", name, args, err)
	}
	o, err := c.Tool.Execute(context.Background(), c.Action)
	if err != nil {
		t.Fatalf("%s %s: %v", name, args, err)
	}
	return o.(*browser.Observation)
}

// ok runs a tool and fails the test if the observation is an error.
func (ts toolset) ok(t testing.TB, name, args string) string {
	t.Helper()
	o := ts.call(t, name, args)
	if o.IsError {
		t.Fatalf("%s %s: error observation: %s", name, args, text(o))
	}
	return text(o)
}

func toolList(ts toolset) []tool.Tool {
	var out []tool.Tool
	for _, tl := range ts {
		out = append(out, tl)
	}
	return out
}

func text(o *browser.Observation) string { return event.TextOf(o.Content) }

// state is browser_get_state's JSON.
type state struct {
	URL      string `json:"url"`
	Title    string `json:"title"`
	Tabs     []struct{ URL, Title string }
	Elements []struct {
		Index       int    `json:"index"`
		Tag         string `json:"tag"`
		Text        string `json:"text"`
		Placeholder string `json:"placeholder"`
		Href        string `json:"href"`
	} `json:"interactive_elements"`
	Viewport *struct{ Width, Height int } `json:"viewport"`
	Scroll   *struct{ X, Y int }          `json:"scroll"`
}

func (ts toolset) state(t testing.TB) state {
	t.Helper()
	var s state
	out := ts.ok(t, browser.GetStateName, `{}`)
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("get_state is not JSON: %v\n%s", err, out)
	}
	return s
}

// index returns the index of the element matching f.
func (s state) index(t testing.TB, what string, f func(tag, text, placeholder, href string) bool) int {
	t.Helper()
	for _, e := range s.Elements {
		if f(e.Tag, e.Text, e.Placeholder, e.Href) {
			return e.Index
		}
	}
	t.Fatalf("no element %s among %+v", what, s.Elements)
	return 0
}

func TestFormLinksAndContent(t *testing.T) {
	needChromium(t)
	srv := site(t)
	save := t.TempDir()
	ts, _ := newToolset(t, &browser.Options{SaveDir: save, LoadTimeout: 3 * time.Second})

	if got := ts.ok(t, browser.NavigateName, `{"url":"`+srv.URL+`/form"}`); got != "Navigated to: "+srv.URL+"/form" {
		t.Errorf("navigate: %q", got)
	}
	s := ts.state(t)
	if s.Title != "Form" || s.URL != srv.URL+"/form" || s.Viewport == nil || s.Viewport.Width == 0 {
		t.Errorf("state: title %q url %q viewport %+v", s.Title, s.URL, s.Viewport)
	}
	for _, e := range s.Elements {
		if e.Index <= 0 {
			t.Errorf("element without an index: %+v", e)
		}
	}
	name := s.index(t, "name input", func(tag, _, ph, _ string) bool { return tag == "input" && ph == "Your name" })
	bio := s.index(t, "bio textarea", func(tag, _, _, _ string) bool { return tag == "textarea" })
	send := s.index(t, "submit button", func(tag, text, _, _ string) bool { return tag == "button" && text == "Send" })
	if n := len(s.Elements); n != 4 { // label (wraps an input), input, textarea, button; not the hidden input
		t.Errorf("%d interactive elements, want 4: %+v", n, s.Elements)
	}

	if got := ts.ok(t, browser.TypeName, fmt.Sprintf(`{"index":%d,"text":"Ada"}`, name)); got != fmt.Sprintf("Typed 'Ada' into element %d", name) {
		t.Errorf("type: %q", got)
	}
	// Typing replaces the field's content.
	ts.ok(t, browser.TypeName, fmt.Sprintf(`{"index":%d,"text":"Ada Lovelace"}`, name))
	if got := ts.ok(t, browser.TypeName, fmt.Sprintf(`{"index":%d,"text":"ada@example.org"}`, bio)); got != fmt.Sprintf("Typed <email> into element %d", bio) {
		t.Errorf("type email: %q", got)
	}
	if got := ts.ok(t, browser.ClickName, fmt.Sprintf(`{"index":%d}`, send)); got != fmt.Sprintf("Clicked element %d", send) {
		t.Errorf("click: %q", got)
	}
	content := ts.ok(t, browser.GetContentName, `{}`)
	for _, want := range []string{"<url>\n" + srv.URL + "/result?name=Ada+Lovelace", "# Thanks", "Hello, Ada Lovelace!", "Bio: ada@example.org", "| name  | Ada Lovelace |", "<content_stats>\nContent processed: "} {
		if !strings.Contains(content, want) {
			t.Errorf("content lacks %q:\n%s", want, content)
		}
	}
	if strings.Contains(content, "var x") || strings.Contains(content, "font:") {
		t.Errorf("content has script or style:\n%s", content)
	}
	if got := ts.ok(t, browser.GetContentName, `{"start_from_char":100000}`); !strings.Contains(got, "exceeds content length") {
		t.Errorf("start_from_char past the end: %q", got)
	}

	if got := ts.ok(t, browser.GoBackName, `{}`); got != "Navigated back" {
		t.Errorf("go back: %q", got)
	}
	if s := ts.state(t); s.URL != srv.URL+"/form" {
		t.Errorf("after going back: %q", s.URL)
	}

	// Links: their text and href, with extract_links in the content.
	ts.ok(t, browser.NavigateName, `{"url":"`+srv.URL+`/"}`)
	s = ts.state(t)
	s.index(t, "the form link", func(tag, text, _, href string) bool { return tag == "a" && text == "The form" && href == "/form" })
	fake := s.index(t, "the role=button div", func(tag, text, _, _ string) bool { return tag == "div" && text == "Fake button" })
	ts.ok(t, browser.ClickName, fmt.Sprintf(`{"index":%d}`, fake))
	if got := ts.ok(t, browser.GetContentName, `{"extract_links":true}`); !strings.Contains(got, "div clicked") || !strings.Contains(got, "[The form](/form)") {
		t.Errorf("content with links:\n%s", got)
	}
	if got := ts.ok(t, browser.GetContentName, `{}`); strings.Contains(got, "(/form)") || !strings.Contains(got, "The form") {
		t.Errorf("content without links:\n%s", got)
	}

	// A stale or unknown index is the model's error.
	if o := ts.call(t, browser.ClickName, `{"index":999999}`); !o.IsError || !strings.Contains(text(o), "Element with index 999999 not found") {
		t.Errorf("unknown index: error %v %q", o.IsError, text(o))
	}
	// A heading does not take text.
	ts.ok(t, browser.NavigateName, `{"url":"`+srv.URL+`/form"}`)
	if o := ts.call(t, browser.TypeName, fmt.Sprintf(`{"index":%d,"text":"x"}`, 1)); !o.IsError {
		t.Errorf("typing into the document: %q", text(o))
	}
}

func TestScreenshot(t *testing.T) {
	needChromium(t)
	srv := site(t)
	save := t.TempDir()
	ts, _ := newToolset(t, &browser.Options{SaveDir: save, WindowWidth: 800, WindowHeight: 600})
	ts.ok(t, browser.NavigateName, `{"url":"`+srv.URL+`/"}`)
	o := ts.call(t, browser.GetStateName, `{"include_screenshot":true}`)
	if o.IsError || o.ScreenshotData == "" {
		t.Fatalf("no screenshot: %q", text(o))
	}
	data, err := base64.StdEncoding.DecodeString(o.ScreenshotData)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	var st struct {
		Viewport             struct{ Width, Height int }
		ScreenshotDimensions struct{ Width, Height int } `json:"screenshot_dimensions"`
	}
	json.Unmarshal([]byte(text(o)), &st)
	if b := img.Bounds(); b.Dx() != 800 || b.Dy() < 300 || b.Dy() != st.Viewport.Height || st.Viewport != st.ScreenshotDimensions {
		t.Errorf("screenshot is %v, state says viewport %+v, screenshot %+v", b, st.Viewport, st.ScreenshotDimensions)
	}
	if !strings.Contains(text(o), `"screenshot_dimensions": {`) || strings.Contains(text(o), o.ScreenshotData[:40]) {
		t.Errorf("state text with a screenshot:\n%s", text(o))
	}
	// The model sees the text, where the screenshot was saved, and the image.
	llm := event.ObservationContent(o)
	if len(llm) != 3 || llm[2].Type != event.ContentImage || !strings.HasPrefix(llm[2].ImageURLs[0], "data:image/png;base64,iVBORw0KGgo") {
		t.Fatalf("LLM content: %+v", llm)
	}
	path := strings.TrimPrefix(llm[1].Text, "Screenshot saved to: ")
	if saved, err := os.ReadFile(path); err != nil || !bytes.Equal(saved, data) || filepath.Dir(path) != save {
		t.Errorf("saved screenshot %q: %v", path, err)
	}
	// Without the flag, no image.
	if o := ts.call(t, browser.GetStateName, `{}`); o.ScreenshotData != "" || len(event.ObservationContent(o)) != 1 {
		t.Errorf("screenshot without asking")
	}
}

func TestTabs(t *testing.T) {
	needChromium(t)
	srv := site(t)
	ts, _ := newToolset(t, &browser.Options{LoadTimeout: 3 * time.Second})
	ts.ok(t, browser.NavigateName, `{"url":"`+srv.URL+`/"}`)

	// A target=_blank link opens a second tab, which becomes current.
	second := ts.state(t).index(t, "second tab link", func(tag, text, _, _ string) bool { return tag == "a" && text == "Second tab" })
	if got := ts.ok(t, browser.ClickName, fmt.Sprintf(`{"index":%d}`, second)); !strings.Contains(got, "opened a new tab") {
		t.Errorf("click on a target=_blank link: %q", got)
	}
	waitTitle(t, ts, "Second")

	var tabs []struct {
		TabID string `json:"tab_id"`
		URL   string `json:"url"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(ts.ok(t, browser.ListTabsName, `{}`)), &tabs); err != nil {
		t.Fatal(err)
	}
	if len(tabs) != 2 || tabs[0].URL != srv.URL+"/" || tabs[1].URL != srv.URL+"/second" || len(tabs[0].TabID) != 4 {
		t.Fatalf("tabs: %+v", tabs)
	}
	// new_tab opens a third.
	if got := ts.ok(t, browser.NavigateName, `{"url":"`+srv.URL+`/form","new_tab":true}`); got != "Opened new tab with URL: "+srv.URL+"/form" {
		t.Errorf("navigate new_tab: %q", got)
	}
	if s := ts.state(t); s.Title != "Form" || len(s.Tabs) != 3 {
		t.Errorf("after new_tab: %q, %d tabs", s.Title, len(s.Tabs))
	}
	if got := ts.ok(t, browser.SwitchTabName, `{"tab_id":"`+tabs[0].TabID+`"}`); got != "Switched to tab "+tabs[0].TabID+": "+srv.URL+"/" {
		t.Errorf("switch: %q", got)
	}
	if s := ts.state(t); s.Title != "Home" {
		t.Errorf("after switching: %q", s.Title)
	}
	if got := ts.ok(t, browser.CloseTabName, `{"tab_id":"`+tabs[0].TabID+`"}`); !strings.HasPrefix(got, "Closed tab # "+tabs[0].TabID+", now on "+srv.URL) {
		t.Errorf("close: %q", got)
	}
	if s := ts.state(t); len(s.Tabs) != 2 {
		t.Errorf("after closing: %+v", s.Tabs)
	}
	if o := ts.call(t, browser.SwitchTabName, `{"tab_id":"`+tabs[0].TabID+`"}`); !o.IsError || !strings.Contains(text(o), "No tab with id") {
		t.Errorf("switch to a closed tab: %v %q", o.IsError, text(o))
	}
	// Closing every tab leaves a blank one.
	for range 2 {
		var left []struct {
			TabID string `json:"tab_id"`
		}
		json.Unmarshal([]byte(ts.ok(t, browser.ListTabsName, `{}`)), &left)
		ts.ok(t, browser.CloseTabName, `{"tab_id":"`+left[0].TabID+`"}`)
	}
	if s := ts.state(t); len(s.Tabs) != 1 || s.URL != "about:blank" {
		t.Errorf("after closing all: %+v %q", s.Tabs, s.URL)
	}
	// new_tab on a link opens its target in a new tab.
	ts.ok(t, browser.NavigateName, `{"url":"`+srv.URL+`/"}`)
	form := ts.state(t).index(t, "the form link", func(tag, text, _, _ string) bool { return tag == "a" && text == "The form" })
	if got := ts.ok(t, browser.ClickName, fmt.Sprintf(`{"index":%d,"new_tab":true}`, form)); got != fmt.Sprintf("Clicked element %d and opened %s/form in a new tab", form, srv.URL) {
		t.Errorf("click with new_tab: %q", got)
	}
	if s := ts.state(t); s.Title != "Form" || len(s.Tabs) != 2 {
		t.Errorf("after a click with new_tab: %q, %d tabs", s.Title, len(s.Tabs))
	}
}

// waitTitle waits until the current page has the title; a page opened by
// a click may still be loading.
func waitTitle(t testing.TB, ts toolset, title string) {
	t.Helper()
	var s state
	for range 50 {
		if s = ts.state(t); s.Title == title {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("current page title %q, want %q", s.Title, title)
}

func TestSlowHangingMissingAndUnreachable(t *testing.T) {
	needChromium(t)
	srv := site(t)
	ts, _ := newToolset(t, &browser.Options{LoadTimeout: 2 * time.Second})

	if got := ts.ok(t, browser.NavigateName, `{"url":"`+srv.URL+`/slow"}`); got != "Navigated to: "+srv.URL+"/slow" {
		t.Errorf("slow page: %q", got)
	}
	if !strings.Contains(ts.ok(t, browser.GetContentName, `{}`), "Slow but there") {
		t.Error("slow page content missing")
	}
	got := ts.ok(t, browser.NavigateName, `{"url":"`+srv.URL+`/hang"}`)
	if !strings.Contains(got, "still loading") {
		t.Errorf("hanging page: %q", got)
	}
	// What arrived is readable and clickable.
	s := ts.state(t)
	s.index(t, "link of the hanging page", func(tag, text, _, _ string) bool { return tag == "a" && text == "home" })
	if !strings.Contains(ts.ok(t, browser.GetContentName, `{}`), "Arrived so far") {
		t.Error("hanging page content missing")
	}
	if got := ts.ok(t, browser.NavigateName, `{"url":"`+srv.URL+`/missing"}`); !strings.Contains(got, "HTTP status 404") {
		t.Errorf("404: %q", got)
	}
	if o := ts.call(t, browser.GoBackName, `{}`); o.IsError {
		t.Errorf("back from the 404: %q", text(o))
	}

	addr, err := freeport.Addr()
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + addr + "/"
	if o := ts.call(t, browser.NavigateName, `{"url":"`+closed+`"}`); !o.IsError || !strings.Contains(text(o), "ERR_CONNECTION_REFUSED") {
		t.Errorf("unreachable: %v %q", o.IsError, text(o))
	}
}

func TestScroll(t *testing.T) {
	needChromium(t)
	srv := site(t)
	ts, _ := newToolset(t, nil)
	ts.ok(t, browser.NavigateName, `{"url":"`+srv.URL+`/long"}`)
	if got := ts.ok(t, browser.ScrollName, `{}`); got != "Scrolled down" {
		t.Errorf("scroll: %q", got)
	}
	y1 := ts.state(t).Scroll.Y
	ts.ok(t, browser.ScrollName, `{"direction":"down"}`)
	y2 := ts.state(t).Scroll.Y
	ts.ok(t, browser.ScrollName, `{"direction":"up"}`)
	y3 := ts.state(t).Scroll.Y
	if !(y1 > 0 && y2 > y1 && y3 == y1) {
		t.Errorf("scroll positions %d, %d, %d", y1, y2, y3)
	}
	if _, err := tool.PrepareCall(toolList(ts), browser.ScrollName, `{"direction":"left"}`, true); err == nil {
		t.Error("direction left accepted")
	}
}

func TestStorage(t *testing.T) {
	needChromium(t)
	srv := site(t)
	ts, _ := newToolset(t, nil)
	ts.ok(t, browser.NavigateName, `{"url":"`+srv.URL+`/second"}`)
	host := strings.TrimPrefix(srv.URL, "http://")
	hostname, _, _ := net.SplitHostPort(host)
	set := fmt.Sprintf(`{"storage_state":{"cookies":[{"name":"session","value":"abc123","domain":%q,"path":"/"}],
		"origins":[{"origin":%q,"localStorage":[{"name":"theme","value":"dark"}],"sessionStorage":[{"key":"step","value":"2"}]}]}}`, hostname, srv.URL)
	if got := ts.ok(t, browser.SetStorageName, set); got != "Storage set successfully" {
		t.Errorf("set storage: %q", got)
	}
	var got struct {
		Cookies []struct{ Name, Value, Domain string }
		Origins []struct {
			Origin         string
			LocalStorage   []struct{ Name, Value string } `json:"localStorage"`
			SessionStorage []struct{ Name, Value string } `json:"sessionStorage"`
		}
	}
	out := ts.ok(t, browser.GetStorageName, `{}`)
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Cookies) != 1 || got.Cookies[0].Name != "session" || got.Cookies[0].Value != "abc123" {
		t.Errorf("cookies: %+v", got.Cookies)
	}
	if len(got.Origins) != 1 || got.Origins[0].Origin != srv.URL {
		t.Fatalf("origins:\n%s", out)
	}
	local := map[string]string{}
	for _, it := range got.Origins[0].LocalStorage {
		local[it.Name] = it.Value
	}
	if local["theme"] != "dark" || local["seen"] != "yes" || len(got.Origins[0].SessionStorage) != 1 {
		t.Errorf("web storage:\n%s", out)
	}
	// The page sees them.
	ts.ok(t, browser.NavigateName, `{"url":"`+srv.URL+`/"}`)
	if o := ts.call(t, browser.SetStorageName, `{"storage_state":{"cookies":"many"}}`); !o.IsError {
		t.Errorf("bad storage_state accepted: %q", text(o))
	}
}

// chromiumProcesses returns the pids of the processes whose command line
// mentions the profile directory of a Chromium started by this process.
func chromiumProcesses(t testing.TB, profile string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(cmd, []byte("--user-data-dir="+profile)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// browserProfile finds the profile directory of the Chromium that this
// process started (a direct child).
func browserProfile(t testing.TB) string {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	self := strconv.Itoa(os.Getpid())
	re := regexp.MustCompile(`--user-data-dir=([^\x00]+)`)
	for _, e := range entries {
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		rest := string(stat[bytes.LastIndexByte(stat, ')')+2:])
		if f := strings.Fields(rest); len(f) < 2 || f[1] != self {
			continue
		}
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if m := re.FindSubmatch(cmd); m != nil {
			return string(m[1])
		}
	}
	t.Fatal("no Chromium child process found")
	return ""
}

func TestCloseLeavesNoProcess(t *testing.T) {
	needChromium(t)
	srv := site(t)
	ts, b := newToolset(t, nil)
	ts.ok(t, browser.NavigateName, `{"url":"`+srv.URL+`/"}`)
	ts.ok(t, browser.NavigateName, `{"url":"`+srv.URL+`/second","new_tab":true}`)
	profile := browserProfile(t)
	if n := len(chromiumProcesses(t, profile)); n < 2 {
		t.Fatalf("%d Chromium processes while running, want several", n)
	}
	// Closing any tool closes the browser; closing again is harmless.
	for _, tl := range ts {
		if err := tl.(tool.Closer).Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if pids := chromiumProcesses(t, profile); len(pids) > 0 {
		t.Errorf("processes left after Close: %v", pids)
	}
	if _, err := os.Stat(profile); !os.IsNotExist(err) {
		t.Errorf("profile directory %s left after Close: %v", profile, err)
	}
	if o := ts.call(t, browser.ListTabsName, `{}`); !o.IsError || !strings.Contains(text(o), "closed") {
		t.Errorf("action after Close: %v %q", o.IsError, text(o))
	}
}

func TestActionTimeoutAndCancel(t *testing.T) {
	needChromium(t)
	srv := site(t)
	// The load wait is longer than the action timeout: the action times out.
	ts, _ := newToolset(t, &browser.Options{ActionTimeout: 1500 * time.Millisecond, LoadTimeout: time.Minute})
	o := ts.call(t, browser.NavigateName, `{"url":"`+srv.URL+`/hang"}`)
	if !o.IsError || !strings.Contains(text(o), "timed out after 1 seconds") {
		t.Errorf("timeout: %v %q", o.IsError, text(o))
	}
	// The browser still works.
	ts.ok(t, browser.NavigateName, `{"url":"`+srv.URL+`/"}`)

	// Cancelling the call's context stops the action.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	c, err := tool.PrepareCall(toolList(ts), browser.NavigateName, `{"url":"`+srv.URL+`/hang"}`, true)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	obs, err := c.Tool.Execute(ctx, c.Action)
	if err != nil || !obs.Obs().IsError {
		t.Errorf("cancelled navigate: %v %+v", err, obs)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("cancel took %v", d)
	}
}

func TestRestartAfterCrash(t *testing.T) {
	needChromium(t)
	srv := site(t)
	ts, _ := newToolset(t, nil)
	ts.ok(t, browser.NavigateName, `{"url":"`+srv.URL+`/"}`)
	profile := browserProfile(t)
	pids := chromiumProcesses(t, profile)
	for _, pid := range pids {
		unix.Kill(pid, unix.SIGKILL)
	}
	// The action that finds the browser dead may fail; the next ones
	// run in a new browser.
	deadline := time.Now().Add(30 * time.Second)
	for {
		o := ts.call(t, browser.NavigateName, `{"url":"`+srv.URL+`/form"}`)
		if !o.IsError {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no recovery after the crash: %s", text(o))
		}
	}
	if s := ts.state(t); s.Title != "Form" {
		t.Errorf("after restart: %q", s.Title)
	}
}
