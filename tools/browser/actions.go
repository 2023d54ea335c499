package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domstorage"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/chromedp/cdproto/dom"
)

// clickSettle is how long a click waits for the navigation or new tab it
// may cause to start.
const clickSettle = 400 * time.Millisecond

func (b *Browser) navigate(ctx context.Context, a *NavigateAction) (string, error) {
	u := strings.TrimSpace(a.URL)
	if u == "" {
		return "", modelErrorf("url is empty")
	}
	if a.NewTab {
		if err := b.newTab(ctx, "about:blank"); err != nil {
			return "", err
		}
	}
	note, err := b.load(ctx, u)
	if err != nil {
		return "", err
	}
	if a.NewTab {
		return fmt.Sprintf("Opened new tab with URL: %s%s", u, note), nil
	}
	return fmt.Sprintf("Navigated to: %s%s", u, note), nil
}

// load navigates the current tab to u and waits for the page.
func (b *Browser) load(ctx context.Context, u string) (string, error) {
	pctx, t, err := b.page(ctx)
	if err != nil {
		return "", err
	}
	w, err := watchLoad(pctx, t)
	if err != nil {
		return "", err
	}
	defer w.stop()
	res, err := cdp.Call(pctx, t, page.Navigate, page.NavigateParams{URL: u})
	if err != nil {
		return "", modelErrorf("Could not open %s: %v", u, err)
	}
	if res.ErrorText != "" {
		return "", modelErrorf("Could not open %s: %s", u, res.ErrorText)
	}
	if res.LoaderID == "" { // same document: only the fragment changed
		return "", nil
	}
	loaded, err := w.waitLoad(pctx, b.opts.LoadTimeout)
	if err != nil {
		return "", err
	}
	return b.loadNote(w, loaded), nil
}

func (b *Browser) goBack(ctx context.Context, _ *GoBackAction) (string, error) {
	pctx, t, err := b.page(ctx)
	if err != nil {
		return "", err
	}
	h, err := cdp.Call(pctx, t, page.GetNavigationHistory, cdp.Empty{})
	if err != nil {
		return "", err
	}
	if h.CurrentIndex <= 0 || int(h.CurrentIndex) >= len(h.Entries)+1 {
		return "", modelErrorf("There is no previous page in this tab.")
	}
	w, err := watchLoad(pctx, t)
	if err != nil {
		return "", err
	}
	defer w.stop()
	if _, err := cdp.Call(pctx, t, page.NavigateToHistoryEntry, page.NavigateToHistoryEntryParams{EntryID: h.Entries[h.CurrentIndex-1].ID}); err != nil {
		return "", err
	}
	loaded, err := w.waitLoad(pctx, b.opts.LoadTimeout)
	if err != nil {
		return "", err
	}
	return "Navigated back" + b.loadNote(w, loaded), nil
}

// element resolves the model's index (a backend node id) in the current
// tab.
func (b *Browser) element(ctx context.Context, t *chromedp.Target, index int) (*runtime.RemoteObject, error) {
	if index <= 0 {
		return nil, modelErrorf("Element with index %d not found; use an index from the latest browser_get_state.", index)
	}
	res, err := cdp.Call(ctx, t, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: cdp.BackendNodeID(index)})
	if err != nil || res.Object == nil || res.Object.ObjectID == "" {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, modelErrorf("Element with index %d not found; the page may have changed: use an index from a fresh browser_get_state.", index)
	}
	return res.Object, nil
}

// callOn calls the JavaScript function fn with this = obj and returns its
// JSON value.
func callOn(ctx context.Context, t *chromedp.Target, obj *runtime.RemoteObject, fn string) (json.RawMessage, error) {
	res, err := cdp.Call(ctx, t, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: fn,
		ObjectID:            obj.ObjectID,
		ReturnByValue:       new(true),
		AwaitPromise:        new(true),
	})
	if err != nil {
		return nil, err
	}
	if res.ExceptionDetails != nil {
		return nil, fmt.Errorf("script error: %s", res.ExceptionDetails.Text)
	}
	if res.Result == nil {
		return nil, nil
	}
	return json.RawMessage(res.Result.Value), nil
}

