package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/spinner"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/termtext"
	"github.com/gohands/gohands/tool"
)

// Options configure a Model. A nil *Options is the default.
type Options struct {
	// Task, if set, is sent as soon as the program starts.
	Task string
	// History are the events of a resumed conversation, shown first.
	History []event.Event
	// Pick opens the /resume picker at start.
	Pick bool
	// Setup asks for a model and key first (no configuration exists).
	Setup bool
	// Markdown, if set, renders the agent's finished messages at a width.
	Markdown func(text string, width int) string
	// Now is the clock of the elapsed-time display (time.Now if nil).
	Now func() time.Time
}

// mode is what the bottom of the screen asks for.
type mode int

const (
	modePrompt mode = iota
	modeConfirm
	modePick
	modeSetup
	modeAsk
)

// Model is the TUI's state. Create it with New.
type Model struct {
	b    Backend
	opts Options
	ctx  context.Context

	width, height int
	cells         []*cell
	byCall        map[string]*cell
	selected      int // index of the selected action cell, -1 for none
	scroll        int // lines scrolled up from the bottom

	mode    mode
	input   textinput.Model
	above   []string // the prompt's lines before the one being edited (draft.go)
	spin    spinner.Model
	running bool
	started time.Time
	phase   string // "thinking" or the running tool's name

	pending []Pending
	always  string // what "always" covers (Outcome.Always)
	// queued are messages typed while the agent worked or asked: they are
	// sent, as one message, when it stops.
	queued   []string
	sending  string    // the message of the run in progress
	question *Question // what modeAsk asks
	picks    []Summary
	pickAt   int
	setup    []string // answers given so far: model, key, base URL

	notice string
	armed  bool // a Ctrl-C at the prompt was pressed once
	stats  Stats
	quit   bool
}

// New returns a Model driving b.
func New(b Backend, opts *Options) *Model {
	m := &Model{b: b, ctx: context.Background(), selected: -1, byCall: map[string]*cell{},
		width: 80, height: 24}
	if opts != nil {
		m.opts = *opts
	}
	if m.opts.Now == nil {
		m.opts.Now = time.Now
	}
	m.input = textinput.New()
	m.input.Prompt = "› "
	m.input.Placeholder = "Ask gohands to do something, or /help"
	m.input.Focus()
	m.spin = spinner.New(spinner.WithSpinner(spinner.MiniDot))
	for _, e := range m.opts.History {
		m.addEvent(e)
	}
	if m.opts.Setup {
		m.startSetup()
	}
	m.stats = b.Stats()
	return m
}

type outcomeMsg Outcome

type infoMsg struct {
	text string
	err  error
}

type picksMsg struct {
	list []Summary
	err  error
}

type resumedMsg struct {
	id     string
	events []event.Event
	err    error
}

type newMsg struct{ err error }

type setupMsg struct{ err error }

// Init sends the first task, or opens the picker.
func (m *Model) Init() tea.Cmd {
	switch {
	case m.opts.Pick:
		return m.listCmd()
	case m.opts.Task != "" && m.mode == modePrompt:
		return m.send(m.opts.Task)
	}
	return nil
}

