// Package goal pursues an objective in a conversation over judged runs:
// it sends the objective, runs the agent, asks a judge model whether the
// transcript shows the objective met and, if not, sends what is missing
// and runs again, up to a bound. Its statuses are recorded in the log as
// the reference's goal mode records them, so a UI shows them and a later
// Resume continues the loop.
//
// It works over conversation.Conversation: a local conversation's loop
// runs here, judged by the agent's model unless told otherwise; a
// conversation that runs its loops where it lives (a remote one, whose
// agent server has the goal routes) implements Looper and is handed the
// loop.
package goal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

// Key is the key of the ConversationStateUpdateEvent recording a goal
// loop's status (the reference's).
const Key = "goal"

// DefaultIterations bounds a goal loop's judged runs unless told
// otherwise (the reference's default).
const DefaultIterations = 10

// The statuses of a goal loop (Status.Status, Outcome.Status).
const (
	Running     = "running"
	Complete    = "complete"
	Capped      = "capped"
	Interrupted = "interrupted"
)

// ErrNoResumable is returned by Resume when the conversation has no
// goal loop left interrupted.
var ErrNoResumable = errors.New("no resumable goal")

// Verdict is the judge's decision after a run.
type Verdict struct {
	// Score is the judge's probability, 0 to 1, that the whole objective
	// is provably done.
	Score    float64 `json:"score"`
	Complete bool    `json:"complete"`
	// Missing says what remains; empty when complete.
	Missing string `json:"missing"`
}

// Outcome is how a goal loop ended: complete, or capped by its bound.
type Outcome struct {
	Status     string  `json:"status"`
	Iterations int     `json:"iterations"`
	Verdict    Verdict `json:"verdict"`
}

// Status is a goal loop's progress, recorded in the log as the value of a
// ConversationStateUpdateEvent with key Key at its start, after each
// judged run and at its end, so a UI can show it and Resume can continue
// it. Its JSON is the reference's.
type Status struct {
	Active        bool     `json:"active"`
	Status        string   `json:"status"`
	Iteration     int      `json:"iteration"`
	MaxIterations int      `json:"max_iterations"`
	Objective     string   `json:"objective"`
	Verdict       *Verdict `json:"verdict"`
}

// Step is a Controller's decision after a run: stop with Outcome,
// or send Followup and run again.
type Step struct {
	Verdict  Verdict
	Followup string
	Outcome  *Outcome // non-nil: the loop is over
}

// Controller judges an objective after each run and decides whether
// to go on. It does no conversation I/O: Run drives it, and the server
// checks a request with NewController before starting its loop.
type Controller struct {
	Objective     string
	Judge         llm.Model
	MaxIterations int
	// Iteration counts the judged runs so far.
	Iteration int
}

// NewController checks its arguments; maxIterations 0 means
// DefaultIterations.
func NewController(objective string, judge llm.Model, maxIterations int) (*Controller, error) {
	if strings.TrimSpace(objective) == "" {
		return nil, errors.New("goal: the objective is empty")
	}
	if judge == nil {
		return nil, errors.New("goal: no judge model")
	}
	if maxIterations == 0 {
		maxIterations = DefaultIterations
	}
	if maxIterations < 1 {
		return nil, fmt.Errorf("goal: max_iterations %d: must be at least 1", maxIterations)
	}
	return &Controller{Objective: objective, Judge: judge, MaxIterations: maxIterations}, nil
}

// Status returns the loop's status to record.
func (g *Controller) Status(status string, v *Verdict) Status {
	return Status{
		Active: status == Running, Status: status, Iteration: g.Iteration,
		MaxIterations: g.MaxIterations, Objective: g.Objective, Verdict: v,
	}
}

// OnRunFinished judges the objective against events, the conversation's
// history after a run, and decides.
func (g *Controller) OnRunFinished(ctx context.Context, events []event.Event) (Step, error) {
	v, err := Judge(ctx, g.Judge, g.Objective, events)
	if err != nil {
		return Step{}, err
	}
	g.Iteration++
	switch {
	case v.Complete:
		return Step{Verdict: v, Outcome: &Outcome{Complete, g.Iteration, v}}, nil
	case g.Iteration >= g.MaxIterations:
		return Step{Verdict: v, Outcome: &Outcome{Capped, g.Iteration, v}}, nil
	}
	missing := v.Missing
	if missing == "" {
		missing = "The judge could not confirm every requirement."
	}
	return Step{Verdict: v, Followup: fmt.Sprintf(followup, g.Iteration, missing)}, nil
}

// Our wording; the reply's JSON shape is the reference's.
const (
	judgePrompt = `You check whether a software agent has reached an objective.

<objective>
%s
</objective>

Break the objective into its requirements. A requirement counts as met only when the transcript below shows evidence for it: file contents, command output or test results. A claim without evidence does not count.

<transcript>
%s
</transcript>

Answer with JSON only, exactly: {"score": <0.0 to 1.0, the probability that the whole objective is done>, "complete": <true or false>, "missing": "<what remains, or empty when complete>"}`

	followup = `The objective is not met yet (judged run %d).
Still missing: %s

Look at the actual state of the workspace rather than your memory, make progress on what is missing, verify it with the relevant commands or tests, and finish only when every requirement is shown to be met.`

	resumeMessage = `The work toward the objective was interrupted. Look at the actual state of the workspace rather than your memory, continue toward the objective, verify each requirement with commands or tests, and finish only when all are shown to be met.`
)

