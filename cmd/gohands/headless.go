package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/cmd/gohands/internal/tui"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/conversation/goal"
	"github.com/gohands/gohands/conversation/open"
	"github.com/gohands/gohands/conversation/visualizer"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/termtext"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/terminal"
)

// transcript writes a run for people: the visualizer's blocks, with the
// model's text streamed as it is written and a command's output as it
// runs, each shown once.
type transcript struct {
	mu       sync.Mutex
	w        io.Writer
	v        *visualizer.Visualizer
	streamed bool // text was streamed since the last event
	live     bool // command output was shown since the last event
	// remote: commands run on an agent server, whose output is not
	// streamed here; it is shown when the command ends, in the form live
	// output takes, so that the run looks as it does locally.
	remote    bool
	lineStart bool
	err       error
	// runErr is the conversation's error event, held back: the run's end
	// prints it once, with its hint.
	runErr *event.ConversationErrorEvent

	// The waiting indicator (see showWaiting).
	waitW     io.Writer
	waitShown bool
	held      bool
	last      time.Time
}

func (t *transcript) write(s string) {
	if t.err != nil || s == "" {
		return
	}
	_, t.err = io.WriteString(t.w, s)
	t.lineStart = strings.HasSuffix(s, "\n")
}

// onEvent renders one event of the conversation (from its subscription,
// deltas included).
func (t *transcript) onEvent(e event.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.clearWaiting()
	switch e := e.(type) {
	case *event.StreamingDeltaEvent:
		if e.Content != nil {
			t.streamed = true
			t.write(termtext.Strip(*e.Content))
		}
		return
	case *event.SystemPromptEvent:
		return // the same every run; gohands show prints it
	case *event.ConversationErrorEvent:
		t.runErr = e
		return
	case *event.ConversationStateUpdateEvent:
		// A state change between the streamed thought and its action
		// (the stats saved after each model call) shows nothing, so the
		// thought stays streamed.
		t.v.OnEvent(e)
		return
	case *event.SecurityAnalysisEvent:
		// A rating at every step, LOW mostly: what it changes (a
		// question, a refusal) is shown where it happens.
		return
	case *event.MessageEvent:
		if t.streamed && e.Source == event.SourceAgent {
			t.streamed = false
			t.write("\n\n")
			return
		}
	case *event.ActionEvent:
		if t.streamed {
			// The thought was streamed already: show the action alone.
			c := *e
			c.Thought = nil
			c.ReasoningContent = ""
			t.streamed = false
			t.write("\n\n")
			t.v.OnEvent(&c)
			return
		}
	case *event.ObservationEvent:
		if o, ok := e.Observation.(*terminal.Observation); ok && t.remote && !t.live && o.ExitCode != nil {
			t.live = true
			if out := termtext.Strip(o.Text()); out != "" {
				t.write(out)
			}
		}
		if t.live {
			t.live = false
			if !t.lineStart {
				t.write("\n")
			}
			if o, ok := e.Observation.(*terminal.Observation); ok && o.ExitCode != nil {
				t.write(fmt.Sprintf("[exit code %d]\n\n", *o.ExitCode))
			} else {
				t.write("\n")
			}
			return
		}
	}
	t.streamed = false
	t.v.OnEvent(e)
}

// output shows a running command's output.
func (t *transcript) output(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.clearWaiting()
	t.live = true
	t.write(termtext.Strip(s))
}

// runResult is the last record --json prints: the outcome of the run.
type runResult struct {
	Type             string  `json:"type"` // "result"
	Status           string  `json:"status"`
	ConversationID   string  `json:"conversation_id"`
	FinalMessage     string  `json:"final_message"`
	Error            string  `json:"error,omitempty"`
	Steps            int     `json:"steps"`
	Cost             float64 `json:"cost"`
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	DurationMS       int64   `json:"duration_ms"`
	Workspace        string  `json:"workspace"`
	// Refused lists the HIGH risk actions refused unasked (--confirm
	// never without --allow-high-risk).
	Refused []refusedAction `json:"refused,omitempty"`
}

