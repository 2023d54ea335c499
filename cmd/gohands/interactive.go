package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"
	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/gohands/gohands/cmd/gohands/internal/tui"
	"github.com/gohands/gohands/conversation/visualizer"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tools/preset"
	"github.com/gohands/gohands/workspace/docker"
)

// interactiveFlags are the root command's own flags.
type interactiveFlags struct {
	cont   bool
	resume string
	noTUI  bool
}

// pickConversation is --resume without an id: choose from a list.
const pickConversation = "\x00pick"

// optionalID is the value of --resume: an id, or pickConversation when
// the flag comes without one. pflag shows a string flag's stand-in value
// in the help (-r ID[="…"]); a flag of a bool-like type whose stand-in is
// "true" shows as -r ID.
type optionalID string

func (v *optionalID) String() string { return string(*v) }
func (v *optionalID) Type() string   { return "boolfunc" }
func (v *optionalID) Set(s string) error {
	if s == "true" {
		s = pickConversation
	}
	*v = optionalID(s)
	return nil
}

// interactive makes the root command the interactive mode: gohands, or
// gohands "task", opens the full-screen interface.
func (a *app) interactive(root *cobra.Command) {
	var f runFlags
	var o interactiveFlags
	root.Use = "gohands [flags] [TASK]"
	root.Args = cobra.ArbitraryArgs
	root.Example = `  gohands                         talk with the agent in this directory
  gohands "fix the failing test"  start with a task
  gohands -c                      continue the latest conversation here
  gohands -r                      pick a conversation of this directory to continue
  gohands --no-tui                the same in line mode, for dumb terminals
  gohands run "task"              run without interaction until done (scripts, CI)`
	root.RunE = func(cmd *cobra.Command, args []string) error {
		// One bare word is more likely a mistyped command than a task.
		if len(args) == 1 && regexp.MustCompile(`^[a-z][a-z-]*$`).MatchString(args[0]) && o.resume == "" {
			return usageErr("unknown command %q for \"gohands\" (a task is a sentence: gohands \"%s the …\")", args[0], args[0])
		}
		return a.interact(cmd.Context(), &f, &o, args)
	}
	fl := root.Flags()
	fl.BoolVarP(&o.cont, "continue", "c", false, "continue the latest conversation of this workspace")
	fl.VarP((*optionalID)(&o.resume), "resume", "r", "continue the conversation `ID` (a unique prefix will do); without an ID, pick one")
	fl.Lookup("resume").NoOptDefVal = "true"
	fl.BoolVar(&o.noTUI, "no-tui", false, "line mode: a prompt on standard input instead of the full-screen interface")
	fl.StringVar(&f.model, "model", "", "model, e.g. anthropic/claude-sonnet-4-5 (default $"+envModel+", then the settings)")
	fl.StringVar(&f.apiKey, "api-key", "", "the model provider's API key (default $"+envAPIKey+")")
	fl.StringVar(&f.baseURL, "base-url", "", "base URL of the model's API, for OpenAI-compatible servers (default $"+envBaseURL+")")
	fl.StringVar(&f.llmConfig, "llm-config", "", "JSON `file` with a full LLM configuration")
	addRetryFlags(fl, &f.retry)
	fl.StringVar(&f.workspace, "workspace", "", "`directory` the agent works in (default: the current directory)")
	fl.StringVar(&f.persistenceDir, "persistence-dir", "", "`directory` conversations are stored in (default $XDG_DATA_HOME/gohands/conversations)")
	fl.IntVar(&f.maxIterations, "max-iterations", 0, "maximum agent steps per message (default 500)")
	fl.StringArrayVar(&f.secrets, "secret", nil, "a secret for commands: `NAME=VALUE` or NAME (repeatable)")
	fl.StringVar(&f.mcpConfig, "mcp-config", "", "JSON `file` of MCP servers whose tools the agent gets")
	fl.StringVar(&f.confirm, "confirm", "", "which actions wait for your answer: `always` (the default here, or the settings' confirm), risky or never")
	fl.StringVar(&f.preset, "preset", preset.Default, "the agent: `NAME` of a preset, one of "+strings.Join(preset.Names(), ", "))
	fl.BoolVar(&f.browser, "browser", false, "give the agent a web browser (headless Chromium)")
	fl.BoolVar(&f.memory, "memory", false, "give the agent its memory (~/.openhands/memory/MEMORY.md and the workspace's .openhands/memory/MEMORY.md) and ask it to keep it")
	fl.StringVar(&f.server, "server", "", "run the agent on the agent server at this `URL` (gohands serve or the reference's); --workspace is then a directory on that server")
	fl.StringVar(&f.sessionKey, "session-key", "", "the agent server's session `key` (default $SESSION_API_KEY)")
	fl.StringVar(&f.sandbox, "sandbox", "", "run the agent in a sandbox: `docker` starts the agent server of a fresh container of the gohands image (scripts/image.sh) with the workspace mounted, on this machine's network; the conversation lives in the container")
	fl.StringVar(&f.sandboxImage, "image", "", "with --sandbox docker: the `image` (default $GOHANDS_IMAGE or "+docker.DefaultImage+")")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "log diagnostics")
}

