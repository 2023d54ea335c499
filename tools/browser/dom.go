package browser

import (
	"context"
	"slices"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/chromedp/chromedp"
)

// node is a node of a page's DOM snapshot, with the layout facts the
// interactive-element rules need. The content documents of frames and
// shadow roots are children of their host element.
type node struct {
	typ      int64 // DOM nodeType: 1 element, 3 text, 9 document, 11 fragment
	name     string
	value    string
	backend  cdp.BackendNodeID
	attrs    [][2]string
	parent   *node
	children []*node

	clickable bool
	frame     bool // the root of a frame's document
	layout    bool
	bounds    [4]float64 // x, y, width, height
	display   string
	visible   bool
	cursor    string
}

// Computed styles asked of the snapshot, in this order.
var snapshotStyles = []string{"display", "visibility", "opacity", "cursor"}

// snapshot returns the DOM of the tab as a tree rooted at the document.
func snapshot(ctx context.Context, t *chromedp.Target) (*node, error) {
	res, err := cdp.Call(ctx, t, domsnapshot.CaptureSnapshot, domsnapshot.CaptureSnapshotParams{ComputedStyles: snapshotStyles})
	if err != nil {
		return nil, err
	}
	str := func(i domsnapshot.StringIndex) string {
		if i < 0 || int(i) >= len(res.Strings) {
			return ""
		}
		return res.Strings[i]
	}
	roots := make([]*node, len(res.Documents))
	type frameLink struct {
		host *node
		doc  int64
	}
	var frames []frameLink
	for d, doc := range res.Documents {
		nt := doc.Nodes
		if nt == nil {
			continue
		}
		nodes := make([]*node, len(nt.NodeType))
		for i := range nodes {
			n := &node{typ: nt.NodeType[i]}
			if i < len(nt.NodeName) {
				n.name = strings.ToLower(str(nt.NodeName[i]))
			}
			if i < len(nt.NodeValue) {
				n.value = str(nt.NodeValue[i])
			}
			if i < len(nt.BackendNodeID) {
				n.backend = nt.BackendNodeID[i]
			}
			if i < len(nt.Attributes) {
				a := nt.Attributes[i]
				for j := 0; j+1 < len(a); j += 2 {
					n.attrs = append(n.attrs, [2]string{strings.ToLower(str(domsnapshot.StringIndex(a[j]))), str(domsnapshot.StringIndex(a[j+1]))})
				}
			}
			nodes[i] = n
		}
		if nt.IsClickable != nil {
			for _, i := range nt.IsClickable.Index {
				if int(i) < len(nodes) {
					nodes[i].clickable = true
				}
			}
		}
		if nt.ContentDocumentIndex != nil {
			for k, i := range nt.ContentDocumentIndex.Index {
				if int(i) < len(nodes) && k < len(nt.ContentDocumentIndex.Value) {
					frames = append(frames, frameLink{nodes[i], nt.ContentDocumentIndex.Value[k]})
				}
			}
		}
		for i, n := range nodes {
			if i < len(nt.ParentIndex) && nt.ParentIndex[i] >= 0 && int(nt.ParentIndex[i]) < len(nodes) {
				p := nodes[nt.ParentIndex[i]]
				n.parent = p
				p.children = append(p.children, n)
			} else if roots[d] == nil {
				roots[d] = n
			}
		}
		if l := doc.Layout; l != nil {
			for k, i := range l.NodeIndex {
				if int(i) >= len(nodes) {
					continue
				}
				n := nodes[i]
				n.layout = true
				if k < len(l.Bounds) && len(l.Bounds[k]) == 4 {
					copy(n.bounds[:], l.Bounds[k])
				}
				var st [4]string
				if k < len(l.Styles) {
					for j, si := range l.Styles[k] {
						if j < len(st) {
							st[j] = str(domsnapshot.StringIndex(si))
						}
					}
				}
				n.display, n.cursor = st[0], st[3]
				n.visible = st[0] != "none" && st[1] != "hidden" && st[1] != "collapse" && st[2] != "0"
			}
		}
	}
	for _, f := range frames {
		if f.doc >= 0 && int(f.doc) < len(roots) && roots[f.doc] != nil {
			r := roots[f.doc]
			r.frame = true
			r.parent = f.host
			f.host.children = append(f.host.children, r)
		}
	}
	if len(roots) == 0 || roots[0] == nil {
		return &node{typ: 9}, nil
	}
	return roots[0], nil
}