// headlessRun is one `gohands run`: what its steps share.
type headlessRun struct {
	a    *app
	f    *runFlags
	p    *prepared
	task string
	// images are the --attach-image images, sent with the task.
	images []string
	start  time.Time
	// refuseHigh: nobody answers questions, and HIGH risk actions are
	// refused rather than run.
	refuseHigh bool
	refused    []refusedAction

	tr    *transcript // nil with --json
	jsonl *visualizer.JSONL
	ask   *asker

	runCtx      context.Context
	conv        conversation.Conversation
	sent        bool   // the task was stored with the conversation's creation
	steps0      int    // events before this run
	keyFrom     string // where the agent server's session key came from
	unsubscribe func()
}

func (a *app) run(ctx context.Context, f *runFlags, args []string) error {
	start := time.Now()
	task, err := a.readTask(args)
	if err != nil {
		return err
	}
	if err := a.checkRunTask(f, task); err != nil {
		return err
	}
	if err := checkRunFlags(f); err != nil {
		return err
	}
	if len(f.images) > 0 && task == "" {
		return usageErr("--attach-image goes with a task: give one")
	}
	images, err := readImages(f.images)
	if err != nil {
		return err
	}
	p, err := a.prepare(ctx, f)
	if err != nil {
		return err
	}
	defer p.close()
	if task == "" && !p.resume && f.server == "" {
		return usageErr("no conversation %s in %s, and no task to start one", p.id, p.base)
	}
	r := &headlessRun{a: a, f: f, p: p, task: task, images: images, start: start, unsubscribe: func() {}}
	r.refuseHigh = p.confirm == "never" && !f.allowHighRisk
	if r.refuseHigh {
		p.policy, p.analyzer = refuseHighPolicy(p.workDir, slices.Sorted(maps.Keys(p.sources)))
		if p.stored.analyzer {
			// A resumed conversation keeps its own analyzer (one the
			// reference wrote, say: it reads it back), and its policy
			// if that makes actions wait; what waits is refused if
			// HIGH (refuse rates it with the rules too).
			p.analyzer = nil
			if p.stored.asks {
				p.policy = nil
			}
		}
	}
	r.setOutput()
	defer r.ask.close()

	// The first SIGINT or SIGTERM cancels runCtx, which pauses the
	// conversation (even before Run has started); the second quits at once.
	runCtx, stopSignals := a.stopOnSignal(ctx, "pausing the conversation")
	defer stopSignals()
	r.runCtx = runCtx
	if err := r.open(ctx); err != nil {
		return err
	}
	r.attach()
	stopWaiting := r.startWaiting()
	defer stopWaiting()
	runErr := r.drive()
	stopWaiting()
	r.unsubscribe()
	return r.finish(ctx, runErr)
}

// checkRunFlags refuses flags that would do nothing in this run rather
// than ignore them.
func checkRunFlags(f *runFlags) error {
	switch {
	case f.sandboxImage != "":
		return usageErr("--image is the image of --sandbox docker; give both")
	case f.server != "" && f.maxBudget > 0:
		// Neither agent server takes a per-run budget in its start
		// request (the reference 1.58.2 has no such field).
		return usageErr("--max-budget cannot be used with --server: the agent server keeps no per-run budget")
	case f.acp != "" && len(f.plugins) > 0:
		return usageErr("--plugin cannot be used with --acp: the ACP server brings its own skills and tools")
	case f.goal > 0 && len(f.images) > 0:
		return usageErr("--attach-image cannot be used with --goal: a goal is text")
	case f.server != "" && f.moveWorkspace:
		return usageErr("--move-workspace cannot be used with --server: the agent server keeps a conversation in its workspace")
	}
	return nil
}

