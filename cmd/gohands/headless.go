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
	"github.com/gohands/gohands/conversation/remote"
	"github.com/gohands/gohands/conversation/visualizer"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/termtext"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/terminal"
	"github.com/gohands/gohands/workspace"
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

func (a *app) run(ctx context.Context, f *runFlags, args []string) error {
	start := time.Now()
	task, err := a.readTask(args)
	if err != nil {
		return err
	}
	if task == "" && f.conversationID == "" {
		return usageErr("no task given: gohands run [flags] TASK")
	}
	if task == "" && f.server == "" {
		// Said before the model's configuration is checked.
		base, err := a.persistenceDir(f.persistenceDir)
		if err != nil {
			return err
		}
		if u, err := uuid.Parse(f.conversationID); err == nil {
			if _, ok, _ := storedConversation(base, u.String()); !ok {
				return usageErr("no conversation %s in %s, and no task to start one", u, base)
			}
		}
	}
	p, err := a.prepare(ctx, f)
	if err != nil {
		return err
	}
	defer p.close()
	if task == "" && !p.resume && f.server == "" {
		return usageErr("no conversation %s in %s, and no task to start one", p.id, p.base)
	}
	// Nobody answers questions: HIGH risk actions are refused rather than
	// run, unless the user said otherwise.
	refuseHigh := p.confirm == "never" && !f.allowHighRisk
	if refuseHigh {
		p.policy, p.analyzer = refuseHighPolicy(p.workDir, slices.Sorted(maps.Keys(p.sources)))
	}
	var refused []refusedAction

	var tr *transcript
	var jsonl *visualizer.JSONL
	if f.json {
		jsonl = visualizer.NewJSONL(a.stdout)
	} else {
		model := p.model
		vopts := &visualizer.Options{}
		if model != nil {
			vopts.Stats = func() map[string]*llm.Metrics {
				m := model.Metrics()
				return map[string]*llm.Metrics{model.UsageID(): &m}
			}
		}
		tr = &transcript{w: a.stdout, lineStart: true, v: visualizer.New(a.stdout, vopts), remote: f.server != ""}
	}
	prompt := a.stdout
	if f.json {
		prompt = a.stderr
	}
	ask := &asker{in: a.stdin, out: prompt, done: make(chan struct{})}
	defer ask.close()
	ask.analyzer, ask.workDir = p.analyzer, p.workDir
	if ask.analyzer == nil {
		// The question shows a risk, and an "always" answer never
		// covers HIGH risk: rate with the rules too.
		_, ask.analyzer, _ = confirmPolicy("risky", p.workDir, slices.Sorted(maps.Keys(p.sources)))
	}

	// The first SIGINT or SIGTERM cancels runCtx, which pauses the
	// conversation (even before Run has started); the second quits at once.
	runCtx, stopSignals := a.stopOnSignal(ctx, "pausing the conversation")
	defer stopSignals()

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
		// The default's ratings are bookkeeping, and the reference cannot
		// read them: the refusals are what is stored.
		OmitSecurityAnalysis: refuseHigh,
	}
	if jsonl != nil {
		opts.OnEvent = jsonl.OnEvent
	}
	sent := false
	if task != "" && (!p.resume || p.creating) && f.server == "" && f.goal == 0 {
		// Stored with the conversation's creation: a kill in between
		// cannot leave a conversation without its task. (A goal's
		// objective is sent by the goal loop.)
		m := event.UserMessage(task)
		opts.FirstMessage, sent = &m, true
	}
	var conv interface {
		conversation.Conversation
		Status() conversation.ExecutionStatus
	}
	if f.server != "" {
		if p.mcp != nil {
			return usageErr("MCP servers cannot be used with --server: the agent server starts its own")
		}
		ws := &workspace.Remote{Host: f.server, APIKey: cmpOr(f.sessionKey, a.getenv("SESSION_API_KEY")), WorkingDir: p.workDir}
		conv, err = remote.New(ctx, p.agent, ws, &remote.Options{
			ID: p.id, MaxIterations: f.maxIterations, Secrets: p.sources,
			ConfirmationPolicy: p.policy, SecurityAnalyzer: p.analyzer,
			OnEvent: opts.OnEvent, SubscriberBuffer: opts.SubscriberBuffer, Logger: p.logger,
		})
	} else {
		conv, err = conversation.New(ctx, p.agent, p.workDir, opts)
	}
	if err != nil {
		if errors.Is(err, conversation.ErrLocked) {
			return &exitErr{code: exitError, msg: fmt.Sprintf("conversation %s is in use by another process", p.id)}
		}
		return &exitErr{code: exitError, msg: err.Error()}
	}
	id := conv.ID()
	unsubscribe := func() {}
	if tr != nil {
		if sent {
			// New stored the task before anyone could subscribe, and
			// nothing runs yet: show what it stored.
			log := conv.State().Events()
			for i := range log.Len() {
				if e, err := log.Event(i); err == nil {
					tr.onEvent(e)
				}
			}
		}
		unsubscribe = conv.Subscribe(tr.onEvent)
		runCtx = tool.WithOutput(runCtx, tr.output)
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
	fmt.Fprintf(a.stderr, "gohands: %s conversation %s in %s\n", verb, id, p.workDir)
	steps0 := conv.State().Events().Len()

	stopWaiting := func() {}
	if tr != nil && isTerminal(a.stderr) && a.getenv("TERM") != "dumb" {
		waitDone := make(chan struct{})
		waitEnded := make(chan struct{})
		go func() {
			defer close(waitEnded)
			tr.showWaiting(a.stderr, waitDone)
		}()
		stopWaiting = sync.OnceFunc(func() {
			close(waitDone)
			<-waitEnded
		})
		defer stopWaiting()
	}
	runErr := func() error {
		if f.goal > 0 && task != "" && !sent {
			lc, ok := conv.(*conversation.LocalConversation)
			if !ok {
				return errors.New("--goal needs a conversation on this machine")
			}
			out, err := lc.RunGoal(runCtx, task, &conversation.GoalOptions{MaxIterations: f.goal})
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "gohands: goal %s after %d judged run(s) (score %.2f)\n", out.Status, out.Iterations, out.Verdict.Score)
			return nil
		}
		if task != "" && !sent {
			if err := conv.SendMessage(runCtx, event.UserMessage(task)); err != nil {
				return err
			}
		}
		// A resumed conversation may already wait: ask before running,
		// since running approves.
		asking := (p.confirm != "never" || refuseHigh) && conv.Status() == conversation.StatusWaitingForConfirmation
		for {
			if !asking {
				if err := conv.Run(runCtx); err != nil {
					return err
				}
				if conv.Status() != conversation.StatusWaitingForConfirmation || p.confirm == "never" && !refuseHigh {
					return nil
				}
			}
			asking = false
			pending, err := conv.State().PendingActions()
			if err != nil {
				return err
			}
			if p.confirm == "never" {
				these, reason := refusal(runCtx, p.analyzer, pending)
				if len(these) == 0 {
					continue // running approves them
				}
				refused = append(refused, these...)
				for _, r := range these {
					fmt.Fprintf(a.stderr, "gohands: refused %s `%s` (risk %s): HIGH risk actions do not run unattended (--allow-high-risk runs them)\n", r.Tool, r.Action, r.Risk)
				}
				if err := conv.RejectPendingActions(runCtx, reason); err != nil {
					return err
				}
				continue
			}
			if ask.allowed(runCtx, pending) {
				continue // running approves them
			}
			unsubscribe() // the transcript is complete before the question
			if tr != nil {
				tr.hold(true)
			}
			ans, err := ask.ask(runCtx, pending)
			if tr != nil {
				tr.hold(false)
			}
			if tr != nil {
				unsubscribe = conv.Subscribe(tr.onEvent)
			}
			if err != nil {
				if errors.Is(err, errNoAnswer) {
					return nil // the status tells: waiting for confirmation
				}
				return err
			}
			switch ans {
			case answerNo:
				if err := conv.RejectPendingActions(runCtx, ""); err != nil {
					return err
				}
			}
		}
	}()
	stopWaiting()
	unsubscribe()
	status := conv.Status()
	st := conv.State()
	final, _ := agent.FinalResponse(st)
	res := runResult{
		Type: "result", Status: string(status), ConversationID: id,
		FinalMessage: final, Steps: conversation.AgentSteps(st.Events(), steps0),
		DurationMS: time.Since(start).Milliseconds(), Workspace: p.workDir,
	}
	res.Refused = refused
	stats := liveStats(st.Fields().Stats, p.model)
	res.Cost = stats.TotalCost()
	res.PromptTokens, res.CompletionTokens = stats.Tokens()
	closeErr := conv.Close()
	if jsonl != nil {
		if err := jsonl.Err(); err != nil && !errors.Is(err, os.ErrClosed) {
			fmt.Fprintf(a.stderr, "gohands: writing events: %v\n", err)
		}
	} else if tr.err != nil && !errors.Is(tr.err, os.ErrClosed) {
		fmt.Fprintf(a.stderr, "gohands: writing the transcript: %v\n", tr.err)
	}

	resumeHint := "gohands run --conversation-id " + id
	if f.server != "" {
		resumeHint += " --server " + f.server
	}
	if f.persistenceDir != "" {
		resumeHint += " --persistence-dir " + p.base
	}
	var out error
	var re *conversation.RunError
	switch {
	case status == conversation.StatusFinished && runErr == nil:
		switch {
		case closeErr != nil:
			out = &exitErr{code: exitError, msg: fmt.Sprintf("closing the conversation: %v", closeErr)}
		case len(refused) > 0:
			out = &exitErr{code: exitRefused, msg: fmt.Sprintf("finished, but %d HIGH risk action(s) were refused (run with --allow-high-risk, --confirm risky or --confirm always to run them)", len(refused))}
		}
	case status == conversation.StatusPaused:
		why, code := "paused", exitPaused
		if c, ok := stoppedStatus(runCtx); ok {
			why, code = "paused by interrupt", c
			if c == exitTerminated {
				why = "paused by SIGTERM"
			}
		}
		out = &exitErr{code: code, msg: fmt.Sprintf("%s; continue with: %s", why, resumeHint)}
	case status == conversation.StatusWaitingForConfirmation:
		out = &exitErr{code: exitConfirmation, msg: "actions are waiting for confirmation; continue with: " + resumeHint}
	case errors.As(runErr, &re):
		code := exitError
		switch {
		case re.Status == conversation.StatusStuck:
			code = exitStuck
		case re.Code == conversation.CodeMaxIterations:
			code = exitMaxIter
		}
		msg := fmt.Sprintf("%s: %s: %s", re.Status, re.Code, oneLine(re.Detail))
		if h := p.hint(runErr); h != "" {
			msg += " — " + h
		}
		out = &exitErr{code: code, msg: msg}
	case runErr != nil:
		msg := oneLine(runErr.Error())
		if h := p.hint(runErr); h != "" {
			msg += " — " + h
		}
		if c, ok := stoppedStatus(runCtx); ok {
			out = &exitErr{code: c, msg: "interrupted: " + msg}
		} else {
			out = &exitErr{code: exitError, msg: msg}
		}
	default:
		out = &exitErr{code: exitError, msg: fmt.Sprintf("the run stopped with status %s; continue with: %s", status, resumeHint)}
	}
	if out != nil {
		var ee *exitErr
		if errors.As(out, &ee) {
			res.Error = ee.msg
		}
	}
	if f.json {
		b, _ := json.Marshal(res)
		fmt.Fprintf(a.stdout, "%s\n", b)
	} else {
		fmt.Fprintf(a.stderr, "gohands: %s · %d steps · %s tokens · $%.4f · %s · %s\n",
			res.Status, res.Steps, tui.TokenCount(res.PromptTokens+res.CompletionTokens), res.Cost,
			time.Duration(res.DurationMS)*time.Millisecond, id)
	}
	return out
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