func (b *Browser) click(ctx context.Context, a *ClickAction) (string, error) {
	pctx, t, err := b.page(ctx)
	if err != nil {
		return "", err
	}
	obj, err := b.element(pctx, t, a.Index)
	if err != nil {
		return "", err
	}
	if a.NewTab {
		raw, err := callOn(pctx, t, obj, `function() { return this.href ? String(this.href) : ""; }`)
		if err != nil {
			return "", err
		}
		var href string
		json.Unmarshal(raw, &href)
		if href != "" {
			if err := b.newTab(pctx, "about:blank"); err != nil {
				return "", err
			}
			note, err := b.load(ctx, href)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("Clicked element %d and opened %s in a new tab%s", a.Index, href, note), nil
		}
	}

	before, err := b.pages(pctx)
	if err != nil {
		return "", err
	}
	w, err := watchLoad(pctx, t)
	if err != nil {
		return "", err
	}
	defer w.stop()
	if err := clickNode(pctx, t, obj, a.Index); err != nil {
		return "", err
	}
	msg := fmt.Sprintf("Clicked element %d", a.Index)
	if a.NewTab {
		msg += " (it is not a link, so no new tab was opened)"
	}
	if w.waitStart(pctx, clickSettle) {
		loaded, err := w.waitLoad(pctx, b.opts.LoadTimeout)
		if err != nil {
			return "", err
		}
		msg += b.loadNote(w, loaded)
	}
	after, err := b.pages(pctx)
	if err != nil {
		return "", err
	}
	if len(after) > len(before) {
		opened := after[len(after)-1]
		b.current = opened.TargetID
		msg += fmt.Sprintf("; it opened a new tab %s, now the current tab: %s", tabID(opened.TargetID), opened.URL)
	}
	return msg, nil
}

// clickNode clicks the element like a user: scrolled into view, a mouse
// press and release at its centre. An element with no box on screen gets
// a JavaScript click.
func clickNode(ctx context.Context, t *chromedp.Target, obj *runtime.RemoteObject, index int) error {
	cdp.Call(ctx, t, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{ObjectID: obj.ObjectID})
	q, err := cdp.Call(ctx, t, dom.GetContentQuads, dom.GetContentQuadsParams{ObjectID: obj.ObjectID})
	var x, y float64
	found := false
	if err == nil {
		for _, quad := range q.Quads {
			if len(quad) != 8 {
				continue
			}
			if area := quadArea(quad); area >= 1 {
				x = (quad[0] + quad[2] + quad[4] + quad[6]) / 4
				y = (quad[1] + quad[3] + quad[5] + quad[7]) / 4
				found = true
				break
			}
		}
	}
	if !found {
		_, err := callOn(ctx, t, obj, `function() { this.click(); }`)
		if err != nil {
			return modelErrorf("Element %d cannot be clicked: %v", index, err)
		}
		return nil
	}
	for _, ev := range []input.DispatchMouseEventParams{
		{Type: input.DispatchMouseEventTypeMouseMoved, X: x, Y: y},
		{Type: input.DispatchMouseEventTypeMousePressed, X: x, Y: y, Button: input.MouseButtonLeft, Buttons: 1, ClickCount: 1},
		{Type: input.DispatchMouseEventTypeMouseReleased, X: x, Y: y, Button: input.MouseButtonLeft, ClickCount: 1},
	} {
		if _, err := cdp.Call(ctx, t, input.DispatchMouseEvent, ev); err != nil {
			return err
		}
	}
	return nil
}

func quadArea(q dom.Quad) float64 {
	var a float64
	for i := range 4 {
		j := (i + 1) % 4
		a += q[2*i]*q[2*j+1] - q[2*j]*q[2*i+1]
	}
	return math.Abs(a) / 2
}