func (n *node) attr(name string) (string, bool) {
	for _, a := range n.attrs {
		if a[0] == name {
			return a[1], true
		}
	}
	return "", false
}

func (n *node) element() bool { return n.typ == 1 }

// hasFormControl reports whether a form control is among the element
// descendants of n, at most depth levels down.
func (n *node) hasFormControl(depth int) bool {
	if depth <= 0 {
		return false
	}
	for _, c := range n.children {
		if !c.element() {
			continue
		}
		switch c.name {
		case "input", "select", "textarea":
			return true
		}
		if c.hasFormControl(depth - 1) {
			return true
		}
	}
	return false
}

var (
	interactiveTags = []string{"button", "input", "select", "textarea", "a", "details", "summary", "option", "optgroup"}
	interactiveAttr = []string{"onclick", "onmousedown", "onmouseup", "onkeydown", "onkeyup", "tabindex"}
	interactiveRole = []string{"button", "link", "menuitem", "option", "radio", "checkbox", "tab", "textbox", "combobox",
		"slider", "spinbutton", "listbox", "search", "searchbox", "row", "cell", "gridcell"}
	searchHints = []string{"search", "magnify", "glass", "lookup", "find", "query", "search-icon", "search-btn", "search-button", "searchbox"}
	iconAttr    = []string{"class", "role", "onclick", "data-action", "aria-label"}
)

// interactive reports whether an element is something to click or type
// into, by the reference's rules: click listeners, large frames, labels
// and spans wrapping form controls, search widgets, form and link tags,
// event-handler attributes, ARIA roles, icon-sized elements with a role
// or label, and the pointer cursor. Disabled and aria-hidden elements are
// not.
func (n *node) interactive() bool {
	if !n.element() || n.name == "html" || n.name == "body" {
		return false
	}
	if _, ok := n.attr("disabled"); ok {
		return false
	}
	if v, _ := n.attr("aria-hidden"); v == "true" {
		return false
	}
	if v, _ := n.attr("aria-disabled"); v == "true" {
		return false
	}
	if n.clickable {
		return true
	}
	w, h := n.bounds[2], n.bounds[3]
	if (n.name == "iframe" || n.name == "frame") && w > 100 && h > 100 {
		return true
	}
	switch n.name {
	case "label":
		if _, ok := n.attr("for"); ok {
			return false
		}
		if n.hasFormControl(2) {
			return true
		}
	case "span":
		if n.hasFormControl(2) {
			return true
		}
	}
	for _, a := range n.attrs {
		name, v := a[0], strings.ToLower(a[1])
		if name == "class" || name == "id" || strings.HasPrefix(name, "data-") {
			for _, hint := range searchHints {
				if strings.Contains(v, hint) {
					return true
				}
			}
		}
	}
	if v, ok := n.attr("contenteditable"); ok && v != "false" {
		return true
	}
	if slices.Contains(interactiveTags, n.name) {
		return true
	}
	for _, a := range interactiveAttr {
		if _, ok := n.attr(a); ok {
			return true
		}
	}
	if role, ok := n.attr("role"); ok && slices.Contains(interactiveRole, role) {
		return true
	}
	if w >= 10 && w <= 50 && h >= 10 && h <= 50 {
		for _, a := range iconAttr {
			if _, ok := n.attr(a); ok {
				return true
			}
		}
	}
	return n.cursor == "pointer"
}

