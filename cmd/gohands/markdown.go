package main

import "github.com/gohands/gohands/cmd/gohands/internal/tui/markdown"

// newMarkdown renders the agent's finished messages for the full-screen
// interface; with NO_COLOR set, without colours or attributes.
func newMarkdown(noColor bool) func(string, int) string {
	opts := &markdown.Options{Plain: noColor}
	return func(text string, width int) string { return markdown.Render(text, width, opts) }
}