// selectAll selects the editable content of an element, so that typing
// replaces it; it reports whether the element takes text.
const selectAll = `function() {
	const tag = this.tagName;
	if (tag === "INPUT" || tag === "TEXTAREA") {
		this.focus();
		try { this.select(); } catch (e) {}
		return true;
	}
	if (this.isContentEditable) {
		this.focus();
		const r = document.createRange();
		r.selectNodeContents(this);
		const s = window.getSelection();
		s.removeAllRanges();
		s.addRange(r);
		return true;
	}
	return false;
}`

func (b *Browser) typeText(ctx context.Context, a *TypeAction) (string, error) {
	pctx, t, err := b.page(ctx)
	if err != nil {
		return "", err
	}
	obj, err := b.element(pctx, t, a.Index)
	if err != nil {
		return "", err
	}
	cdp.Call(pctx, t, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{ObjectID: obj.ObjectID})
	raw, err := callOn(pctx, t, obj, selectAll)
	if err != nil {
		return "", err
	}
	if string(raw) != "true" {
		return "", modelErrorf("Element %d does not take text input (it is not an input, a text area or an editable element).", a.Index)
	}
	if a.Text == "" {
		if _, err := callOn(pctx, t, obj, `function() { document.execCommand("delete"); }`); err != nil {
			return "", err
		}
	} else if _, err := cdp.Call(pctx, t, input.InsertText, input.InsertTextParams{Text: a.Text}); err != nil {
		return "", err
	}
	switch sensitiveKind(a.Text) {
	case "":
		return fmt.Sprintf("Typed '%s' into element %d", a.Text, a.Index), nil
	case "email":
		return fmt.Sprintf("Typed <email> into element %d", a.Index), nil
	default:
		return fmt.Sprintf("Typed <credential> into element %d", a.Index), nil
	}
}

// sensitiveKind is the reference's guess at whether typed text is an
// email address or a credential, which the message then leaves out.
func sensitiveKind(s string) string {
	if len([]rune(s)) < 6 {
		return ""
	}
	if at := strings.LastIndex(s, "@"); at >= 0 && strings.Contains(s[at+1:], ".") {
		return "email"
	}
	if len([]rune(s)) >= 16 && strings.ContainsFunc(s, unicode.IsDigit) && strings.ContainsFunc(s, unicode.IsLetter) && strings.ContainsAny(s, ".-_") {
		return "credential"
	}
	return ""
}

// scrollScript scrolls the page, or the largest scrollable element under
// the middle of the viewport when the page itself does not scroll, by
// most of a screen.
const scrollScript = `(dir) => {
	const canScroll = (el) => el && el.scrollHeight > el.clientHeight + 1 &&
		(el === document.scrollingElement || /(auto|scroll|overlay)/.test(getComputedStyle(el).overflowY));
	let el = document.scrollingElement || document.documentElement;
	if (!canScroll(el)) {
		for (let e = document.elementFromPoint(innerWidth / 2, innerHeight / 2); e; e = e.parentElement) {
			if (canScroll(e)) { el = e; break; }
		}
	}
	const step = Math.round((el === document.scrollingElement ? innerHeight : el.clientHeight) * 0.8) * (dir === "up" ? -1 : 1);
	el.scrollBy(0, step);
}`

