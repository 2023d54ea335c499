package browser

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/gohands/gohands/internal/lazyregexp"
)

// state is browser_get_state: the page's URL, title, tabs, geometry and
// interactive elements, and a screenshot if asked.
func (b *Browser) state(ctx context.Context, screenshot bool) (result, error) {
	pctx, t, err := b.page(ctx)
	if err != nil {
		return result{}, err
	}
	pages, err := b.pages(pctx)
	if err != nil {
		return result{}, err
	}
	st := pageState{Tabs: []tabBrief{}}
	for _, p := range pages {
		st.Tabs = append(st.Tabs, tabBrief{URL: p.URL, Title: p.Title})
		if p.TargetID == b.current {
			st.URL, st.Title = p.URL, p.Title
		}
	}
	m, err := cdp.Call(pctx, t, page.GetLayoutMetrics, cdp.Empty{})
	if err != nil {
		return result{}, err
	}
	var top, height float64 = 0, float64(b.opts.WindowHeight)
	if v := m.CSSLayoutViewport; v != nil {
		st.Viewport = &size{int(v.ClientWidth), int(v.ClientHeight)}
		st.Scroll = &point{int(v.PageX), int(v.PageY)}
		top, height = float64(v.PageY), float64(v.ClientHeight)
	}
	if c := m.CSSContentSize; c != nil {
		st.Page = &size{int(c.Width), int(c.Height)}
	}
	root, err := snapshot(pctx, t)
	if err != nil {
		return result{}, err
	}
	st.InteractiveElements = interactiveElements(root, top, height)
	var res result
	if screenshot {
		shot, err := cdp.Call(pctx, t, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng})
		if err != nil {
			return result{}, err
		}
		res.screenshot = shot.Data
		st.ScreenshotDimensions = st.Viewport
	}
	res.text, err = indentJSON(st)
	return res, err
}

// maxContent is how many characters of markdown browser_get_content
// shows at once, as in the reference.
const maxContent = 30000

func (b *Browser) getContent(ctx context.Context, a *GetContentAction) (string, error) {
	if a.StartFromChar < 0 {
		return "", modelErrorf("start_from_char must be 0 or more, got %d", a.StartFromChar)
	}
	pctx, t, err := b.page(ctx)
	if err != nil {
		return "", err
	}
	root, err := snapshot(pctx, t)
	if err != nil {
		return "", err
	}
	pages, err := b.pages(pctx)
	if err != nil {
		return "", err
	}
	current := ""
	for _, p := range pages {
		if p.TargetID == b.current {
			current = p.URL
		}
	}
	md, stats, err := markdown(root, a.ExtractLinks)
	if err != nil {
		return "", err
	}
	return renderContent(current, md, stats, a.StartFromChar), nil
}

// contentStats are the sizes reported with the markdown.
type contentStats struct {
	htmlChars, markdownChars, filtered int
}

// renderContent cuts md from start, at most maxContent characters ending
// at a paragraph or sentence break where possible, and frames it with
// statistics and the URL as the reference does.
func renderContent(url, md string, st contentStats, start int) string {
	runes := []rune(md)
	final := len(runes)
	if start > 0 {
		if start >= len(runes) {
			return fmt.Sprintf("start_from_char (%d) exceeds content length (%d). Content has %d characters after filtering.", start, len(runes), final)
		}
		runes = runes[start:]
	}
	truncated, next := false, 0
	if len(runes) > maxContent {
		cut := maxContent
		window := string(runes[maxContent-500 : maxContent])
		if i := strings.LastIndex(window, "\n\n"); i >= 0 {
			cut = maxContent - 500 + utf8.RuneCountInString(window[:i])
		} else if w := string(runes[maxContent-200 : maxContent]); strings.LastIndex(w, ".") >= 0 {
			cut = maxContent - 200 + utf8.RuneCountInString(w[:strings.LastIndex(w, ".")]) + 1
		}
		runes = runes[:cut]
		truncated, next = true, start+cut
	}
	summary := fmt.Sprintf("Content processed: %s HTML chars → %s initial markdown → %s filtered markdown",
		thousands(st.htmlChars), thousands(st.markdownChars), thousands(final))
	if start > 0 {
		summary += fmt.Sprintf(" (started from char %s)", thousands(start))
	}
	if truncated {
		summary += fmt.Sprintf(" → %s final chars (truncated, use start_from_char=%d to continue)", thousands(len(runes)), next)
	} else if st.filtered > 0 {
		summary += fmt.Sprintf(" (filtered %s chars of noise)", thousands(st.filtered))
	}
	return fmt.Sprintf("<url>\n%s\n</url>\n<content>\n<content_stats>\n%s\n</content_stats>\n\n<webpage_content>\n%s\n</webpage_content>\n</content>",
		url, summary, string(runes))
}

