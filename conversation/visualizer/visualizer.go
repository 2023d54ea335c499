// Package visualizer renders conversation events for people: a readable,
// coloured transcript for a terminal, or the events as JSON lines exactly as
// they are persisted.
//
// Both are event callbacks (func(event.Event)) to register with a
// conversation:
//
//	v := visualizer.New(os.Stdout, &visualizer.Options{Stats: stats})
//	conv := conversation.New(..., OnEvent: v.OnEvent)
//
// The transcript follows the reference's default visualizer: a titled rule
// per event in the event's colour, its content, and for LLM-made events a
// line of token counts and cost. Unlike the reference it also shows
// conversation errors, interrupts and hook runs, and it shortens long tool
// output to its head and tail.
package visualizer

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/termtext"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/tool"
)

// ColorMode says when the transcript is coloured.
type ColorMode int

// Colour modes.
const (
	// ColorAuto colours when the writer is a terminal and the NO_COLOR
	// environment variable is unset or empty (https://no-color.org).
	ColorAuto ColorMode = iota
	ColorAlways
	ColorNever
)

// Defaults of Options.
const (
	DefaultWidth    = 80
	DefaultMaxLines = 40
	// maxChars bounds the characters of one shortened text block, for
	// output made of a few enormous lines.
	maxChars = 8000
)

// Options configure a Visualizer. A nil *Options is the default.
type Options struct {
	// Color says when to colour; the zero value is ColorAuto.
	Color ColorMode
	// Width is the width of the title rules; 0 means the terminal's width
	// (at most 120) when writing to one, else DefaultWidth.
	Width int
	// MaxLines is how many lines of tool output and system prompt are shown
	// before the middle is cut (its head and tail are kept); 0 means
	// DefaultMaxLines and a negative value shows everything.
	MaxLines int
	// SkipUserMessages hides the user's own messages.
	SkipUserMessages bool
	// Stats returns the conversation's LLM metrics by usage id (a
	// conversation.Stats's UsageToMetrics); nil shows no token line.
	Stats func() map[string]*llm.Metrics
}

// Visualizer writes a readable transcript of events. It is safe for
// concurrent use; events are written whole, one at a time.
type Visualizer struct {
	opts  Options
	color bool

	mu         sync.Mutex
	w          io.Writer
	err        error
	lastRespID string // response id of the previous action: parallel siblings share it
}

// New returns a Visualizer writing to w.
func New(w io.Writer, opts *Options) *Visualizer {
	v := &Visualizer{w: w}
	if opts != nil {
		v.opts = *opts
	}
	if f, ok := w.(*os.File); ok && v.opts.Width <= 0 && isTerminal(f) {
		// Rules span the terminal, up to a width that stays readable.
		if n := termWidth(f); n > 0 {
			v.opts.Width = min(n, 120)
		}
	}
	if v.opts.Width <= 0 {
		v.opts.Width = DefaultWidth
	}
	if v.opts.MaxLines == 0 {
		v.opts.MaxLines = DefaultMaxLines
	}
	switch v.opts.Color {
	case ColorAlways:
		v.color = true
	case ColorAuto:
		f, ok := w.(*os.File)
		v.color = ok && os.Getenv("NO_COLOR") == "" && isTerminal(f)
	}
	return v
}

// Colored reports whether v writes colour codes.
func (v *Visualizer) Colored() bool { return v.color }

// Err returns the first error writing to the writer; events after it are
// dropped.
func (v *Visualizer) Err() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.err
}

// OnEvent writes e. Events with nothing to show for people (state updates,
// streaming deltas, token ids, completion logs) are skipped.
func (v *Visualizer) OnEvent(e event.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.err != nil {
		return
	}
	b := v.block(e)
	if b == nil {
		return
	}
	_, v.err = io.WriteString(v.w, b.String())
}

// Styles, as SGR parameters.
const (
	sBold        = "1"
	sDim         = "2"
	sItalic      = "3"
	sRed         = "31"
	sGreen       = "32"
	sYellow      = "33"
	sBlue        = "34"
	sMagenta     = "35"
	sCyan        = "36"
	sWhite       = "37"
	sBrightBlack = "90"
	sBrightYell  = "93"
	sGold        = "38;5;178"
)

// Event colours, as the reference's.
const (
	colorAction      = sBlue
	colorObservation = sYellow
	colorSystem      = sMagenta
	colorError       = sRed
	colorUser        = sGold
	colorPause       = sBrightYell
	colorThought     = sBrightBlack
)

// text accumulates one event's content, styled or plain.
type text struct {
	strings.Builder
	color bool
}