// isTerminal reports whether v is a terminal.
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

func (a *app) interact(ctx context.Context, f *runFlags, o *interactiveFlags, args []string) error {
	task := strings.TrimSpace(strings.Join(args, " "))
	st, _, err := a.loadSettings()
	if err != nil {
		return err
	}
	base, err := a.persistenceDir(f.persistenceDir)
	if err != nil {
		return err
	}
	pick := false
	switch {
	case o.cont && o.resume != "":
		return usageErr("--continue and --resume cannot be used together")
	case o.resume == pickConversation:
		// -r ID is read as -r and a task: an id-looking task is the id.
		if len(args) == 1 && looksLikeID(args[0]) {
			o.resume, task = args[0], ""
		} else {
			pick = true
		}
	}
	if o.resume != "" && !pick {
		c, err := findConversation(base, o.resume)
		if err != nil {
			return usageErr("--resume: %v", err)
		}
		f.conversationID = c.ID
	}
	if o.cont {
		if f.conversationID, err = a.latestConversation(f, base, "gohands"); err != nil {
			return err
		}
	}
	if f.confirm == "" {
		// Interactive: ask before actions unless told otherwise.
		f.confirm = cmpOr(st.Confirm, "always")
	}

	lineMode := o.noTUI || !isTerminal(a.stdin) || !isTerminal(a.stdout) || a.getenv("TERM") == "dumb"
	if lineMode {
		if pick {
			return usageErr("--resume needs an ID in line mode (gohands ls lists them)")
		}
		return a.repl(ctx, f, task)
	}
	return a.fullScreen(ctx, f, st, task, pick)
}

// latestConversation is the id of the conversation of f's workspace
// updated last (-c); start says how to start one when there is none.
func (a *app) latestConversation(f *runFlags, base, start string) (string, error) {
	wd, err := a.workspace(f, convInfo{})
	if err != nil {
		return "", err
	}
	id, err := latestIn(base, wd)
	if err != nil {
		return "", &exitErr{code: exitError, msg: err.Error()}
	}
	if id == "" {
		return "", usageErr("no conversation to continue in %s: start one with %s", wd, start)
	}
	return id, nil
}

// latestIn is the id of the conversation of workspace wd updated last,
// "" for none.
func latestIn(base, wd string) (string, error) {
	infos, err := listConversations(base, func(string, error) {})
	if err != nil {
		return "", err
	}
	for _, c := range infos {
		if c.Workspace == wd {
			return c.ID, nil
		}
	}
	return "", nil
}