// thousands formats n with comma separators, as Python's "{:,}".
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// mdConverter turns the cleaned page into markdown: ATX headings, "-"
// bullets, tables, no escaping (the text is for reading, not rendering).
// It is made on first use: building it allocates ~50 KB, which every
// start of a program with the browser tool paid.
var mdConverter = sync.OnceValue(func() *converter.Converter {
	return converter.NewConverter(
		converter.WithPlugins(
			base.NewBasePlugin(),
			commonmark.NewCommonmarkPlugin(commonmark.WithBulletListMarker("-")),
			table.NewTablePlugin(),
		),
		converter.WithEscapeMode(converter.EscapeModeDisabled),
	)
})

// markdown converts the page tree to markdown and tidies it.
func markdown(root *node, links bool) (string, contentStats, error) {
	doc := &html.Node{Type: html.DocumentNode}
	for _, c := range root.children {
		if h := toHTML(c, links); h != nil {
			doc.AppendChild(h)
		}
	}
	var hb strings.Builder
	html.Render(&hb, doc)
	out, err := mdConverter().ConvertNode(doc)
	if err != nil {
		return "", contentStats{}, fmt.Errorf("converting the page to markdown: %w", err)
	}
	md := string(out)
	st := contentStats{htmlChars: utf8.RuneCountInString(hb.String()), markdownChars: utf8.RuneCountInString(md)}
	clean := tidyMarkdown(md)
	st.filtered = st.markdownChars - utf8.RuneCountInString(clean)
	return clean, st, nil
}

var (
	jsonInCode  = lazyregexp.New("(?s)`\\{[\"\\w].*?\\}`")
	jsonTyped   = lazyregexp.New(`\{"\$type":[^}]{100,}\}`)
	jsonNested  = lazyregexp.New(`\{"[^"]{5,}":\{[^}]{100,}\}`)
	manyNewline = lazyregexp.New(`\n{4,}`)
)

// tidyMarkdown removes what the reference removes: JSON blobs that
// single-page apps embed, runs of blank lines, blank lines and long lines
// that look like JSON.
func tidyMarkdown(md string) string {
	md = jsonInCode.ReplaceAllString(md, "")
	md = jsonTyped.ReplaceAllString(md, "")
	md = jsonNested.ReplaceAllString(md, "")
	md = manyNewline.ReplaceAllString(md, "\n\n\n")
	var kept []string
	for line := range strings.SplitSeq(md, "\n") {
		s := strings.TrimSpace(line)
		if s == "" {
			continue
		}
		if (s[0] == '{' || s[0] == '[') && utf8.RuneCountInString(s) > 100 {
			continue
		}
		kept = append(kept, line)
	}
	return strings.TrimSpace(strings.Join(kept, "\n"))
}

// skipTags are elements left out of the markdown.
var skipTags = map[string]bool{"style": true, "script": true, "head": true, "meta": true, "link": true, "title": true, "noscript": true, "template": true}