func (b *Browser) scroll(ctx context.Context, a *ScrollAction) (string, error) {
	dir := a.Direction
	if dir == "" {
		dir = "down"
	}
	pctx, t, err := b.page(ctx)
	if err != nil {
		return "", err
	}
	res, err := cdp.Call(pctx, t, runtime.Evaluate, runtime.EvaluateParams{Expression: "(" + scrollScript + ")(" + jsString(dir) + ")", ReturnByValue: new(true)})
	if err != nil {
		return "", err
	}
	if res.ExceptionDetails != nil {
		return "", fmt.Errorf("script error: %s", res.ExceptionDetails.Text)
	}
	return "Scrolled " + dir, nil
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// tabInfo is a tab as browser_list_tabs shows it.
type tabInfo struct {
	TabID string `json:"tab_id"`
	URL   string `json:"url"`
	Title string `json:"title"`
}

func (b *Browser) listTabs(ctx context.Context, _ *ListTabsAction) (string, error) {
	pages, err := b.pages(ctx)
	if err != nil {
		return "", err
	}
	tabs := make([]tabInfo, 0, len(pages))
	for _, p := range pages {
		tabs = append(tabs, tabInfo{TabID: tabID(p.TargetID), URL: p.URL, Title: p.Title})
	}
	return indentJSON(tabs)
}

func (b *Browser) switchTab(ctx context.Context, a *SwitchTabAction) (string, error) {
	p, err := b.findTab(ctx, a.TabID)
	if err != nil {
		return "", err
	}
	if _, err := chromedp.CallBrowser(b.withRoot(ctx), target.ActivateTarget, target.ActivateTargetParams{TargetID: p.TargetID}); err != nil {
		return "", err
	}
	b.current = p.TargetID
	return fmt.Sprintf("Switched to tab %s: %s", tabID(p.TargetID), p.URL), nil
}

func (b *Browser) closeTab(ctx context.Context, a *CloseTabAction) (string, error) {
	p, err := b.findTab(ctx, a.TabID)
	if err != nil {
		return "", err
	}
	if len(b.order) == 1 {
		// Keep a tab open: the browser has nothing to show otherwise.
		if err := b.newTab(ctx, "about:blank"); err != nil {
			return "", err
		}
	}
	if _, err := chromedp.CallBrowser(b.withRoot(ctx), target.CloseTarget, target.CloseTargetParams{TargetID: p.TargetID}); err != nil {
		return "", err
	}
	if err := b.waitGone(ctx, p.TargetID); err != nil {
		return "", err
	}
	if t := b.tabs[p.TargetID]; t != nil {
		if t.cancel != nil {
			t.cancel()
		}
		delete(b.tabs, p.TargetID)
	}
	for i, id := range b.order {
		if id == p.TargetID {
			b.order = append(b.order[:i], b.order[i+1:]...)
			break
		}
	}
	if b.current == p.TargetID {
		b.current = b.order[len(b.order)-1]
	}
	pages, err := b.pages(ctx)
	if err != nil {
		return "", err
	}
	now := ""
	for _, q := range pages {
		if q.TargetID == b.current {
			now = q.URL
		}
	}
	return fmt.Sprintf("Closed tab # %s, now on %s", tabID(p.TargetID), now), nil
}

// waitGone waits until Chromium no longer lists the target: CloseTarget
// answers before the target is gone, and a listing in between would
// take the closing tab for a new one.
func (b *Browser) waitGone(ctx context.Context, id target.ID) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		res, err := chromedp.CallBrowser(b.withRoot(ctx), target.GetTargets, target.GetTargetsParams{})
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(res.TargetInfos, func(ti *target.Info) bool { return ti.TargetID == id }) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("browser: tab %s did not close: %w", tabID(id), ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// storageItem is one localStorage or sessionStorage entry.
type storageItem struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// originStorage is the web storage of one origin.
type originStorage struct {
	Origin         string        `json:"origin"`
	LocalStorage   []storageItem `json:"localStorage,omitempty"`
	SessionStorage []storageItem `json:"sessionStorage,omitempty"`
}

func (b *Browser) getStorage(ctx context.Context, _ *GetStorageAction) (string, error) {
	pctx, t, err := b.page(ctx)
	if err != nil {
		return "", err
	}
	cookies, err := cdp.Call(pctx, t, storage.GetCookies, storage.GetCookiesParams{})
	if err != nil {
		return "", err
	}
	tree, err := cdp.Call(pctx, t, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return "", err
	}
	var origins []string
	var walk func(*page.FrameTree)
	walk = func(ft *page.FrameTree) {
		if ft == nil || ft.Frame == nil {
			return
		}
		if o := ft.Frame.SecurityOrigin; o != "" && o != "null" && !slices.Contains(origins, o) {
			origins = append(origins, o)
		}
		for _, c := range ft.ChildFrames {
			walk(c)
		}
	}
	walk(tree.FrameTree)
	if _, err := cdp.Call(pctx, t, domstorage.Enable, cdp.Empty{}); err != nil {
		return "", err
	}
	defer cdp.Call(pctx, t, domstorage.Disable, cdp.Empty{})
	state := struct {
		Cookies []*network.Cookie `json:"cookies"`
		Origins []originStorage   `json:"origins"`
	}{Cookies: cookies.Cookies, Origins: []originStorage{}}
	if state.Cookies == nil {
		state.Cookies = []*network.Cookie{}
	}
	for _, o := range origins {
		os := originStorage{Origin: o}
		for _, local := range []bool{true, false} {
			res, err := cdp.Call(pctx, t, domstorage.GetDOMStorageItems, domstorage.GetDOMStorageItemsParams{StorageID: &domstorage.StorageID{SecurityOrigin: o, IsLocalStorage: local}})
			if err != nil {
				continue
			}
			var items []storageItem
			for _, e := range res.Entries {
				if len(e) == 2 {
					items = append(items, storageItem{Name: e[0], Value: e[1]})
				}
			}
			if local {
				os.LocalStorage = items
			} else {
				os.SessionStorage = items
			}
		}
		if len(os.LocalStorage)+len(os.SessionStorage) > 0 {
			state.Origins = append(state.Origins, os)
		}
	}
	return indentJSON(state)
}

// setItem is an entry of storage_state's web storage; the reference
// accepts "key" or "name".
type setItem struct {
	Key   string `json:"key"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

func (b *Browser) setStorage(ctx context.Context, a *SetStorageAction) (string, error) {
	var state struct {
		Cookies []*network.CookieParam `json:"cookies"`
		Origins []struct {
			Origin         string    `json:"origin"`
			LocalStorage   []setItem `json:"localStorage"`
			SessionStorage []setItem `json:"sessionStorage"`
		} `json:"origins"`
	}
	if err := json.Unmarshal(a.StorageState, &state); err != nil {
		return "", modelErrorf("storage_state does not have the shape of browser_get_storage's output: %v", err)
	}
	pctx, t, err := b.page(ctx)
	if err != nil {
		return "", err
	}
	if len(state.Cookies) > 0 {
		for i, c := range state.Cookies {
			if c == nil || c.Name == "" || (c.Domain == "" && c.URL == "") {
				return "", modelErrorf("storage_state.cookies[%d]: a cookie needs a name and a domain or url", i)
			}
		}
		if _, err := cdp.Call(pctx, t, storage.SetCookies, storage.SetCookiesParams{Cookies: state.Cookies}); err != nil {
			return "", modelErrorf("Could not set the cookies: %v", err)
		}
	}
	if len(state.Origins) > 0 {
		if _, err := cdp.Call(pctx, t, domstorage.Enable, cdp.Empty{}); err != nil {
			return "", err
		}
		defer cdp.Call(pctx, t, domstorage.Disable, cdp.Empty{})
		for _, o := range state.Origins {
			if o.Origin == "" {
				continue
			}
			if _, err := url.Parse(o.Origin); err != nil {
				return "", modelErrorf("storage_state: bad origin %q", o.Origin)
			}
			for _, set := range []struct {
				items []setItem
				local bool
			}{{o.LocalStorage, true}, {o.SessionStorage, false}} {
				for _, it := range set.items {
					key := it.Key
					if key == "" {
						key = it.Name
					}
					if key == "" {
						continue
					}
					if _, err := cdp.Call(pctx, t, domstorage.SetDOMStorageItem, domstorage.SetDOMStorageItemParams{
						StorageID: &domstorage.StorageID{SecurityOrigin: o.Origin, IsLocalStorage: set.local}, Key: key, Value: it.Value,
					}); err != nil {
						return "", modelErrorf("Could not set storage of %s: %v", o.Origin, err)
					}
				}
			}
		}
	}
	return "Storage set successfully", nil
}