func (t *text) styled(style, s string) {
	if !t.color || style == "" || s == "" {
		t.WriteString(s)
		return
	}
	t.WriteString("\x1b[" + style + "m" + s + "\x1b[0m")
}

// label writes a bold label on a line of its own.
func (t *text) label(style, s string) { t.styled(joinStyle(sBold, style), s); t.WriteByte('\n') }

// section writes a label and a body, then a blank line.
func (t *text) section(style, label, body string) {
	t.label(style, label)
	t.WriteString(body)
	t.WriteString("\n\n")
}

func joinStyle(a, b string) string {
	if b == "" {
		return a
	}
	return a + ";" + b
}

// block renders e: a rule with the title, a blank line, the content, an
// optional metrics line and a blank line. nil means nothing to show.
func (v *Visualizer) block(e event.Event) *text {
	title, color, metrics := "", "", false
	c := &text{color: v.color}
	switch e := e.(type) {
	case *event.SystemPromptEvent:
		title, color = "System Prompt", colorSystem
		c.WriteString(v.shorten(e.SystemPrompt.Text))
		if e.DynamicContext != nil && e.DynamicContext.Text != "" {
			c.WriteString("\n\n")
			c.WriteString(v.shorten(e.DynamicContext.Text))
		}
		if len(e.Tools) > 0 {
			names := make([]string, 0, len(e.Tools))
			for _, t := range e.Tools {
				names = append(names, cmpOr(t.Title, t.Kind))
			}
			c.WriteString("\n\n")
			c.styled(sBold, "Tools:")
			c.WriteString(" " + strings.Join(names, ", "))
		}
	case *event.MessageEvent:
		if v.opts.SkipUserMessages && e.Source == event.SourceUser {
			return nil
		}
		title, color = messageTitle(e.Source)
		metrics = e.Source == event.SourceAgent
		if e.LLMMessage.ReasoningContent != "" {
			c.section(colorThought, "Reasoning:", termtext.Strip(e.LLMMessage.ReasoningContent))
		}
		c.WriteString(v.markdownBold(contentText(e.LLMMessage.Content)))
		if ext := event.TextOf(e.ExtendedContent); ext != "" {
			c.WriteString("\n\n")
			c.section("", "Prompt extension:", termtext.Strip(ext))
		}
		if len(e.ActivatedSkills) > 0 {
			c.WriteString("\n\n")
			c.styled(sBold, "Activated skills:")
			c.WriteString(" " + strings.Join(e.ActivatedSkills, ", "))
		}
	case *event.ActionEvent:
		title, color, metrics = "Agent Action", colorAction, true
		if e.Action == nil {
			title = "Agent Action (Not Executed)"
		}
		v.action(c, e)
	case *event.ObservationEvent:
		title, color = "Observation", colorObservation
		c.styled(joinStyle(sBold, colorObservation), "Tool:")
		c.WriteString(" " + termtext.Strip(e.ToolName) + "\n")
		c.label(colorObservation, "Result:")
		body := "[no output]"
		if e.Observation != nil {
			if t := contentText(event.ObservationContent(e.Observation)); strings.TrimSpace(t) != "" {
				body = v.shorten(t)
			}
			if e.Observation.Obs().IsError {
				body = c.paint(colorError, body)
			}
		}
		c.WriteString(body)
		if ext := event.TextOf(e.ExtendedContent); ext != "" {
			c.WriteString("\n\n")
			c.section("", "Prompt extension:", termtext.Strip(ext))
		}
	case *event.UserRejectObservation:
		title, color = "User Rejected Action", colorError
		c.styled(sBold, "Tool:")
		c.WriteString(" " + termtext.Strip(e.ToolName) + "\n\n")
		c.label(colorError, "Rejection Reason:")
		c.WriteString(cmpOr(e.RejectionReason, event.DefaultRejectionReason))
	case *event.AgentErrorEvent:
		title, color, metrics = "Agent Error", colorError, true
		if e.ToolName != "" {
			c.styled(sBold, "Tool:")
			c.WriteString(" " + termtext.Strip(e.ToolName) + "\n\n")
		}
		c.label("", "Error:")
		c.WriteString(v.shorten(e.Error))
	case *event.ConversationErrorEvent:
		title, color = "Conversation Error", colorError
		c.styled(sBold, e.Code+":")
		c.WriteString(" " + v.shorten(e.Detail))
	case *event.PauseEvent:
		title, color = "User Paused", colorPause
		c.WriteString("Agent execution paused.")
	case *event.InterruptEvent:
		title, color = "User Interrupted", colorPause
		c.WriteString("Agent execution interrupted.")
	case *event.Condensation:
		title, color, metrics = "Condensation", sWhite, true
		fmt.Fprintf(c, "Forgot %d events.", len(e.ForgottenEventIDs))
		if e.Summary != nil && *e.Summary != "" {
			c.WriteString("\n\n")
			c.label("", "Summary:")
			c.WriteString(v.shorten(*e.Summary))
		}
	case *event.CondensationRequest:
		title, color = "Condensation Request", colorSystem
		c.WriteString("Condensation of the history requested.")
	case *event.HookExecutionEvent:
		title, color = "Hook", colorSystem
		status := "ok"
		switch {
		case e.Blocked:
			status = "blocked"
		case !e.Success:
			status = fmt.Sprintf("failed (exit code %d)", e.ExitCode)
		}
		fmt.Fprintf(c, "%s hook `%s`: %s", e.HookEventType, e.HookCommand, status)
		if r := cmpOr(e.Reason, e.Error); r != "" {
			c.WriteString("\n" + termtext.Strip(r))
		}
	case *event.ACPToolCallEvent:
		title, color = "ACP Tool Call", colorAction
		c.WriteString(termtext.Strip(e.Title))
		if e.Status != "" {
			c.WriteString(" [" + e.Status + "]")
		}
	case *event.SecurityAnalysisEvent:
		title, color = "Security Analysis", colorSystem
		fmt.Fprintf(c, "%s (policy %s): ", e.Analyzer, e.Policy)
		for i, r := range e.Risks {
			if i > 0 {
				c.WriteString(", ")
			}
			fmt.Fprintf(c, "%s: %s", r.ActionID[:min(8, len(r.ActionID))], r.Risk)
		}
		for _, d := range e.Details {
			var detail struct {
				Error string `json:"error"`
			}
			if event.UnmarshalJSON(d.Detail, &detail) == nil && detail.Error != "" {
				c.WriteString("\nThe analyzer failed (" + termtext.Strip(detail.Error) + "): every action counts as HIGH.")
				break
			}
		}
	default:
		// State updates, streaming deltas, token ids and completion logs
		// are for programs, not people.
		return nil
	}
	if strings.TrimSpace(c.String()) == "" {
		return nil
	}
	out := &text{color: v.color}
	out.styled(color, "── ")
	out.styled(joinStyle(sBold, color), title)
	out.styled(color, " "+strings.Repeat("─", max(3, v.opts.Width-4-len([]rune(title)))))
	out.WriteString("\n\n")
	out.WriteString(strings.TrimRight(c.String(), "\n"))
	out.WriteByte('\n')
	if metrics {
		if m := v.metricsLine(e); m != "" {
			out.WriteByte('\n')
			out.styled(sDim, m)
			out.WriteByte('\n')
		}
	}
	out.WriteByte('\n')
	return out
}