// Judge asks judge whether events, a conversation's history, show
// objective done. A reply that is not a verdict counts as "not done", so a
// loop keeps working rather than stopping on a misreading.
func Judge(ctx context.Context, judge llm.Model, objective string, events []event.Event) (Verdict, error) {
	var b strings.Builder
	for _, m := range event.LLMMessages(events) {
		if m.Role == event.RoleSystem {
			continue // long, and no evidence
		}
		t := strings.TrimSpace(event.TextOf(m.Content))
		if t == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "%s: %s", m.Role, t)
	}
	resp, err := judge.Completion(ctx, []event.Message{
		event.UserMessage(fmt.Sprintf(judgePrompt, objective, b.String())),
	}, nil, &llm.CallOptions{NoStream: true})
	if err != nil {
		return Verdict{}, fmt.Errorf("goal: judge: %w", err)
	}
	return parseVerdict(event.TextOf(resp.Message.Content)), nil
}

var jsonObject = regexp.MustCompile(`(?s)\{.*\}`)

func parseVerdict(text string) Verdict {
	text = strings.TrimSpace(text)
	var raw map[string]any
	if json.Unmarshal([]byte(text), &raw) != nil {
		raw = nil
		if m := jsonObject.FindString(text); m != "" && json.Unmarshal([]byte(m), &raw) != nil {
			raw = nil
		}
	}
	if raw == nil {
		return Verdict{Missing: "Judge verdict could not be parsed."}
	}
	var score float64
	switch v := raw["score"].(type) {
	case float64:
		score = v
	case string:
		score, _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
	}
	score = min(max(score, 0), 1)
	v := Verdict{Score: score, Complete: score >= 1}
	if c, ok := raw["complete"]; ok && c != nil {
		v.Complete = truthy(c)
	}
	if m, ok := raw["missing"]; ok && m != nil {
		v.Missing = fmt.Sprint(m)
	}
	return v
}

// truthy is the verdict's "complete" read as Python's bool() reads it.
func truthy(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case float64:
		return v != 0
	case string:
		return v != ""
	case []any:
		return len(v) > 0
	case map[string]any:
		return len(v) > 0
	}
	return false
}

// Options configure Run and Resume. A nil *Options is valid for a local
// conversation (its agent's model judges).
type Options struct {
	// Judge is the model that judges each run; nil means the agent's
	// model, for conversations that lend it (see Run).
	Judge llm.Model
	// MaxIterations bounds the judged runs; 0 means DefaultIterations
	// (or, resuming, the recorded bound).
	MaxIterations int
	// OnStatus, if set, is called with the loop's status at its start,
	// after each judged run and at its end.
	OnStatus func(Status)
	// Resume, if set, continues the loop it describes (a status recorded
	// earlier: its objective, bound and count of judged runs), sending a
	// message that says so instead of the objective.
	Resume *Status
}

// A Looper is a conversation that runs goal loops where it lives rather
// than in this process: a remote conversation hands them to its agent
// server, whose agent's model judges. Run and Resume hand such a
// conversation the loop; it reports the statuses the server records to
// opts.OnStatus, and fails with an error matching
// conversation.ErrUnsupported for an option it cannot carry out.
type Looper interface {
	RunGoal(ctx context.Context, objective string, opts *Options) (*Outcome, error)
	ResumeGoal(ctx context.Context, opts *Options) (*Outcome, error)
}

// modelLender is a conversation whose agent lends its model for side calls
// (a LocalConversation): the default judge.
type modelLender interface {
	AgentModel(ctx context.Context) (llm.Model, error)
}

// recorder is a conversation whose log takes the loop's statuses (a
// LocalConversation): ConversationStateUpdateEvents with key Key.
type recorder interface {
	RecordUpdate(key string, value any) error
}