// looksLikeID reports whether s looks like a conversation id or a prefix
// of one.
func looksLikeID(s string) bool {
	if _, err := uuid.Parse(s); err == nil {
		return true
	}
	if len(s) < 4 || len(s) > 36 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef-", r) {
			return false
		}
	}
	return true
}

// lockedBuffer collects what would go to standard error while the
// full-screen interface owns the terminal.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (a *app) fullScreen(ctx context.Context, f *runFlags, st settings, task string, pick bool) error {
	// Diagnostics would tear the screen: keep them for the end.
	stderr := a.stderr
	logs := &lockedBuffer{}
	a.stderr = logs
	defer func() {
		a.stderr = stderr
		if logs.b.Len() > 0 {
			stderr.Write(logs.b.Bytes())
		}
	}()

	s := &session{a: a, f: *f, ctx: ctx}
	needSetup := f.model == "" && a.getenv(envModel) == "" && st.Model == "" && f.llmConfig == "" && f.conversationID == ""
	var past []event.Event
	if !needSetup {
		p, err := a.prepare(ctx, f)
		if err != nil {
			return err
		}
		interactiveAnalyzer(p)
		s.p = p
		if p.resume {
			conv, err := s.open()
			if err != nil {
				return &exitErr{code: exitError, msg: err.Error()}
			}
			if past, err = history(ctx, conv.State()); err != nil {
				return &exitErr{code: exitError, msg: err.Error()}
			}
		}
	}
	defer func() {
		if s.p != nil {
			s.p.close()
		}
	}()

	m := tui.New(s, &tui.Options{Task: task, History: past, Pick: pick, Setup: needSetup, Markdown: newMarkdown(a.getenv("NO_COLOR") != "")})
	// SIGINT or SIGTERM from outside (Ctrl-C is a key here) end the
	// interface as they end the other commands: the terminal restored,
	// the run paused and stored, the signal's exit status.
	sigCtx, stopSignals := a.stopOnSignal(ctx, "")
	defer stopSignals()
	prog := tea.NewProgram(m, tea.WithContext(sigCtx), tea.WithoutSignalHandler(), tea.WithInput(a.stdin), tea.WithOutput(a.stdout))
	s.onEvent = func(e event.Event) { prog.Send(tui.EventMsg{Event: e}) }
	s.onOutput = func(t string) { prog.Send(tui.OutputMsg{Text: t}) }
	a.onRetry = func(attempt, of int, wait time.Duration, err error) {
		prog.Send(tui.NoticeMsg{Text: fmt.Sprintf("Model call failed (attempt %d of %d), retrying in %s: %s",
			attempt, of, wait.Round(time.Millisecond), oneLine(err.Error()))})
	}
	if conv := s.current(); conv != nil {
		s.unsub = conv.Subscribe(s.onEvent)
	}
	_, runErr := prog.Run()
	id := ""
	if conv := s.current(); conv != nil {
		id = conv.ID()
	}
	closeErr := s.close()
	switch {
	case runErr != nil && !errors.Is(runErr, tea.ErrProgramKilled):
		return &exitErr{code: exitError, msg: runErr.Error()}
	case closeErr != nil:
		return &exitErr{code: exitError, msg: fmt.Sprintf("closing the conversation: %v", closeErr)}
	}
	if id != "" {
		// -c continues the conversation updated last, which after /resume
		// or /new may be another one.
		how := fmt.Sprintf("gohands -r %.8s", id)
		if latest, _ := latestIn(s.p.base, s.p.workDir); latest == id {
			how = "gohands -c (or " + how + ")"
		}
		fmt.Fprintf(logs, "gohands: conversation %s is kept; continue it with: %s\n", id, how)
	}
	if code, ok := stoppedStatus(sigCtx); ok {
		return &exitErr{code: code} // paused and stored by close
	}
	return nil
}