// boldSpan matches **text** within a line.
var boldSpan = regexp.MustCompile(`\*\*[^*\n]+\*\*`)

// markdownBold makes **text** bold when colouring, as the reference
// highlights it; the asterisks stay, so nothing the model wrote is lost.
func (v *Visualizer) markdownBold(s string) string {
	if !v.color {
		return s
	}
	return boldSpan.ReplaceAllStringFunc(s, func(m string) string { return "\x1b[1m" + m + "\x1b[22m" })
}

// paint returns s styled, for a value built before it is written.
func (t *text) paint(style, s string) string {
	p := &text{color: t.color}
	p.styled(style, s)
	return p.String()
}

func messageTitle(src event.Source) (title, color string) {
	switch src {
	case event.SourceAgent:
		return "Message from Agent", colorAction
	case event.SourceUser:
		return "Message from User", colorUser
	case event.SourceHook:
		return "Message from Hook", colorSystem
	}
	return "Message from Environment", colorSystem
}

// action writes an action's summary, reasoning, thought and the action
// itself.
func (v *Visualizer) action(c *text, e *event.ActionEvent) {
	if e.SecurityRisk != "" && e.SecurityRisk != event.RiskUnknown {
		style := sYellow
		switch e.SecurityRisk {
		case event.RiskHigh:
			style = sRed
		case event.RiskLow:
			style = sGreen
		}
		c.styled(joinStyle(sBold, style), "Predicted security risk: "+string(e.SecurityRisk))
		c.WriteString("\n\n")
	}
	if e.Summary != "" {
		c.styled(joinStyle(sBold, sCyan), "Summary:")
		c.WriteString(" " + termtext.Strip(e.Summary) + "\n\n")
	}
	if e.ReasoningContent != "" {
		c.section(colorThought, "Reasoning:", termtext.Strip(e.ReasoningContent))
	}
	if r := e.ResponsesItem; r != nil && len(r.Summary) > 0 {
		c.section(colorThought, "Reasoning summary:", termtext.Strip(strings.Join(r.Summary, "\n")))
	}
	var thought []string
	for _, t := range e.Thought {
		if t.Text != "" {
			thought = append(thought, t.Text)
		}
	}
	if len(thought) > 0 {
		c.section(colorThought, "Thought:", termtext.Strip(strings.Join(thought, " ")))
	}
	if e.Action == nil {
		c.label(colorAction, "Function call:")
		fmt.Fprintf(c, "- %s (%s)\n", termtext.Strip(e.ToolCall.Name), termtext.Strip(e.ToolCall.ID))
		if args := strings.TrimSpace(e.ToolCall.Arguments); args != "" {
			c.WriteByte('\n')
			c.label(colorAction, "Arguments:")
			c.WriteString(v.shorten(args))
		}
		return
	}
	if view := tool.PresentAction(e); view.Command != nil {
		commandLine(c, *view.Command, view.Notes)
		return
	}
	kind, _ := event.KindOf(e.Action)
	raw, err := event.MarshalJSON(e.Action)
	if err != nil {
		fmt.Fprintf(c, "Action: %s (cannot encode: %v)", kind, err)
		return
	}
	c.styled(joinStyle(sBold, colorAction), "Action:")
	c.WriteString(" " + cmpOr(kind, fmt.Sprintf("%T", e.Action)) + "\n\n")
	c.label(colorAction, "Arguments:")
	c.WriteString(v.arguments(raw))
}