// checkRunTask finds the conversation -c continues, and refuses a run
// with nothing to do, before the model's configuration is checked.
func (a *app) checkRunTask(f *runFlags, task string) error {
	if f.cont {
		switch {
		case f.conversationID != "":
			return usageErr("-c and --conversation-id cannot be used together")
		case f.server != "":
			return usageErr("-c continues a conversation stored on this machine; with --server, give --conversation-id")
		}
		base, err := a.persistenceDir(f.persistenceDir)
		if err != nil {
			return err
		}
		if f.conversationID, err = a.latestConversation(f, base, `gohands run "TASK"`); err != nil {
			return err
		}
	}
	if task == "" && f.conversationID == "" {
		return usageErr("no task given: gohands run [flags] TASK")
	}
	if task != "" || f.server != "" {
		return nil
	}
	base, err := a.persistenceDir(f.persistenceDir)
	if err != nil {
		return err
	}
	if u, err := uuid.Parse(f.conversationID); err == nil {
		if _, ok, _ := storedConversation(base, u.String()); !ok {
			return usageErr("no conversation %s in %s, and no task to start one", u, base)
		}
	}
	return nil
}

// setOutput sets where the run is shown (a transcript, or JSON lines with
// --json) and who answers questions.
func (r *headlessRun) setOutput() {
	a, p := r.a, r.p
	if r.f.json {
		r.jsonl = visualizer.NewJSONL(a.stdout)
	} else {
		model := p.model
		vopts := &visualizer.Options{}
		if model != nil {
			vopts.Stats = func() map[string]*llm.Metrics {
				m := model.Metrics()
				return map[string]*llm.Metrics{model.UsageID(): &m}
			}
		}
		r.tr = &transcript{w: a.stdout, lineStart: true, v: visualizer.New(a.stdout, vopts), remote: r.f.server != ""}
	}
	prompt := a.stdout
	if r.f.json {
		prompt = a.stderr
	}
	r.ask = &asker{in: a.stdin, out: prompt, done: make(chan struct{})}
	r.ask.analyzer, r.ask.workDir = p.analyzer, p.workDir
	if r.ask.analyzer == nil {
		// The question shows a risk, and an "always" answer never
		// covers HIGH risk: rate with the rules too.
		_, r.ask.analyzer, _ = confirmPolicy("risky", p.workDir, slices.Sorted(maps.Keys(p.sources)))
	}
}

// open creates or resumes the conversation, here or on the agent server.
func (r *headlessRun) open(ctx context.Context) error {
	f, p := r.f, r.p
	opts := &conversation.LocalOptions{
		ID:              p.id,
		Backend:         filestore.NewBackend(p.base, nil),
		MaxIterations:   f.maxIterations,
		MaxBudgetPerRun: f.maxBudget,
		Secrets:         p.sources,
		Logger:          p.logger,
		// Deltas come in bursts; a transcript never drops them.
		SubscriberBuffer:   1 << 16,
		ConfirmationPolicy: p.policy,
		SecurityAnalyzer:   p.analyzer,
		Profiles:           p.profiles,
		HookConfig:         p.hookConfig,
		Plugins:            p.plugins,
		// The default's ratings are bookkeeping, and the reference cannot
		// read them: the refusals are what is stored.
		OmitSecurityAnalysis: r.refuseHigh && !p.stored.analyzer,
	}
	if r.jsonl != nil {
		opts.OnEvent = r.jsonl.OnEvent
	}
	if r.task != "" && (!p.resume || p.creating) && f.server == "" && f.goal == 0 {
		// Stored with the conversation's creation: a kill in between
		// cannot leave a conversation without its task. (A goal's
		// objective is sent by the goal loop.)
		m := taskMessage(r.task, r.images)
		opts.FirstMessage, r.sent = &m, true
	}
	ws, keyFrom, err := r.a.conversationWorkspace(ctx, f, p)
	if err != nil {
		return err
	}
	r.keyFrom = keyFrom
	r.conv, err = open.Conversation(ctx, p.agent, ws, opts)
	if err != nil {
		if errors.Is(err, conversation.ErrLocked) {
			return &exitErr{code: exitError, msg: fmt.Sprintf("conversation %s is in use by another process", p.id)}
		}
		msg := err.Error()
		if h := sessionKeyHint(err, r.keyFrom); h != "" {
			msg += " — " + h
		}
		return &exitErr{code: exitError, msg: msg}
	}
	return nil
}