// Run pursues objective in c over several runs: it sends the objective,
// runs the agent, and asks the judge whether the objective is met; if
// not, it sends the judge's account of what is missing and runs again, up
// to MaxIterations judged runs. A run that ends paused, in error or
// waiting for confirmation stops the loop (status interrupted, error
// returned), and so does cancelling ctx (a run in progress is not
// cancelled by it).
//
// A Looper is handed the loop. Otherwise the loop runs here, judged by
// opts.Judge or the agent's model, and, when c records updates (a
// LocalConversation), each status is appended to its log so that Resume
// can continue it, after a restart too.
func Run(ctx context.Context, c conversation.Conversation, objective string, opts *Options) (*Outcome, error) {
	if l, ok := c.(Looper); ok {
		return l.RunGoal(ctx, objective, opts)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Judge == nil {
		if m, ok := c.(modelLender); ok {
			judge, err := m.AgentModel(ctx)
			if err != nil {
				return nil, fmt.Errorf("goal: %w", err)
			}
			o.Judge = judge
		}
	}
	first := objective
	if r := o.Resume; r != nil {
		objective, first = r.Objective, resumeMessage
		if o.MaxIterations == 0 {
			o.MaxIterations = r.MaxIterations
		}
	}
	g, err := NewController(objective, o.Judge, o.MaxIterations)
	if err != nil {
		return nil, err
	}
	if o.Resume != nil {
		g.Iteration = o.Resume.Iteration
	}
	onStatus := o.OnStatus
	if r, ok := c.(recorder); ok {
		user := onStatus
		onStatus = func(s Status) {
			if err := r.RecordUpdate(Key, s); err != nil {
				slog.Warn("goal: recording the status", "conversation", c.ID(), "err", err)
			}
			if user != nil {
				user(s)
			}
		}
	}
	return drive(ctx, c, g, first, onStatus)
}

// Resume continues the goal loop c's log last recorded as interrupted
// (ErrNoResumable if none), from the judged run it had reached.
// opts.MaxIterations 0 keeps the recorded bound. A Looper is handed it.
func Resume(ctx context.Context, c conversation.Conversation, opts *Options) (*Outcome, error) {
	if l, ok := c.(Looper); ok {
		return l.ResumeGoal(ctx, opts)
	}
	last, ok := Resumable(ctx, c)
	if !ok {
		return nil, ErrNoResumable
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	o.Resume = &last
	return Run(ctx, c, "", &o)
}

// Last returns the last goal status recorded in c's log, if any.
func Last(ctx context.Context, c conversation.Conversation) (Status, bool) {
	ev := c.State().Events()
	for i := ev.Len() - 1; i >= 0; i-- {
		en, err := ev.Entry(i)
		if err != nil || en.Kind != event.KindConversationStateUpdate {
			continue
		}
		e, err := ev.Event(ctx, i)
		if err != nil {
			continue
		}
		u, ok := e.(*event.ConversationStateUpdateEvent)
		if !ok || u.Key != Key {
			continue
		}
		if s, ok := decodeStatus(u.Value); ok {
			return s, true
		}
	}
	return Status{}, false
}

// Resumable returns the last goal status recorded in c's log if that loop
// did not end (complete or capped).
func Resumable(ctx context.Context, c conversation.Conversation) (Status, bool) {
	last, ok := Last(ctx, c)
	if !ok || last.Status == Complete || last.Status == Capped {
		return Status{}, false
	}
	return last, true
}

// StatusOf returns the goal status e records, if it is one (a
// ConversationStateUpdateEvent with key Key).
func StatusOf(e event.Event) (Status, bool) {
	u, ok := e.(*event.ConversationStateUpdateEvent)
	if !ok || u.Key != Key {
		return Status{}, false
	}
	return decodeStatus(u.Value)
}

func decodeStatus(v any) (Status, bool) {
	var s Status
	b, err := json.Marshal(v)
	if err != nil || json.Unmarshal(b, &s) != nil || s.Objective == "" {
		return Status{}, false
	}
	return s, true
}

// drive sends first, then runs and judges until g decides to stop.
func drive(ctx context.Context, c conversation.Conversation, g *Controller, first string, onStatus func(Status)) (_ *Outcome, err error) {
	status := func(s string, v *Verdict) {
		if onStatus != nil {
			onStatus(g.Status(s, v))
		}
	}
	status(Running, nil)
	defer func() {
		if err != nil {
			status(Interrupted, nil)
		}
	}()
	msg := first
	for {
		if err := c.SendMessage(ctx, event.UserMessage(msg)); err != nil {
			return nil, fmt.Errorf("goal: %w", err)
		}
		if err := c.Run(ctx); err != nil {
			return nil, fmt.Errorf("goal: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("goal: %w", context.Cause(ctx))
		}
		switch st := c.State().Fields().ExecutionStatus; st {
		case conversation.StatusPaused, conversation.StatusError, conversation.StatusWaitingForConfirmation:
			return nil, fmt.Errorf("goal: the run ended %s", st)
		}
		events, err := history(ctx, c.State())
		if err != nil {
			return nil, fmt.Errorf("goal: %w", err)
		}
		step, err := g.OnRunFinished(ctx, events)
		if err != nil {
			return nil, err
		}
		if step.Outcome != nil {
			status(step.Outcome.Status, &step.Verdict)
			return step.Outcome, nil
		}
		status(Running, &step.Verdict)
		msg = step.Followup
	}
}

// history decodes the events of st's active branch: what the judge reads.
func history(ctx context.Context, st *conversation.State) ([]event.Event, error) {
	branch, err := st.ActiveBranch()
	if err != nil {
		return nil, err
	}
	events := make([]event.Event, 0, len(branch))
	for _, en := range branch {
		e, err := st.Events().Event(ctx, en.Index)
		if err != nil {
			return nil, err
		}
		events = append(events, e)
	}
	return events, nil
}
