package main

import (
	"strings"
	"sync"

	"charm.land/glamour/v2"
	"charm.land/glamour/v2/styles"
)

// glamourMarkdown renders the agent's messages as markdown for the
// full-screen interface, with one renderer per width (making one parses
// its style). Text that fails to render is shown as written.
type glamourMarkdown struct {
	style string
	mu    sync.Mutex
	byW   map[int]*glamour.TermRenderer
}

func newMarkdown(noColor bool) func(string, int) string {
	g := &glamourMarkdown{style: styles.DarkStyle, byW: map[int]*glamour.TermRenderer{}}
	if noColor {
		g.style = styles.NoTTYStyle
	}
	return g.render
}

func (g *glamourMarkdown) render(text string, width int) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.byW[width]
	if r == nil {
		var err error
		r, err = glamour.NewTermRenderer(glamour.WithStandardStyle(g.style), glamour.WithWordWrap(max(width-4, 20)))
		if err != nil {
			return ""
		}
		g.byW[width] = r
	}
	out, err := r.Render(text)
	if err != nil {
		return ""
	}
	return strings.Trim(out, "\n")
}