// attach subscribes the transcript, restores the model's metrics and says
// which conversation runs.
func (r *headlessRun) attach() {
	conv, p := r.conv, r.p
	if r.tr != nil {
		if r.sent {
			// New stored the task before anyone could subscribe, and
			// nothing runs yet: show what it stored.
			log := conv.State().Events()
			for i := range log.Len() {
				if e, err := log.Event(r.runCtx, i); err == nil {
					r.tr.onEvent(e)
				}
			}
		}
		r.subscribe()
		r.runCtx = tool.WithOutput(r.runCtx, r.tr.output)
	}
	if p.model != nil {
		if m := conv.State().Fields().Stats.UsageToMetrics[p.model.UsageID()]; m != nil {
			p.model.RestoreMetrics(*m)
		}
	}
	verb := "starting"
	if p.resume {
		verb = "continuing"
	}
	fmt.Fprintf(r.a.stderr, "gohands: %s conversation %s in %s\n", verb, conv.ID(), p.workDir)
	r.steps0 = conv.State().Events().Len()
}

func (r *headlessRun) subscribe() {
	if r.tr != nil {
		r.unsubscribe = r.conv.Subscribe(r.tr.onEvent)
	}
}

// startWaiting shows the waiting indicator on a terminal; the function
// returned stops it (and may be called again).
func (r *headlessRun) startWaiting() func() {
	a := r.a
	if r.tr == nil || !isTerminal(a.stderr) || a.getenv("TERM") == "dumb" {
		return func() {}
	}
	waitDone := make(chan struct{})
	waitEnded := make(chan struct{})
	go func() {
		defer close(waitEnded)
		r.tr.showWaiting(a.stderr, waitDone)
	}()
	return sync.OnceFunc(func() {
		close(waitDone)
		<-waitEnded
	})
}

// drive sends the task and runs the conversation, answering its questions
// (or refusing HIGH risk actions) until it stops.
func (r *headlessRun) drive() error {
	conv, p := r.conv, r.p
	if r.f.goal > 0 && r.task != "" && !r.sent {
		return r.runGoal()
	}
	if r.task != "" && !r.sent {
		if err := conv.SendMessage(r.runCtx, taskMessage(r.task, r.images)); err != nil {
			return err
		}
	}
	// A resumed conversation may already wait: ask before running,
	// since running approves.
	asking := (p.confirm != "never" || r.refuseHigh) && conv.Status() == conversation.StatusWaitingForConfirmation
	for {
		if !asking {
			if err := conv.Run(r.runCtx); err != nil {
				return err
			}
			if conv.Status() != conversation.StatusWaitingForConfirmation || p.confirm == "never" && !r.refuseHigh {
				return nil
			}
		}
		asking = false
		pending, err := conv.State().PendingActions()
		if err != nil {
			return err
		}
		if p.confirm == "never" {
			if err := r.refuse(pending); err != nil {
				return err
			}
			continue
		}
		if stop, err := r.question(pending); stop || err != nil {
			return err
		}
	}
}

func (r *headlessRun) runGoal() error {
	out, err := goal.Run(r.runCtx, r.conv, r.task, &goal.Options{MaxIterations: r.f.goal})
	if err != nil {
		return err
	}
	fmt.Fprintf(r.a.stderr, "gohands: goal %s after %d judged run(s) (score %.2f)\n", out.Status, out.Iterations, out.Verdict.Score)
	return nil
}