// Update handles a message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.input.SetWidth(max(m.width-4, 10))
		return m, nil
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case tea.PasteMsg:
		if m.multiline() {
			m.paste(msg.Content)
			return m, nil
		}
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		return m, cmd
	case EventMsg:
		m.addEvent(msg.Event)
		m.stats = m.b.Stats()
		return m, nil
	case OutputMsg:
		if c := m.runningAction(); c != nil {
			c.output += termtext.Strip(msg.Text)
		}
		return m, nil
	case NoticeMsg:
		m.notice = termtext.Strip(msg.Text)
		return m, nil
	case spinner.TickMsg:
		if !m.running {
			return m, nil
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return m, cmd
	case outcomeMsg:
		return m, m.finish(Outcome(msg))
	case infoMsg:
		var q *Question
		if errors.As(msg.err, &q) {
			m.ask(q)
			return m, nil
		}
		switch {
		case msg.err != nil:
			m.push(&cell{kind: cellError, text: msg.err.Error()})
		case msg.text != "":
			m.push(&cell{kind: cellInfo, text: msg.text})
		}
		m.stats = m.b.Stats()
		return m, nil
	case picksMsg:
		switch {
		case msg.err != nil:
			m.push(&cell{kind: cellError, text: msg.err.Error()})
		case len(msg.list) == 0:
			m.push(&cell{kind: cellInfo, text: "No stored conversations in this workspace."})
		default:
			m.picks, m.pickAt, m.mode = msg.list, 0, modePick
		}
		return m, nil
	case resumedMsg:
		if msg.err != nil {
			m.push(&cell{kind: cellError, text: msg.err.Error()})
			return m, nil
		}
		m.reset()
		for _, e := range msg.events {
			m.addEvent(e)
		}
		m.push(&cell{kind: cellInfo, text: "Resumed conversation " + msg.id + "."})
		m.stats = m.b.Stats()
		return m, nil
	case newMsg:
		if msg.err != nil {
			m.push(&cell{kind: cellError, text: msg.err.Error()})
			return m, nil
		}
		m.reset()
		m.push(&cell{kind: cellInfo, text: "New conversation."})
		m.stats = m.b.Stats()
		return m, nil
	case setupMsg:
		if msg.err != nil {
			m.push(&cell{kind: cellError, text: "setup: " + msg.err.Error()})
			m.startSetup()
			return m, nil
		}
		m.mode = modePrompt
		m.resetInput()
		m.stats = m.b.Stats()
		m.push(&cell{kind: cellInfo, text: "Saved. You can change it later with /settings or the settings file."})
		if m.opts.Task != "" {
			return m, m.send(m.opts.Task)
		}
		return m, nil
	}
	return m, nil
}

func (m *Model) reset() {
	m.cells, m.byCall, m.selected, m.scroll = nil, map[string]*cell{}, -1, 0
}

func (m *Model) resetInput() {
	m.clearDraft()
	m.input.EchoMode = textinput.EchoNormal
	m.input.Placeholder = "Ask gohands to do something, or /help"
}

func (m *Model) push(c *cell) { m.cells = append(m.cells, c) }

// send sends text and runs the agent.
func (m *Model) send(text string) tea.Cmd {
	m.startRun()
	m.sending = text
	b, ctx := m.b, m.ctx
	return tea.Batch(m.spin.Tick, func() tea.Msg { return outcomeMsg(b.Send(ctx, text)) })
}

func (m *Model) startRun() {
	m.running, m.started, m.phase, m.notice, m.scroll = true, m.opts.Now(), "Thinking", "", 0
}

// finish shows how a run stopped, and sends the messages typed
// meanwhile once the agent is no longer waiting for an answer.
func (m *Model) finish(o Outcome) tea.Cmd {
	m.running, m.notice = false, ""
	m.stats = m.b.Stats()
	if o.NotSent && m.sending != "" {
		m.queued = append([]string{m.sending}, m.queued...)
	}
	m.sending = ""
	switch {
	case o.Status == "waiting_for_confirmation":
		m.pending, m.always, m.mode = o.Pending, o.Always, modeConfirm
		return nil
	case o.Err != nil:
		m.push(&cell{kind: cellError, text: o.Err.Error()})
		m.unqueue()
		return nil
	case o.Status == "paused" && len(m.queued) == 0:
		m.push(&cell{kind: cellInfo, text: "Paused. Type to continue, or Ctrl-C again to exit."})
	case o.Status != "finished" && o.Status != "idle" && o.Status != "paused" && o.Status != "":
		m.push(&cell{kind: cellInfo, text: "The run stopped: " + o.Status + "."})
		m.unqueue()
		return nil
	}
	if len(m.queued) == 0 {
		return nil
	}
	text := strings.Join(m.queued, "\n\n")
	m.queued = nil
	return m.send(text)
}

// unqueue puts the messages typed meanwhile back in the prompt, for the
// user to send or change, when the run stopped in a way that needs a
// look first.
func (m *Model) unqueue() {
	if len(m.queued) == 0 {
		return
	}
	text := strings.Join(append(m.queued, m.draft()), "\n")
	m.queued = nil
	m.setDraft(strings.TrimSpace(text))
}