// repl is the line-mode interactive mode: a prompt on standard input,
// the transcript of gohands run, and confirmation questions as lines.
func (a *app) repl(ctx context.Context, f *runFlags, task string) error {
	p, err := a.prepare(ctx, f)
	if err != nil {
		return err
	}
	defer p.close()
	interactiveAnalyzer(p)
	tr := &transcript{w: a.stdout, lineStart: true, v: visualizer.New(a.stdout, nil)}
	s := &session{a: a, f: *f, p: p, ctx: ctx, onEvent: tr.onEvent, onOutput: tr.output}
	defer s.close()
	if p.resume {
		if _, err := s.open(); err != nil {
			return &exitErr{code: exitError, msg: err.Error()}
		}
		fmt.Fprintf(a.stderr, "gohands: continuing conversation %s in %s\n", p.id, p.workDir)
	}
	r := &lineREPL{a: a, s: s, in: &asker{in: a.stdin, out: a.stdout, done: make(chan struct{})}}
	defer r.in.close()
	done := make(chan struct{})
	defer close(done)
	go r.watchSignals(done)
	if task != "" {
		r.exchange(ctx, task, nil)
	}
	for {
		fmt.Fprint(a.stdout, "\n> ")
		var l line
		select {
		case l = <-r.in.readLines():
		case <-ctx.Done():
			return nil
		}
		text := strings.TrimSpace(l.text)
		switch {
		case text == "" && l.err != nil:
			fmt.Fprintln(a.stdout)
			return nil
		case text == "":
		case text == "/exit" || text == "/quit":
			return nil
		case strings.HasPrefix(text, "/"):
			if !r.command(ctx, text) {
				return nil
			}
		default:
			r.exchange(ctx, text, nil)
		}
		if l.err != nil {
			return nil
		}
	}
}

// lineREPL is the state of the line-mode prompt.
type lineREPL struct {
	a  *app
	s  *session
	in *asker

	mu    sync.Mutex
	busy  bool               // a run goes on
	unask context.CancelFunc // set while a question waits
}

// watchSignals handles interrupts until done closes: one pauses a run, or
// leaves a question unanswered; at the prompt it leaves.
func (r *lineREPL) watchSignals(done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-r.a.signals:
			r.mu.Lock()
			b, q := r.busy, r.unask
			r.mu.Unlock()
			if q != nil {
				q()
				continue
			}
			if b {
				fmt.Fprintln(r.a.stderr, "gohands: pausing")
				r.s.Pause()
				continue
			}
			r.a.exit(exitOK)
			return
		}
	}
}

func (r *lineREPL) setBusy(b bool) {
	r.mu.Lock()
	r.busy = b
	r.mu.Unlock()
}

// exchange sends a message (or answers waiting actions) and runs until the
// agent stops, asking what needs an answer.
func (r *lineREPL) exchange(ctx context.Context, text string, answer *tui.Answer) {
	a, s := r.a, r.s
	r.setBusy(true)
	defer r.setBusy(false)
	var o tui.Outcome
	later := "" // a message held until waiting actions are answered
	if answer != nil {
		o = s.Answer(ctx, *answer)
	} else if o = s.Send(ctx, text); o.NotSent {
		later = text
	}
	for {
		if o.Err != nil {
			fmt.Fprintf(a.stdout, "\nerror: %v\n", o.Err)
		}
		switch {
		case o.Status == "waiting_for_confirmation":
			qctx, cancel := context.WithCancel(ctx)
			r.mu.Lock()
			r.unask = cancel
			r.mu.Unlock()
			ans, ok := a.replConfirm(qctx, r.in, o)
			r.mu.Lock()
			r.unask = nil
			r.mu.Unlock()
			cancel()
			if !ok {
				// Interrupted or Ctrl-D: nothing runs, nothing is
				// rejected; the next message asks again first.
				fmt.Fprintln(a.stdout, "\n(paused: the actions still wait for your answer; type to continue, /exit to leave)")
				if later != "" {
					fmt.Fprintf(a.stdout, "(not sent: %s)\n", oneLine(later))
				}
				return
			}
			o = s.Answer(ctx, ans)
			continue
		case later != "" && o.Err == nil:
			o, later = s.Send(ctx, later), ""
			continue
		case o.Status == "paused":
			fmt.Fprintln(a.stdout, "\n(paused: type to continue)")
		}
		return
	}
}