// refuse rejects the HIGH risk actions among pending (nobody is asked);
// the others run when the run goes on, since running approves them.
func (r *headlessRun) refuse(pending []*event.ActionEvent) error {
	these, reason := refusal(r.runCtx, r.ask.analyzer, pending)
	if len(these) == 0 {
		return nil
	}
	r.refused = append(r.refused, these...)
	for _, x := range these {
		fmt.Fprintf(r.a.stderr, "gohands: refused %s `%s` (risk %s): HIGH risk actions do not run unattended (--allow-high-risk runs them)\n", x.Tool, x.Action, x.Risk)
	}
	return r.conv.RejectPendingActions(r.runCtx, reason)
}

// question asks the user about pending (unless an earlier answer covers
// them); stop says the run ends here, waiting for confirmation.
func (r *headlessRun) question(pending []*event.ActionEvent) (stop bool, err error) {
	if r.ask.allowed(r.runCtx, pending) {
		return false, nil // running approves them
	}
	r.unsubscribe() // the transcript is complete before the question
	if r.tr != nil {
		r.tr.hold(true)
	}
	ans, err := r.ask.ask(r.runCtx, pending)
	if r.tr != nil {
		r.tr.hold(false)
	}
	r.subscribe()
	if err != nil {
		if errors.Is(err, errNoAnswer) {
			return true, nil // the status tells: waiting for confirmation
		}
		return true, err
	}
	if ans == answerNo {
		if err := r.conv.RejectPendingActions(r.runCtx, ""); err != nil {
			return true, err
		}
	}
	return false, nil
}

// finish closes the conversation and reports the run: the --json result or
// the summary line, and the exit status.
func (r *headlessRun) finish(ctx context.Context, runErr error) error {
	a, conv, p := r.a, r.conv, r.p
	id := conv.ID()
	status := conv.Status()
	st := conv.State()
	final, _ := agent.FinalResponse(ctx, st)
	res := runResult{
		Type: "result", Status: string(status), ConversationID: id,
		FinalMessage: final, Steps: conversation.AgentSteps(ctx, st.Events(), r.steps0),
		DurationMS: time.Since(r.start).Milliseconds(), Workspace: p.workDir,
	}
	res.Refused = r.refused
	stats := liveStats(st.Fields().Stats, p.model)
	res.Cost = stats.TotalCost()
	res.PromptTokens, res.CompletionTokens = stats.Tokens()
	closeErr := conv.Close()
	if r.jsonl != nil {
		if err := r.jsonl.Err(); err != nil && !errors.Is(err, os.ErrClosed) {
			fmt.Fprintf(a.stderr, "gohands: writing events: %v\n", err)
		}
	} else if r.tr.err != nil && !errors.Is(r.tr.err, os.ErrClosed) {
		fmt.Fprintf(a.stderr, "gohands: writing the transcript: %v\n", r.tr.err)
	}
	out := r.outcome(status, runErr, closeErr)
	var ee *exitErr
	if errors.As(out, &ee) {
		res.Error = ee.msg
	}
	if r.f.json {
		b, _ := json.Marshal(res)
		fmt.Fprintf(a.stdout, "%s\n", b)
	} else {
		fmt.Fprintf(a.stderr, "gohands: %s · %d steps · %s tokens · $%.4f · %s · %s\n",
			res.Status, res.Steps, tui.TokenCount(res.PromptTokens+res.CompletionTokens), res.Cost,
			time.Duration(res.DurationMS)*time.Millisecond, id)
		if out == nil && asks(final) {
			fmt.Fprintf(a.stderr, "gohands: the agent asks you something; answer with: %s \"ANSWER\"\n", r.answerHint())
		}
	}
	return out
}

// asks reports whether the agent's last message ends with a question.
func asks(final string) bool {
	return strings.HasSuffix(strings.TrimRight(final, " \t\r\n*_`"), "?")
}

// answerHint is the command that sends the conversation a message: -c
// when the flags given are all it needs.
func (r *headlessRun) answerHint() string {
	if r.f.workspace == "" && r.f.persistenceDir == "" && r.f.server == "" {
		return "gohands run -c"
	}
	return r.resumeHint()
}