func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	s := k.String()
	if s != "ctrl+c" {
		m.armed = false
	}
	switch m.mode {
	case modeConfirm:
		if cmd, ok := m.confirmKey(s); ok {
			return cmd
		}
	case modePick:
		return m.pickKey(s)
	case modeAsk:
		switch s {
		case "enter":
			return m.answerQuestion()
		case "esc", "ctrl+c":
			m.mode, m.question = modePrompt, nil
			m.resetInput()
			m.push(&cell{kind: cellInfo, text: "Cancelled."})
			return nil
		}
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(k)
		return cmd
	}
	if m.draftKey(k) {
		return nil
	}
	switch s {
	case "ctrl+c":
		return m.interrupt()
	case "esc":
		if m.running {
			// As in other agents' terminals: Esc stops the step.
			m.notice = "Interrupting…"
			go m.b.Pause()
			return nil
		}
	case "pgup":
		m.scroll += max(m.height/2, 1)
		return nil
	case "pgdown":
		m.scroll = max(m.scroll-max(m.height/2, 1), 0)
		return nil
	case "ctrl+p":
		m.selectAction(-1)
		return nil
	case "ctrl+n":
		m.selectAction(1)
		return nil
	case "ctrl+o":
		m.toggle()
		return nil
	case "enter":
		if m.mode == modeSetup {
			return m.setupEnter()
		}
		return m.submit()
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	return cmd
}

// interrupt is Ctrl-C: pause a run; at the prompt, clear the line, then
// ask for a second Ctrl-C to exit.
func (m *Model) interrupt() tea.Cmd {
	switch {
	case m.running:
		m.notice = "Pausing…"
		go m.b.Pause()
		return nil
	case m.draft() != "":
		m.clearDraft()
		return nil
	case m.armed:
		m.quit = true
		return tea.Quit
	}
	m.armed = true
	m.notice = "Press Ctrl-C again to exit."
	return nil
}

func (m *Model) submit() tea.Cmd {
	text := strings.TrimSpace(m.draft())
	if text == "" {
		return nil
	}
	m.clearDraft()
	if strings.HasPrefix(text, "/") {
		return m.slash(text)
	}
	if m.running || m.mode == modeConfirm {
		m.queued = append(m.queued, text)
		return nil
	}
	return m.send(text)
}

// commands are the slash commands, in /help's order.
var commands = []struct{ name, help string }{
	{"help", "this list"},
	{"new", "start a new conversation"},
	{"resume", "pick a conversation of this workspace to continue (or /resume ID)"},
	{"settings", "show the settings, or /settings NAME VALUE to change one"},
	{"model", "show the model and the known ones, or /model NAME to switch this conversation"},
	{"confirm", "show or set when actions wait for you: /confirm always|risky|never"},
	{"condense", "summarise the history to free the context window"},
	{"skills", "list the skills the agent has"},
	{"mcp", "list the MCP servers and their tools"},
	{"cost", "tokens and cost of this conversation"},
	{"exit", "leave (the conversation is kept: gohands -c continues it)"},
}

func (m *Model) slash(text string) tea.Cmd {
	name, arg, _ := strings.Cut(strings.TrimPrefix(text, "/"), " ")
	arg = strings.TrimSpace(arg)
	busy := func() tea.Cmd {
		// Kept in the prompt, not dropped: Enter once the agent stops.
		m.setDraft(text)
		m.notice = "/" + name + " can run once the agent stops (Ctrl-C pauses it): press Enter then."
		return nil
	}
	b, ctx := m.b, m.ctx
	switch name {
	case "help":
		var sb strings.Builder
		sb.WriteString("Commands:\n")
		for _, c := range commands {
			fmt.Fprintf(&sb, "  /%-9s %s\n", c.name, c.help)
		}
		sb.WriteString("Keys: Enter sends (while the agent works or asks, the message waits its turn) ·\n" +
			"Ctrl-J or Alt-Enter starts a new line (a paste keeps its lines) ·\n" +
			"Esc or Ctrl-C stops the agent, Ctrl-C twice at the prompt exits ·\n" +
			"PgUp/PgDn scroll · Ctrl-P/Ctrl-N select an action · Ctrl-O expands or collapses it")
		m.push(&cell{kind: cellInfo, text: sb.String()})
		return nil
	case "exit", "quit":
		if m.running {
			go b.Pause()
		}
		m.quit = true
		return tea.Quit
	case "new":
		if m.running {
			return busy()
		}
		return func() tea.Msg { return newMsg{b.New()} }
	case "resume":
		if m.running {
			return busy()
		}
		if arg != "" {
			return m.resumeCmd(arg)
		}
		return m.listCmd()
	case "settings", "model", "confirm", "condense", "skills", "mcp", "cost":
		if m.running && (name == "condense" || name == "model") {
			return busy()
		}
		return func() tea.Msg {
			s, err := b.Command(ctx, name, arg)
			return infoMsg{s, err}
		}
	}
	m.push(&cell{kind: cellError, text: fmt.Sprintf("unknown command /%s: /help lists them", name)})
	return nil
}

