package tui

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/termtext"
	"github.com/gohands/gohands/tool"
)

type cellKind int

const (
	cellUser cellKind = iota
	cellAgent
	cellAction
	cellInfo
	cellError
)

// collapsedLines is how many lines of output a collapsed action shows.
const collapsedLines = 6

// cell is one block of the conversation on screen.
type cell struct {
	kind      cellKind
	text      string // the message, the info, or the action's title
	streaming bool   // agent text still arriving
	callID    string // an action's tool call id

	// An action's result.
	output   string // command output (live while running) or result text
	diff     []string
	tasks    []tool.Task
	exitCode *int
	done     bool
	failed   bool
	rejected bool
	expanded bool
	preview  bool // what an action waiting for an answer will do

	// The agent's message as markdown renders it, kept while its text
	// and the width stay: the screen is drawn at every event.
	md, mdText string
	mdWidth    int
}

var (
	styleUser     = lipgloss.NewStyle().Bold(true)
	styleDim      = lipgloss.NewStyle().Faint(true)
	styleErr      = lipgloss.NewStyle().Foreground(lipgloss.Color("1"))
	styleAdd      = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
	styleDel      = lipgloss.NewStyle().Foreground(lipgloss.Color("1"))
	styleHunk     = lipgloss.NewStyle().Foreground(lipgloss.Color("6"))
	styleRunning  = lipgloss.NewStyle().Foreground(lipgloss.Color("3"))
	styleOK       = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
	styleSelected = lipgloss.NewStyle().Reverse(true)
	styleStatus   = lipgloss.NewStyle().Faint(true)
	stylePanel    = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).Padding(0, 1)
	styleKey      = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("6"))
)

// render returns the cell's lines at width w. markdown, if set, renders
// the agent's finished messages.
func (c *cell) render(w int, selected bool, markdown func(string, int) string) []string {
	switch c.kind {
	case cellUser:
		return wrapLines(styleUser.Render("› ")+styleUser.Render(c.text), w)
	case cellAgent:
		if !c.streaming && markdown != nil {
			if c.mdWidth != w || c.mdText != c.text {
				c.md, c.mdText, c.mdWidth = strings.Trim(markdown(c.text, w), "\n"), c.text, w
			}
			if c.md != "" {
				return strings.Split(c.md, "\n")
			}
		}
		return wrapLines(c.text, w)
	case cellInfo:
		return wrapLines(styleDim.Render(c.text), w)
	case cellError:
		return wrapLines(styleErr.Render("✗ "+c.text), w)
	}
	return c.renderAction(w, selected)
}

func (c *cell) renderAction(w int, selected bool) []string {
	mark := styleRunning.Render("●")
	switch {
	case c.preview:
		mark = styleKey.Render("?")
	case c.rejected:
		mark = styleDim.Render("○")
	case c.failed || (c.exitCode != nil && *c.exitCode != 0):
		mark = styleErr.Render("●")
	case c.done:
		mark = styleOK.Render("●")
	}
	title := c.text
	if c.exitCode != nil && *c.exitCode != 0 {
		title += fmt.Sprintf("  (exit %d)", *c.exitCode)
	}
	head := ansi.Truncate(title, max(w-2, 1), "…")
	if selected {
		head = styleSelected.Render(head)
	}
	lines := []string{mark + " " + head}

	var body []string
	switch {
	case c.rejected:
		body = []string{styleDim.Render(c.output)}
	case len(c.tasks) > 0:
		for _, t := range c.tasks {
			box := "☐"
			switch t.Status {
			case tool.TaskDone:
				box = styleOK.Render("☑")
			case tool.TaskInProgress:
				box = styleRunning.Render("◐")
			}
			body = append(body, box+" "+termtext.Strip(t.Title))
		}
	case len(c.diff) > 0:
		body = c.diff
	case c.output != "":
		text := strings.TrimRight(c.output, "\n")
		if c.failed {
			text = styleErr.Render(text)
		}
		body = strings.Split(text, "\n")
	}
	var wrapped []string
	for _, l := range body {
		wrapped = append(wrapped, wrapLines(l, max(w-4, 1))...)
	}
	limit := collapsedLines
	if len(c.diff) > 0 {
		limit *= 2
	}
	if !c.expanded && len(c.tasks) == 0 && len(wrapped) > limit {
		hidden := len(wrapped) - limit
		// A running command's newest lines matter; of a result, its start.
		if c.done {
			wrapped = append(wrapped[:limit:limit],
				styleDim.Render(fmt.Sprintf("… %s (ctrl+o expands)", plural(hidden, "more line"))))
		} else {
			wrapped = append([]string{styleDim.Render("… " + plural(hidden, "earlier line"))},
				wrapped[hidden:]...)
		}
	}
	for _, l := range wrapped {
		lines = append(lines, styleDim.Render("  │ ")+l)
	}
	return lines
}

// wrapLines wraps s at width w into lines, tabs expanded (a tab's
// width depends on the column, which the wrapper cannot know).
func wrapLines(s string, w int) []string {
	return strings.Split(ansi.Wrap(strings.ReplaceAll(s, "\t", "    "), max(w, 1), ""), "\n")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Diff shows the change from old to new as a unified diff of the changed
// region with two lines of context (edits are usually one hunk), without
// colour: lines start with "@@", "-", "+" or " ". A new file (old empty)
// is all additions.
func Diff(old, new string) []string {
	if old == "" {
		b := strings.Split(strings.TrimSuffix(new, "\n"), "\n")
		out := []string{fmt.Sprintf("@@ -0,0 +1,%d @@", len(b))}
		for _, l := range b {
			out = append(out, "+"+termtext.Strip(l))
		}
		return out
	}
	// A file's last newline ends its last line: it is no line of its own.
	a := strings.Split(strings.TrimSuffix(old, "\n"), "\n")
	b := strings.Split(strings.TrimSuffix(new, "\n"), "\n")
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	const ctx = 2
	from := max(pre-ctx, 0)
	toA, toB := min(len(a)-suf+ctx, len(a)), min(len(b)-suf+ctx, len(b))
	out := []string{fmt.Sprintf("@@ -%d,%d +%d,%d @@", from+1, toA-from, from+1, toB-from)}
	for _, l := range a[from:pre] {
		out = append(out, " "+termtext.Strip(l))
	}
	for _, l := range a[pre : len(a)-suf] {
		out = append(out, "-"+termtext.Strip(l))
	}
	for _, l := range b[pre : len(b)-suf] {
		out = append(out, "+"+termtext.Strip(l))
	}
	for _, l := range b[len(b)-suf : toB] {
		out = append(out, " "+termtext.Strip(l))
	}
	return out
}

// styleDiff colours the lines of a Diff.
func styleDiff(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "@@"):
			l = styleHunk.Render(l)
		case strings.HasPrefix(l, "-"):
			l = styleDel.Render(l)
		case strings.HasPrefix(l, "+"):
			l = styleAdd.Render(l)
		}
		out[i] = l
	}
	return out
}

// observe fills an action cell with its result.
func (c *cell) observe(o event.Observation) {
	c.done = true
	base := o.Obs()
	c.failed = base.IsError
	text := termtext.Strip(event.TextOf(base.Content))
	v := tool.PresentObservation(o)
	switch {
	case v.Edit != nil:
		c.diff = styleDiff(Diff(v.Edit.Old, v.Edit.New))
	case len(v.Tasks) > 0:
		c.tasks = v.Tasks
	default:
		if v.ExitCode != nil {
			c.exitCode = v.ExitCode
		}
		// A command's live output stays when its result has no text.
		if c.output == "" || text != "" {
			c.output = text
		}
	}
}