// noteStyles colour the notes of a command line, as the reference does.
var noteStyles = map[tool.Tone]string{tool.ToneInfo: sCyan, tool.ToneNotice: sYellow, tool.ToneDanger: joinStyle(sBold, sRed)}

// commandLine writes the shell command an action runs as a prompt line
// with its notes.
func commandLine(c *text, command string, notes []tool.Note) {
	c.styled(joinStyle(sBold, sGreen), "$ ")
	if command == "" {
		c.styled(sItalic, "[empty command]")
	} else {
		c.WriteString(termtext.Strip(command))
	}
	for _, n := range notes {
		c.WriteString(" ")
		c.styled(noteStyles[n.Tone], termtext.Strip(n.Text))
	}
}

// arguments renders an action's JSON object one field a line, in the
// action's field order: strings as they are (multi-line ones indented),
// other values as JSON. Null fields and the kind are left out.
func (v *Visualizer) arguments(raw []byte) string {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "  " + v.shorten(string(raw))
	}
	var b strings.Builder
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			break
		}
		key, _ := t.(string)
		var val json.RawMessage
		if dec.Decode(&val) != nil {
			break
		}
		if key == "kind" || string(val) == "null" {
			continue
		}
		var s string
		if json.Unmarshal(val, &s) == nil {
			s = v.shorten(s)
			if strings.Contains(s, "\n") {
				fmt.Fprintf(&b, "  %s:\n    %s\n", key, strings.ReplaceAll(s, "\n", "\n    "))
				continue
			}
		} else {
			s = string(val)
		}
		fmt.Fprintf(&b, "  %s: %s\n", key, s)
	}
	return b.String()
}

// contentText returns the text of contents, with a note per image.
func contentText(cs []event.Content) string {
	var b strings.Builder
	for _, c := range cs {
		switch c.Type {
		case event.ContentImage:
			fmt.Fprintf(&b, "[%d image(s)]", len(c.ImageURLs))
		default:
			b.WriteString(termtext.Strip(c.Text))
		}
	}
	return b.String()
}

// shorten keeps the head and tail of a long text: MaxLines lines in all
// (two thirds head, one third tail), and at most maxChars characters.
func (v *Visualizer) shorten(s string) string {
	s = strings.TrimRight(termtext.Strip(s), "\n")
	n := v.opts.MaxLines
	if n < 0 {
		return s
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		head := max(1, n*2/3)
		tail := max(1, n-head)
		cut := len(lines) - head - tail
		lines = slices.Concat(lines[:head], []string{fmt.Sprintf("... [%d lines not shown] ...", cut)}, lines[len(lines)-tail:])
		s = strings.Join(lines, "\n")
	}
	if r := []rune(s); len(r) > maxChars {
		head := maxChars * 2 / 3
		tail := maxChars - head
		s = string(r[:head]) + fmt.Sprintf("\n... [%d characters not shown] ...\n", len(r)-head-tail) + string(r[len(r)-tail:])
	}
	return s
}