func (m *Model) listCmd() tea.Cmd {
	b := m.b
	return func() tea.Msg {
		l, err := b.Conversations()
		return picksMsg{l, err}
	}
}

func (m *Model) resumeCmd(id string) tea.Cmd {
	b := m.b
	return func() tea.Msg {
		evs, err := b.Resume(id)
		return resumedMsg{id, evs, err}
	}
}

// confirmKey answers the panel; ok is false for a key that is typing
// (the panel's keys answer only while the prompt is empty, so that a
// message can be typed, and is sent after the answer).
func (m *Model) confirmKey(s string) (cmd tea.Cmd, ok bool) {
	if m.draft() != "" && s != "ctrl+c" {
		if s == "esc" {
			m.clearDraft()
			return nil, true
		}
		return nil, false
	}
	var a Answer
	switch s {
	case "d":
		m.showDetails()
		return nil, true
	case "y", "enter":
		a = AnswerYes
	case "n", "esc", "ctrl+c":
		a = AnswerNo
	case "a":
		a = AnswerAlways
	case "r":
		a = AnswerAuto
	default:
		return nil, false
	}
	tool := ""
	if len(m.pending) > 0 {
		tool = m.pending[0].Tool
	}
	m.mode, m.pending = modePrompt, nil
	m.startRun()
	if a != AnswerNo && tool != "" {
		m.phase = "Running " + tool
	}
	b, ctx := m.b, m.ctx
	return tea.Batch(m.spin.Tick, func() tea.Msg { return outcomeMsg(b.Answer(ctx, a)) }), true
}

// ask shows a backend's question at the prompt.
func (m *Model) ask(q *Question) {
	m.mode, m.question = modeAsk, q
	m.input.Reset()
	m.input.Placeholder = "Enter answers, Esc cancels"
	m.input.EchoMode = textinput.EchoNormal
	if q.Secret {
		m.input.EchoMode = textinput.EchoPassword
	}
}

func (m *Model) answerQuestion() tea.Cmd {
	q, text := m.question, strings.TrimSpace(m.input.Value())
	m.mode, m.question = modePrompt, nil
	m.resetInput()
	if text == "" {
		m.push(&cell{kind: cellInfo, text: "Cancelled."})
		return nil
	}
	ctx := m.ctx
	return func() tea.Msg {
		s, err := q.Answer(ctx, text)
		return infoMsg{s, err}
	}
}

func (m *Model) pickKey(s string) tea.Cmd {
	switch s {
	case "up", "k", "ctrl+p":
		m.pickAt = max(m.pickAt-1, 0)
	case "down", "j", "ctrl+n":
		m.pickAt = min(m.pickAt+1, len(m.picks)-1)
	case "esc", "ctrl+c", "q":
		m.mode, m.picks = modePrompt, nil
	case "enter":
		id := m.picks[m.pickAt].ID
		m.mode, m.picks = modePrompt, nil
		return m.resumeCmd(id)
	}
	return nil
}

// setupQuestions are the first-run questions, in order.
var setupQuestions = []struct{ prompt, placeholder string }{
	{"Model", "anthropic/claude-sonnet-4-5, openai/gpt-5.5, gemini/gemini-2.5-pro…"},
	{"API key", "the provider's key (stored in the settings file, mode 0600)"},
	{"Base URL", "empty for the provider's own API; http://localhost:8000/v1 for a server of yours"},
}

func (m *Model) startSetup() {
	m.mode, m.setup = modeSetup, nil
	m.input.Reset()
	m.input.Placeholder = setupQuestions[0].placeholder
}