// toHTML turns a snapshot node into an html.Node for the converter,
// leaving out what is not content: scripts, styles, comments, hidden JSON
// holders, inline data images and, unless links are wanted, link
// targets. Shadow roots and frame documents are inlined.
func toHTML(n *node, links bool) *html.Node {
	switch n.typ {
	case 3:
		return &html.Node{Type: html.TextNode, Data: n.value}
	case 9, 11: // a frame's document or a shadow root
		box := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
		for _, c := range n.children {
			if h := toHTML(c, links); h != nil {
				box.AppendChild(h)
			}
		}
		return box
	case 1:
	default:
		return nil
	}
	tag := n.name
	if skipTags[tag] {
		return nil
	}
	if tag == "code" {
		style, _ := n.attr("style")
		id, _ := n.attr("id")
		if strings.Contains(strings.ReplaceAll(style, " ", ""), "display:none") || strings.Contains(id, "bpr-guid") || strings.Contains(id, "data") || strings.Contains(id, "state") {
			return nil
		}
	}
	if src, _ := n.attr("src"); tag == "img" && strings.HasPrefix(src, "data:image/") {
		return nil
	}
	if tag == "iframe" || tag == "frame" {
		tag = "div"
	}
	h := &html.Node{Type: html.ElementNode, Data: tag, DataAtom: atom.Lookup([]byte(tag))}
	for _, a := range n.attrs {
		if a[0] == "href" && !links {
			continue
		}
		h.Attr = append(h.Attr, html.Attribute{Key: a[0], Val: a[1]})
	}
	for _, c := range n.children {
		if c.typ == 10 { // doctype
			continue
		}
		if k := toHTML(c, links); k != nil {
			h.AppendChild(k)
		}
	}
	return h
}

// fit cuts text longer than MaxText in the middle; with a save
// directory the full text is saved and the cut says where.
func (b *Browser) fit(text string) string {
	n := utf8.RuneCountInString(text)
	if n <= MaxText {
		return text
	}
	notice := "\n<response clipped: the middle of the text was cut to fit the output limit>\n"
	if b.opts.SaveDir != "" {
		sum := sha256.Sum256([]byte(text))
		path := filepath.Join(b.opts.SaveDir, "browser_output_"+hex.EncodeToString(sum[:4])+".txt")
		if err := writeFile(path, []byte(text)); err != nil {
			b.log.Warn("browser: saving long output failed", "err", err)
		} else {
			notice = fmt.Sprintf("\n<response clipped: the middle of the text was cut to fit the output limit. The full text is in %s.>\n", path)
		}
	}
	runes := []rune(text)
	avail := MaxText - utf8.RuneCountInString(notice)
	head := (avail + 1) / 2
	return string(runes[:head]) + notice + string(runes[len(runes)-(avail-head):])
}

// screenshotPath is where a screenshot is saved: named by the hash of its
// base64 text, as the reference names it.
func screenshotPath(dir, b64 string) string {
	sum := sha256.Sum256([]byte(b64))
	ext := strings.TrimPrefix(imageMIME(b64), "image/")
	if ext == "jpeg" {
		ext = "jpg"
	}
	return filepath.Join(dir, "browser_screenshot_"+hex.EncodeToString(sum[:])[:8]+"."+ext)
}

// saveScreenshot writes the image to dir unless it is there already.
func saveScreenshot(dir, b64 string, data []byte) (string, error) {
	path := screenshotPath(dir, b64)
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	return path, writeFile(path, data)
}

// writeFile writes data to path through a temporary file.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".browser_*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
	}
	return werr
}

// imageMIME guesses an image's type from the start of its base64 text,
// as the reference does; PNG when unknown.
func imageMIME(b64 string) string {
	for _, p := range []struct{ prefix, mime string }{
		{"/9j/", "image/jpeg"}, {"iVBORw0KGgo", "image/png"}, {"R0lGODlh", "image/gif"}, {"UklGR", "image/webp"},
	} {
		if strings.HasPrefix(b64, p.prefix) {
			return p.mime
		}
	}
	return "image/png"
}

func encodeBase64(data []byte) string { return base64.StdEncoding.EncodeToString(data) }

// indentJSON renders v as JSON indented by two spaces, without HTML
// escaping, as the model reads it.
func indentJSON(v any) (string, error) {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(sb.String(), "\n"), nil
}
