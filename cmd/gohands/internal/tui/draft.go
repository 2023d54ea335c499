package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
)

// The prompt takes several lines: the line being edited is the text
// input, the lines before it are kept in Model.above. A newline key
// (newlineKeys) breaks the line at the cursor, Backspace at the start of a
// line joins it to the one above, and a paste keeps its newlines (pasted
// text arrives whole, bracketed, so a newline in it never sends).

// newlineKeys break the prompt's line: Enter sends. Shift+Enter is told
// from Enter only by terminals that report modifiers.
var newlineKeys = map[string]bool{"ctrl+j": true, "alt+enter": true, "shift+enter": true}

// draftMax bounds how many lines of the prompt the screen shows.
const draftMax = 8

// draft returns the whole prompt: every line, joined by newlines.
func (m *Model) draft() string {
	if len(m.above) == 0 {
		return m.input.Value()
	}
	return strings.Join(m.above, "\n") + "\n" + m.input.Value()
}

// clearDraft empties the prompt.
func (m *Model) clearDraft() {
	m.above = nil
	m.input.Reset()
}

// setDraft puts text in the prompt, the cursor at its end.
func (m *Model) setDraft(text string) {
	lines := strings.Split(text, "\n")
	m.above = append([]string(nil), lines[:len(lines)-1]...)
	m.input.SetValue(lines[len(lines)-1])
	m.input.CursorEnd()
}

// breakLine breaks the line being edited at the cursor.
func (m *Model) breakLine() {
	r := []rune(m.input.Value())
	at := min(m.input.Position(), len(r))
	m.above = append(m.above, string(r[:at]))
	m.input.SetValue(string(r[at:]))
	m.input.SetCursor(0)
}

// joinLine joins the line being edited to the one above, the cursor
// where they meet; false when there is no line above.
func (m *Model) joinLine() bool {
	if len(m.above) == 0 {
		return false
	}
	prev := m.above[len(m.above)-1]
	m.above = m.above[:len(m.above)-1]
	m.input.SetValue(prev + m.input.Value())
	m.input.SetCursor(len([]rune(prev)))
	return true
}

// paste inserts pasted text at the cursor, its newlines kept.
func (m *Model) paste(text string) {
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	r := []rune(m.input.Value())
	at := min(m.input.Position(), len(r))
	before, after := string(r[:at]), string(r[at:])
	lines := strings.Split(before+text, "\n")
	m.above = append(m.above, lines[:len(lines)-1]...)
	last := lines[len(lines)-1]
	m.input.SetValue(last + after)
	m.input.SetCursor(len([]rune(last)))
}

// multiline reports whether the prompt takes newlines in the current
// mode: not while it asks for a key or a setting.
func (m *Model) multiline() bool {
	return m.mode == modePrompt || m.mode == modeConfirm
}

// draftKey handles the keys that edit the prompt's lines; false when k
// is not one of them.
func (m *Model) draftKey(k tea.KeyPressMsg) bool {
	if !m.multiline() {
		return false
	}
	switch s := k.String(); {
	case newlineKeys[s]:
		m.breakLine()
		return true
	case s == "backspace" && m.input.Position() == 0:
		return m.joinLine()
	}
	return false
}

// draftView is the prompt's lines on screen: the last draftMax of them,
// the line being edited last.
func (m *Model) draftView(w int) []string {
	var out []string
	above := m.above
	if len(above) > draftMax-1 {
		out = append(out, styleDim.Render(ansiTrunc("  … "+plural(len(above)-(draftMax-1), "line")+" above", w)))
		above = above[len(above)-(draftMax-1):]
	}
	for i, l := range above {
		prefix := "  "
		if i == 0 && len(out) == 0 {
			prefix = m.input.Prompt
		}
		out = append(out, ansiTrunc(prefix+strings.ReplaceAll(l, "\t", "    "), w))
	}
	if len(m.above) == 0 {
		return append(out, m.input.View())
	}
	// A continued line: no prompt mark, no placeholder.
	prompt, placeholder := m.input.Prompt, m.input.Placeholder
	m.input.Prompt, m.input.Placeholder = "  ", ""
	v := m.input.View()
	m.input.Prompt, m.input.Placeholder = prompt, placeholder
	return append(out, v)
}