// metricsLine returns the token and cost line shown under LLM-made events:
// this request's numbers when the event's response can be matched to its
// usage (only the first action of a parallel batch claims them), and the
// conversation's totals.
func (v *Visualizer) metricsLine(e event.Event) string {
	respID := ""
	primary := true
	switch e := e.(type) {
	case *event.ActionEvent:
		respID = e.LLMResponseID
		primary = respID != v.lastRespID
		v.lastRespID = respID
	case *event.MessageEvent:
		respID = e.LLMResponseID
	case *event.Condensation:
		respID = e.LLMResponseID
	}
	if v.opts.Stats == nil {
		return ""
	}
	stats := v.opts.Stats()
	var total llm.TokenUsage
	var cost float64
	seen := false
	var req *llm.TokenUsage
	for _, id := range slices.Sorted(maps.Keys(stats)) {
		m := stats[id]
		if m == nil {
			continue
		}
		cost += m.AccumulatedCost
		if m.AccumulatedTokenUsage != nil {
			total.Add(*m.AccumulatedTokenUsage)
			seen = true
		}
		if primary && respID != "" && req == nil {
			for i := len(m.TokenUsages) - 1; i >= 0; i-- {
				if m.TokenUsages[i].ResponseID == respID {
					req = &m.TokenUsages[i]
					break
				}
			}
		}
	}
	if !seen {
		return ""
	}
	var in, cache, reasoning, out string
	showReasoning := total.ReasoningTokens > 0
	if req != nil {
		in = fmt.Sprintf("↑ input %s (total %s)", abbr(req.PromptTokens), abbr(total.PromptTokens))
		cache = fmt.Sprintf("cache hit %s (total %s)", rate(*req), rate(total))
		reasoning = fmt.Sprintf("reasoning %s (total %s)", abbr(req.ReasoningTokens), abbr(total.ReasoningTokens))
		out = fmt.Sprintf("↓ output %s (total %s)", abbr(req.CompletionTokens), abbr(total.CompletionTokens))
		showReasoning = showReasoning || req.ReasoningTokens > 0
	} else {
		in = fmt.Sprintf("↑ input (total %s)", abbr(total.PromptTokens))
		cache = fmt.Sprintf("cache hit (total %s)", rate(total))
		reasoning = fmt.Sprintf("reasoning (total %s)", abbr(total.ReasoningTokens))
		out = fmt.Sprintf("↓ output (total %s)", abbr(total.CompletionTokens))
	}
	costStr := "0.00"
	if cost > 0 {
		costStr = fmt.Sprintf("%.4f", cost)
	}
	parts := []string{in, cache}
	if showReasoning {
		parts = append(parts, reasoning)
	}
	parts = append(parts, out, "$ (total "+costStr+")")
	return "Tokens: " + strings.Join(parts, " • ")
}

// abbr writes a count with a K, M or B suffix and up to two decimals.
func abbr(n int) string {
	var val float64
	var suffix string
	switch {
	case n >= 1_000_000_000:
		val, suffix = float64(n)/1e9, "B"
	case n >= 1_000_000:
		val, suffix = float64(n)/1e6, "M"
	case n >= 1_000:
		val, suffix = float64(n)/1e3, "K"
	default:
		return fmt.Sprint(n)
	}
	s := strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", val), "0"), ".")
	return s + suffix
}

// rate formats the cache hit rate of u, "N/A" when there was no input.
func rate(u llm.TokenUsage) string {
	den := u.PromptTokens
	if u.CacheReadTokens > den {
		den += u.CacheReadTokens
	}
	if den <= 0 {
		return "N/A"
	}
	return fmt.Sprintf("%.2f%%", u.CacheHitRate()*100)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// JSONL writes each event as one line of JSON, exactly as it is persisted.
// It is safe for concurrent use.
type JSONL struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
	err error
}

// NewJSONL returns a JSONL writing to w.
func NewJSONL(w io.Writer) *JSONL { return &JSONL{w: w} }

// OnEvent writes e on a line of its own. An event that cannot be encoded
// is reported by Err, and the events after it are still written.
func (j *JSONL) OnEvent(e event.Event) {
	j.mu.Lock()
	defer j.mu.Unlock()
	b, err := event.Append(j.buf[:0], e)
	if err != nil {
		if j.err == nil {
			j.err = fmt.Errorf("visualizer: encode %s: %w", e.EventBase().ID, err)
		}
		return
	}
	j.buf = append(b, '\n')
	if _, err := j.w.Write(j.buf); err != nil && j.err == nil {
		j.err = err
	}
}

// Err returns the first error met.
func (j *JSONL) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}