func (m *Model) setupEnter() tea.Cmd {
	v := strings.TrimSpace(m.input.Value())
	if len(m.setup) == 0 && v == "" {
		m.notice = "A model is needed."
		return nil
	}
	m.notice = ""
	m.setup = append(m.setup, v)
	m.input.Reset()
	if len(m.setup) < len(setupQuestions) {
		q := setupQuestions[len(m.setup)]
		m.input.Placeholder = q.placeholder
		m.input.EchoMode = textinput.EchoNormal
		if len(m.setup) == 1 {
			m.input.EchoMode = textinput.EchoPassword
		}
		return nil
	}
	b, ans := m.b, m.setup
	return func() tea.Msg { return setupMsg{b.Setup(ans[0], ans[1], ans[2])} }
}

// addEvent shows an event.
func (m *Model) addEvent(e event.Event) {
	last := func() *cell {
		if len(m.cells) == 0 {
			return nil
		}
		return m.cells[len(m.cells)-1]
	}
	endStream := func() bool {
		if c := last(); c != nil && c.kind == cellAgent && c.streaming {
			c.streaming = false
			return true
		}
		return false
	}
	switch e := e.(type) {
	case *event.StreamingDeltaEvent:
		if e.Content == nil || *e.Content == "" {
			return
		}
		c := last()
		if c == nil || c.kind != cellAgent || !c.streaming {
			c = &cell{kind: cellAgent, streaming: true}
			m.push(c)
		}
		c.text += termtext.Strip(*e.Content)
		m.phase = "Writing"
	case *event.MessageEvent:
		text := termtext.Strip(strings.TrimSpace(event.TextOf(e.LLMMessage.Content)))
		if e.Source == event.SourceUser {
			m.push(&cell{kind: cellUser, text: text})
			return
		}
		if c := last(); c != nil && c.kind == cellAgent && c.streaming {
			c.streaming, c.text = false, text
			return
		}
		if text != "" {
			m.push(&cell{kind: cellAgent, text: text})
		}
	case *event.ActionEvent:
		if !endStream() {
			if t := termtext.Strip(strings.TrimSpace(event.TextOf(e.Thought))); t != "" {
				m.push(&cell{kind: cellAgent, text: t})
			}
		}
		v := tool.PresentAction(e)
		if v.Message != nil {
			// The run's last word is a message, not an action to look at.
			m.push(&cell{kind: cellAgent, text: termtext.Strip(*v.Message)})
			return
		}
		c := &cell{kind: cellAction, text: v.Summary, callID: e.ToolCallID}
		m.push(c)
		m.byCall[e.ToolCallID] = c
		m.phase = "Running " + e.ToolName
	case *event.ObservationEvent:
		if c := m.byCall[e.ToolCallID]; c != nil && e.Observation != nil {
			c.observe(e.Observation)
		}
		m.phase = "Thinking"
	case *event.AgentErrorEvent:
		if c := m.byCall[e.ToolCallID]; c != nil {
			c.done, c.failed, c.output = true, true, termtext.Strip(e.Error)
			return
		}
		m.push(&cell{kind: cellError, text: termtext.Strip(e.Error)})
	case *event.UserRejectObservation:
		if c := m.byCall[e.ToolCallID]; c != nil {
			c.done, c.rejected = true, true
			c.output = "rejected"
			if e.RejectionReason != "" {
				c.output += ": " + termtext.Strip(e.RejectionReason)
			}
		}
	case *event.ConversationErrorEvent:
		endStream()
		m.push(&cell{kind: cellError, text: termtext.Strip(e.Code + ": " + e.Detail)})
	case *event.Condensation:
		m.push(&cell{kind: cellInfo, text: fmt.Sprintf("The history was condensed: %s summarised.", plural(len(e.ForgottenEventIDs), "event"))})
	}
}

// runningAction is the last action without a result.
func (m *Model) runningAction() *cell {
	for i := len(m.cells) - 1; i >= 0; i-- {
		if c := m.cells[i]; c.kind == cellAction {
			if c.done {
				return nil
			}
			return c
		}
	}
	return nil
}