// shown reports whether an element is rendered: it has a layout box with
// an area, and neither it nor an ancestor hides it. File inputs count
// even when styled away, as they are often hidden behind a button.
func (n *node) shown() bool {
	if !n.layout || !n.visible {
		return false
	}
	if n.name == "input" {
		if v, _ := n.attr("type"); strings.EqualFold(v, "file") {
			return true
		}
	}
	return n.bounds[2] > 0 && n.bounds[3] > 0
}

// element is an interactive element as browser_get_state lists it.
type element struct {
	Index       int    `json:"index"`
	Tag         string `json:"tag"`
	Text        string `json:"text"`
	Placeholder string `json:"placeholder,omitempty"`
	Href        string `json:"href,omitempty"`
}

// viewportMargin is how far beyond the visible part of the page elements
// are still listed, as in the reference: the model scrolls for the rest.
const viewportMargin = 1000

// interactiveElements lists the interactive elements of the tree in
// document order. top and height give the visible part of the main
// document; elements of frames are listed if their frame is.
func interactiveElements(root *node, top, height float64) []element {
	out := []element{}
	var walk func(n *node, inFrame bool, inside *node)
	walk = func(n *node, inFrame bool, inside *node) {
		if n.frame {
			inFrame = true
		}
		if n.element() && n.interactive() && n.shown() && (inFrame || near(n, top, height)) && !(inside != nil && contained(n, inside)) {
			e := element{Index: int(n.backend), Tag: n.name, Text: truncateRunes(n.text(2), 100)}
			if v, _ := n.attr("placeholder"); v != "" {
				e.Placeholder = v
			}
			if v, _ := n.attr("href"); v != "" {
				e.Href = v
			}
			out = append(out, e)
			if n.name == "a" || n.name == "button" {
				inside = n
			}
		}
		for _, c := range n.children {
			walk(c, inFrame, inside)
		}
	}
	walk(root, false, nil)
	return out
}

// near reports whether n is within viewportMargin of the visible part of
// the page.
func near(n *node, top, height float64) bool {
	y, h := n.bounds[1], n.bounds[3]
	return y+h >= top-viewportMargin && y <= top+height+viewportMargin
}

// contained reports whether n lies within the box of outer (a link or a
// button it is part of, which the model clicks instead).
func contained(n, outer *node) bool {
	const slack = 1
	a, o := n.bounds, outer.bounds
	return a[0] >= o[0]-slack && a[1] >= o[1]-slack && a[0]+a[2] <= o[0]+o[2]+slack && a[1]+a[3] <= o[1]+o[3]+slack
}

// text returns the text of n's text descendants at most depth levels
// down, one per line, trimmed, as the reference shows an element's text.
func (n *node) text(depth int) string {
	var parts []string
	var collect func(m *node, d int)
	collect = func(m *node, d int) {
		if d > depth {
			return
		}
		switch m.typ {
		case 3:
			parts = append(parts, m.value)
		case 1:
			for _, c := range m.children {
				if c.frame {
					continue
				}
				collect(c, d+1)
			}
		}
	}
	collect(n, 0)
	return strings.TrimSpace(strings.Join(parts, "\n"))
}

// truncateRunes returns the first n characters of s.
func truncateRunes(s string, n int) string {
	i := 0
	for off := range s {
		if i == n {
			return s[:off]
		}
		i++
	}
	return s
}

// pageState is what browser_get_state shows, in the reference's key
// order.
type pageState struct {
	URL                  string     `json:"url"`
	Title                string     `json:"title"`
	Tabs                 []tabBrief `json:"tabs"`
	InteractiveElements  []element  `json:"interactive_elements"`
	Viewport             *size      `json:"viewport,omitempty"`
	Page                 *size      `json:"page,omitempty"`
	Scroll               *point     `json:"scroll,omitempty"`
	ScreenshotDimensions *size      `json:"screenshot_dimensions,omitempty"`
}

type tabBrief struct {
	URL   string `json:"url"`
	Title string `json:"title"`
}

type size struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

type point struct {
	X int `json:"x"`
	Y int `json:"y"`
}