// resumeHint is the command that continues the conversation.
func (r *headlessRun) resumeHint() string {
	hint := "gohands run --conversation-id " + r.conv.ID()
	if r.f.server != "" {
		hint += " --server " + r.f.server
	}
	if r.f.persistenceDir != "" {
		hint += " --persistence-dir " + r.p.base
	}
	return hint
}

// outcome is the run's exit error (nil when it finished cleanly).
func (r *headlessRun) outcome(status conversation.ExecutionStatus, runErr, closeErr error) error {
	var re *conversation.RunError
	switch {
	case status == conversation.StatusFinished && runErr == nil:
		switch {
		case closeErr != nil:
			return &exitErr{code: exitError, msg: fmt.Sprintf("closing the conversation: %v", closeErr)}
		case len(r.refused) > 0:
			return &exitErr{code: exitRefused, msg: fmt.Sprintf("finished, but %d HIGH risk action(s) were refused (run with --allow-high-risk, --confirm risky or --confirm always to run them)", len(r.refused))}
		}
		return nil
	case status == conversation.StatusPaused:
		why, code := "paused", exitPaused
		if c, ok := stoppedStatus(r.runCtx); ok {
			why, code = "paused by interrupt", c
			if c == exitTerminated {
				why = "paused by SIGTERM"
			}
		}
		return &exitErr{code: code, msg: fmt.Sprintf("%s; continue with: %s", why, r.resumeHint())}
	case status == conversation.StatusWaitingForConfirmation:
		return &exitErr{code: exitConfirmation, msg: "actions are waiting for confirmation; continue with: " + r.resumeHint()}
	case errors.As(runErr, &re):
		code := exitError
		switch {
		case re.Status == conversation.StatusStuck:
			code = exitStuck
		case re.Code == conversation.CodeMaxIterations:
			code = exitMaxIter
		}
		msg := fmt.Sprintf("%s: %s: %s", re.Status, re.Code, oneLine(re.Detail))
		if h := r.p.hint(runErr); h != "" {
			msg += " — " + h
		}
		return &exitErr{code: code, msg: msg}
	case runErr != nil:
		msg := oneLine(runErr.Error())
		if h := cmpOr(r.p.hint(runErr), sessionKeyHint(runErr, r.keyFrom)); h != "" {
			msg += " — " + h
		}
		if c, ok := stoppedStatus(r.runCtx); ok {
			return &exitErr{code: c, msg: "interrupted: " + msg}
		}
		return &exitErr{code: exitError, msg: msg}
	}
	msg := fmt.Sprintf("the run stopped with status %s; continue with: %s", status, r.resumeHint())
	if r.tr != nil && r.tr.runErr != nil {
		e := r.tr.runErr
		msg = fmt.Sprintf("%s: %s: %s", status, e.Code, oneLine(e.Detail))
	}
	return &exitErr{code: exitError, msg: msg}
}

// liveStats is the conversation's stats with the model's own metrics in
// place of its stored entry when they are ahead: the state is saved with
// them when a run finishes, not when it stops at a question or the step
// limit. The model's metrics start from the stored ones (RestoreMetrics).
func liveStats(stats conversation.Stats, model *llm.LLM) conversation.Stats {
	if model == nil {
		return stats
	}
	m := model.Metrics()
	if m.AccumulatedTokenUsage == nil {
		return stats
	}
	if old := stats.UsageToMetrics[model.UsageID()]; old != nil && old.AccumulatedTokenUsage != nil &&
		old.AccumulatedTokenUsage.PromptTokens+old.AccumulatedTokenUsage.CompletionTokens >=
			m.AccumulatedTokenUsage.PromptTokens+m.AccumulatedTokenUsage.CompletionTokens {
		return stats
	}
	out := conversation.Stats{UsageToMetrics: event.Map[string, *llm.Metrics]{}}
	maps.Copy(out.UsageToMetrics, stats.UsageToMetrics)
	out.UsageToMetrics[model.UsageID()] = &m
	return out
}