// selectAction moves the selection to the previous (-1) or next (1)
// action cell.
func (m *Model) selectAction(dir int) {
	i := m.selected
	if i < 0 {
		i = len(m.cells)
	}
	for i += dir; i >= 0 && i < len(m.cells); i += dir {
		if m.cells[i].kind == cellAction {
			m.selected = i
			return
		}
	}
	if dir > 0 {
		m.selected = -1
	}
}

// toggle expands or collapses the selected action, or the last one.
func (m *Model) toggle() {
	i := m.selected
	if i < 0 {
		for j := len(m.cells) - 1; j >= 0; j-- {
			if m.cells[j].kind == cellAction {
				i = j
				break
			}
		}
	}
	if i >= 0 {
		m.cells[i].expanded = !m.cells[i].expanded
	}
}

// View renders the screen.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.WindowTitle = "gohands"
	return v
}

// Render is the screen's content at the Model's size.
func (m *Model) Render() string {
	w := max(m.width, 20)
	foot := m.footer(w)
	room := max(m.height-len(foot), 1)

	var lines []string
	for i, c := range m.cells {
		if i > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, c.render(w, i == m.selected, m.opts.Markdown)...)
	}
	end := max(len(lines)-m.scroll, 0)
	if m.scroll > 0 && end < room {
		end = min(room, len(lines))
		m.scroll = len(lines) - end
	}
	start := max(end-room, 0)
	shown := lines[start:end]
	out := make([]string, 0, m.height)
	for range room - len(shown) {
		out = append(out, "")
	}
	out = append(out, shown...)
	out = append(out, foot...)
	return strings.Join(out, "\n")
}

// footer is the bottom of the screen: activity, notice, panel, prompt,
// status line.
func (m *Model) footer(w int) []string {
	var out []string
	if m.running {
		el := m.opts.Now().Sub(m.started).Truncate(time.Second)
		out = append(out, styleRunning.Render(m.spin.View())+" "+m.phase+"… "+
			styleDim.Render(fmt.Sprintf("%s · Ctrl-C pauses", el)))
	}
	if m.scroll > 0 {
		out = append(out, styleDim.Render(fmt.Sprintf("↑ scrolled %d lines (PgDn goes back)", m.scroll)))
	}
	if m.notice != "" {
		out = append(out, styleRunning.Render(m.notice))
	}
	for _, q := range m.queued {
		out = append(out, styleDim.Render(ansiTrunc("⏵ queued: "+oneLine(q), w)))
	}
	switch m.mode {
	case modeConfirm:
		out = append(out, m.confirmPanel(w)...)
	case modePick:
		out = append(out, m.pickPanel(w)...)
	case modeSetup:
		out = append(out, m.setupPanel(w)...)
		out = append(out, m.input.View())
	case modeAsk:
		out = append(out, styleKey.Render("? ")+ansiTrunc(termtext.Strip(m.question.Prompt), w-2))
		out = append(out, m.input.View())
	default:
		out = append(out, m.draftView(w)...)
	}
	return append(out, m.statusLine(w))
}

func (m *Model) confirmPanel(w int) []string {
	var sb strings.Builder
	n := len(m.pending)
	if n == 1 {
		sb.WriteString("The agent wants to run 1 action:\n")
	} else {
		fmt.Fprintf(&sb, "The agent wants to run %d actions:\n", n)
	}
	// The previews share what the screen can spare.
	room := max(min(m.height-12, 24)/max(n, 1), 3)
	hidden := false
	for _, p := range m.pending {
		risk := p.Risk
		if risk == "HIGH" || risk == "UNKNOWN" {
			risk = styleErr.Render(risk)
		}
		line := fmt.Sprintf("  %s (risk %s): %s", p.Tool, risk, termtext.Strip(p.Line))
		sb.WriteString(ansiTrunc(line, w-4) + "\n")
		detail := previewLines(p.Detail)
		if len(detail) > room {
			more := len(detail) - room + 1
			detail = append(detail[:room-1:room-1], styleDim.Render(fmt.Sprintf("… %s (d shows all)", plural(more, "more line"))))
			hidden = true
		}
		for _, l := range detail {
			sb.WriteString("    " + ansiTrunc(l, w-8) + "\n")
		}
	}
	always := "always"
	if m.always != "" {
		always = "always for " + m.always
	}
	keys := styleKey.Render("y") + " yes  " + styleKey.Render("n") + " no  " +
		styleKey.Render("a") + " " + always + "  " + styleKey.Render("r") + " auto (ask only for high risk)"
	if hidden {
		keys += "  " + styleKey.Render("d") + " show all"
	}
	sb.WriteString(keys + "\n")
	sb.WriteString(styleDim.Render("\"always\" lasts this session and never covers HIGH risk") + "\n")
	sb.WriteString(styleDim.Render("or type a message: it is sent after your answer"))
	out := strings.Split(stylePanel.Width(w).Render(sb.String()), "\n")
	if m.draft() != "" {
		out = append(out, m.draftView(w)...)
	}
	return out
}