// command runs a slash command; false when the input ended meanwhile.
func (r *lineREPL) command(ctx context.Context, text string) bool {
	a, s := r.a, r.s
	switch {
	case text == "/help":
		fmt.Fprintln(a.stdout, "Type a message, or /new /resume ID /settings /model /confirm /condense /skills /mcp /cost /exit.")
		return true
	case text == "/new":
		if err := s.New(); err != nil {
			fmt.Fprintf(a.stdout, "error: %v\n", err)
		}
		return true
	case strings.HasPrefix(text, "/resume"):
		r.resume(strings.TrimSpace(strings.TrimPrefix(text, "/resume")))
		return true
	}
	name, arg, _ := strings.Cut(strings.TrimPrefix(text, "/"), " ")
	out, err := s.Command(ctx, name, strings.TrimSpace(arg))
	var q *tui.Question
	if errors.As(err, &q) {
		fmt.Fprintf(a.stdout, "%s ", q.Prompt)
		var l line
		select {
		case l = <-r.in.readLines():
		case <-ctx.Done():
			return false
		}
		if answer := strings.TrimSpace(l.text); answer == "" {
			out, err = "Cancelled.", nil
		} else {
			out, err = q.Answer(ctx, answer)
		}
	}
	switch {
	case err != nil:
		fmt.Fprintf(a.stdout, "error: %v\n", err)
	case out != "":
		fmt.Fprintln(a.stdout, out)
	}
	return true
}

// resume lists the conversations (no id) or continues one.
func (r *lineREPL) resume(id string) {
	a, s := r.a, r.s
	if id == "" {
		list, _ := s.Conversations()
		for _, c := range list {
			fmt.Fprintf(a.stdout, "%.8s  %-8s %-11s %s\n", c.ID, c.Status, c.Updated, clip(c.Title, 50))
		}
		fmt.Fprintln(a.stdout, "/resume ID continues one of them.")
		return
	}
	if _, err := s.Resume(id); err != nil {
		fmt.Fprintf(a.stdout, "error: %v\n", err)
	} else {
		fmt.Fprintf(a.stdout, "Resumed %s.\n", s.p.id)
	}
}

// replConfirm asks about waiting actions on a line; false when the input
// ended.
func (a *app) replConfirm(ctx context.Context, in *asker, o tui.Outcome) (tui.Answer, bool) {
	hidden := printPending(a.stdout, o.Pending, linePreview)
	always := "[a]lways in this session"
	if o.Always != "" {
		always = "[a]lways for " + o.Always + " in this session"
	}
	show := ""
	if hidden {
		show = " / [d] show all"
	}
	for {
		fmt.Fprintf(a.stdout, "Run? [y]es / [n]o / %s / [r] auto (ask only for high risk)%s: ", always, show)
		var l line
		select {
		case l = <-in.readLines():
		case <-ctx.Done():
			return tui.AnswerNo, false
		}
		switch strings.ToLower(strings.TrimSpace(l.text)) {
		case "y", "yes":
			return tui.AnswerYes, true
		case "n", "no":
			return tui.AnswerNo, true
		case "a", "always":
			return tui.AnswerAlways, true
		case "r", "auto":
			return tui.AnswerAuto, true
		case "d":
			printPending(a.stdout, o.Pending, -1)
			continue
		}
		if l.err != nil {
			fmt.Fprintln(a.stdout)
			return tui.AnswerNo, false
		}
		fmt.Fprintln(a.stdout, "Please answer y, n, a or r.")
	}
}