// previewLines styles an action's Detail: a diff in colour, other text
// as it is.
func previewLines(detail []string) []string {
	if len(detail) == 0 {
		return nil
	}
	for _, l := range detail {
		if strings.HasPrefix(l, "@@") {
			return styleDiff(detail)
		}
	}
	return detail
}

// showDetails puts the whole previews of the waiting actions in the
// conversation, where they can be scrolled (PgUp), the panel staying.
func (m *Model) showDetails() {
	for _, p := range m.pending {
		c := &cell{kind: cellAction, text: p.Tool + ": " + termtext.Strip(p.Line), expanded: true, done: true, preview: true}
		c.diff = previewLines(p.Detail)
		if len(c.diff) == 0 {
			c.diff = []string{termtext.Strip(p.Line)}
		}
		m.push(c)
	}
	m.scroll = 0
}

func (m *Model) pickPanel(w int) []string {
	var sb strings.Builder
	sb.WriteString("Resume a conversation (↑/↓, Enter, Esc):\n")
	from := max(0, min(m.pickAt-4, len(m.picks)-8))
	for i := from; i < len(m.picks) && i < from+8; i++ {
		p := m.picks[i]
		mark := "  "
		if i == m.pickAt {
			mark = "▶ "
		}
		line := fmt.Sprintf("%s%.8s  %-8s %-11s %s", mark, p.ID, p.Status, p.Updated, termtext.Strip(p.Title))
		line = ansiTrunc(line, w-4)
		if i == m.pickAt {
			line = styleSelected.Render(line)
		}
		sb.WriteString(line + "\n")
	}
	return strings.Split(stylePanel.Width(w).Render(strings.TrimSuffix(sb.String(), "\n")), "\n")
}

func (m *Model) setupPanel(w int) []string {
	var sb strings.Builder
	sb.WriteString("Welcome to gohands. No model is configured yet: let's set one up.\n")
	for i, q := range setupQuestions {
		switch {
		case i < len(m.setup):
			v := m.setup[i]
			if i == 1 && v != "" {
				v = "••••••••"
			}
			fmt.Fprintf(&sb, "  %s: %s\n", q.prompt, v)
		case i == len(m.setup):
			fmt.Fprintf(&sb, "%s %s:\n", styleKey.Render("▶"), q.prompt)
		}
	}
	return strings.Split(stylePanel.Width(w).Render(strings.TrimSuffix(sb.String(), "\n")), "\n")
}

func (m *Model) statusLine(w int) string {
	s := m.stats
	parts := []string{cmpOr(s.Model, "no model")}
	parts = append(parts, TokenCount(s.Tokens)+" tokens", fmt.Sprintf("$%.4f", s.Cost))
	if s.Context >= 0 {
		parts = append(parts, fmt.Sprintf("context %d%%", int(s.Context*100+0.5)))
	}
	if s.Confirm != "" {
		parts = append(parts, "confirm "+s.Confirm)
	}
	if s.ConversationID != "" {
		parts = append(parts, fmt.Sprintf("%.8s", s.ConversationID))
	}
	return styleStatus.Render(ansiTrunc(strings.Join(parts, " · "), w))
}

// Quitting reports whether the user asked to leave.
func (m *Model) Quitting() bool { return m.quit }

// oneLine joins the lines of s.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func ansiTrunc(s string, w int) string { return ansi.Truncate(s, max(w, 4), "…") }

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TokenCount shows a token count briefly: 950, 12.3k, 1.2M.
func TokenCount(n int) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
