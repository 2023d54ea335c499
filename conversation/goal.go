package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

// GoalKey is the key of the ConversationStateUpdateEvent recording a goal
// loop's status (the reference's).
const GoalKey = "goal"

// DefaultGoalIterations bounds a goal loop's judged runs unless told
// otherwise (the reference's default).
const DefaultGoalIterations = 10

// The statuses of a goal loop (GoalStatus.Status, GoalOutcome.Status).
const (
	GoalRunning     = "running"
	GoalComplete    = "complete"
	GoalCapped      = "capped"
	GoalInterrupted = "interrupted"
)

// ErrNoResumableGoal is returned by ResumeGoal when the conversation has no
// goal loop left interrupted.
var ErrNoResumableGoal = errors.New("no resumable goal")

// GoalVerdict is the judge's decision after a run.
type GoalVerdict struct {
	// Score is the judge's probability, 0 to 1, that the whole objective
	// is provably done.
	Score    float64 `json:"score"`
	Complete bool    `json:"complete"`
	// Missing says what remains; empty when complete.
	Missing string `json:"missing"`
}

// GoalOutcome is how a goal loop ended: complete, or capped by its bound.
type GoalOutcome struct {
	Status     string      `json:"status"`
	Iterations int         `json:"iterations"`
	Verdict    GoalVerdict `json:"verdict"`
}

// GoalStatus is a goal loop's progress, recorded (by the server, or
// RunGoal's OnStatus) as the value of a ConversationStateUpdateEvent with
// key GoalKey at its start, after each judged run and at its end, so a UI
// can show it and ResumeGoal can continue it. Its JSON is the reference's.
type GoalStatus struct {
	Active        bool         `json:"active"`
	Status        string       `json:"status"`
	Iteration     int          `json:"iteration"`
	MaxIterations int          `json:"max_iterations"`
	Objective     string       `json:"objective"`
	Verdict       *GoalVerdict `json:"verdict"`
}

// GoalStep is a GoalController's decision after a run: stop with Outcome,
// or send Followup and run again.
type GoalStep struct {
	Verdict  GoalVerdict
	Followup string
	Outcome  *GoalOutcome // non-nil: the loop is over
}

// GoalController judges an objective after each run and decides whether
// to go on. It does no conversation I/O, so RunGoal and the server's
// background loop share it.
type GoalController struct {
	Objective     string
	Judge         llm.Model
	MaxIterations int
	// Iteration counts the judged runs so far.
	Iteration int
}

// NewGoalController checks its arguments; maxIterations 0 means
// DefaultGoalIterations.
func NewGoalController(objective string, judge llm.Model, maxIterations int) (*GoalController, error) {
	if strings.TrimSpace(objective) == "" {
		return nil, errors.New("goal: the objective is empty")
	}
	if judge == nil {
		return nil, errors.New("goal: no judge model")
	}
	if maxIterations == 0 {
		maxIterations = DefaultGoalIterations
	}
	if maxIterations < 1 {
		return nil, fmt.Errorf("goal: max_iterations %d: must be at least 1", maxIterations)
	}
	return &GoalController{Objective: objective, Judge: judge, MaxIterations: maxIterations}, nil
}

// Status returns the loop's status for a GoalStatus event.
func (g *GoalController) Status(status string, v *GoalVerdict) GoalStatus {
	return GoalStatus{
		Active: status == GoalRunning, Status: status, Iteration: g.Iteration,
		MaxIterations: g.MaxIterations, Objective: g.Objective, Verdict: v,
	}
}

// OnRunFinished judges the objective against events, the conversation's
// history after a run, and decides.
func (g *GoalController) OnRunFinished(ctx context.Context, events []event.Event) (GoalStep, error) {
	v, err := JudgeGoal(ctx, g.Judge, g.Objective, events)
	if err != nil {
		return GoalStep{}, err
	}
	g.Iteration++
	switch {
	case v.Complete:
		return GoalStep{Verdict: v, Outcome: &GoalOutcome{GoalComplete, g.Iteration, v}}, nil
	case g.Iteration >= g.MaxIterations:
		return GoalStep{Verdict: v, Outcome: &GoalOutcome{GoalCapped, g.Iteration, v}}, nil
	}
	missing := v.Missing
	if missing == "" {
		missing = "The judge could not confirm every requirement."
	}
	return GoalStep{Verdict: v, Followup: fmt.Sprintf(goalFollowup, g.Iteration, missing)}, nil
}

// Our wording; the reply's JSON shape is the reference's.
const (
	goalJudgePrompt = `You check whether a software agent has reached an objective.

<objective>
%s
</objective>

Break the objective into its requirements. A requirement counts as met only when the transcript below shows evidence for it: file contents, command output or test results. A claim without evidence does not count.

<transcript>
%s
</transcript>

Answer with JSON only, exactly: {"score": <0.0 to 1.0, the probability that the whole objective is done>, "complete": <true or false>, "missing": "<what remains, or empty when complete>"}`

	goalFollowup = `The objective is not met yet (judged run %d).
Still missing: %s

Look at the actual state of the workspace rather than your memory, make progress on what is missing, verify it with the relevant commands or tests, and finish only when every requirement is shown to be met.`

	goalResume = `The work toward the objective was interrupted. Look at the actual state of the workspace rather than your memory, continue toward the objective, verify each requirement with commands or tests, and finish only when all are shown to be met.`
)

// JudgeGoal asks judge whether events, a conversation's history, show
// objective done. A reply that is not a verdict counts as "not done", so a
// loop keeps working rather than stopping on a misreading.
func JudgeGoal(ctx context.Context, judge llm.Model, objective string, events []event.Event) (GoalVerdict, error) {
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
		event.UserMessage(fmt.Sprintf(goalJudgePrompt, objective, b.String())),
	}, nil, &llm.CallOptions{NoStream: true})
	if err != nil {
		return GoalVerdict{}, fmt.Errorf("goal: judge: %w", err)
	}
	return parseVerdict(event.TextOf(resp.Message.Content)), nil
}

var jsonObject = regexp.MustCompile(`(?s)\{.*\}`)

func parseVerdict(text string) GoalVerdict {
	text = strings.TrimSpace(text)
	var raw map[string]any
	if json.Unmarshal([]byte(text), &raw) != nil {
		raw = nil
		if m := jsonObject.FindString(text); m != "" && json.Unmarshal([]byte(m), &raw) != nil {
			raw = nil
		}
	}
	if raw == nil {
		return GoalVerdict{Missing: "Judge verdict could not be parsed."}
	}
	var score float64
	switch v := raw["score"].(type) {
	case float64:
		score = v
	case string:
		score, _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
	}
	score = min(max(score, 0), 1)
	v := GoalVerdict{Score: score, Complete: score >= 1}
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

// GoalOptions configure RunGoal. A nil *GoalOptions is valid for a
// LocalConversation (its agent's model judges).
type GoalOptions struct {
	// Judge is the model that judges each run; nil means the agent's
	// model, for conversations that have one (an AgentModel method).
	Judge llm.Model
	// MaxIterations bounds the judged runs; 0 means DefaultGoalIterations
	// (or, resuming, the recorded bound).
	MaxIterations int
	// OnStatus, if set, is called with the loop's status at its start,
	// after each judged run and at its end.
	OnStatus func(GoalStatus)
	// Resume, if set, continues the loop it describes (a status recorded
	// earlier: its objective, bound and count of judged runs), sending a
	// message that says so instead of the objective.
	Resume *GoalStatus
}

// agentModeler is a conversation that can lend its agent's model.
type agentModeler interface {
	AgentModel(ctx context.Context) llm.Model
}

// RunGoal pursues objective in c over several runs: it sends the
// objective, runs the agent, and asks the judge whether the objective is
// met; if not, it sends the judge's account of what is missing and runs
// again, up to MaxIterations judged runs. A run that ends paused, in
// error or waiting for confirmation stops the loop (status interrupted,
// error returned), and so does cancelling ctx (a run in progress is not
// cancelled by it). It works on any Conversation, remote ones included;
// LocalConversation.RunGoal also records the loop's status in the log.
func RunGoal(ctx context.Context, c Conversation, objective string, opts *GoalOptions) (*GoalOutcome, error) {
	var o GoalOptions
	if opts != nil {
		o = *opts
	}
	if o.Judge == nil {
		if m, ok := c.(agentModeler); ok {
			o.Judge = m.AgentModel(ctx)
		}
	}
	first := objective
	if r := o.Resume; r != nil {
		objective, first = r.Objective, goalResume
		if o.MaxIterations == 0 {
			o.MaxIterations = r.MaxIterations
		}
	}
	g, err := NewGoalController(objective, o.Judge, o.MaxIterations)
	if err != nil {
		return nil, err
	}
	if o.Resume != nil {
		g.Iteration = o.Resume.Iteration
	}
	return driveGoal(ctx, c, g, first, o.OnStatus)
}

// driveGoal sends first, then runs and judges until g decides to stop.
func driveGoal(ctx context.Context, c Conversation, g *GoalController, first string, onStatus func(GoalStatus)) (_ *GoalOutcome, err error) {
	status := func(s string, v *GoalVerdict) {
		if onStatus != nil {
			onStatus(g.Status(s, v))
		}
	}
	status(GoalRunning, nil)
	defer func() {
		if err != nil {
			status(GoalInterrupted, nil)
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
		case StatusPaused, StatusError, StatusWaitingForConfirmation:
			return nil, fmt.Errorf("goal: the run ended %s", st)
		}
		events, err := historyOf(c.State())
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
		status(GoalRunning, &step.Verdict)
		msg = step.Followup
	}
}

// historyOf decodes the events of st's active branch: what the judge
// reads.
func historyOf(st *State) ([]event.Event, error) {
	branch, err := st.ActiveBranch()
	if err != nil {
		return nil, err
	}
	events := make([]event.Event, 0, len(branch))
	for _, en := range branch {
		e, err := st.Events().Event(en.Index)
		if err != nil {
			return nil, err
		}
		events = append(events, e)
	}
	return events, nil
}

// AgentModel returns the agent's model, or nil if the agent has none it
// can lend (the default judge of RunGoal).
func (c *LocalConversation) AgentModel(ctx context.Context) llm.Model {
	if r, err := c.start(ctx); err == nil {
		return r.Model()
	}
	return nil
}

// RecordGoalStatus appends s to the log as the reference records a goal
// loop's status: a ConversationStateUpdateEvent with key GoalKey.
func (c *LocalConversation) RecordGoalStatus(s GoalStatus) error {
	if c.isClosed() {
		return ErrConversationClosed
	}
	_, err := c.state.Append(&event.ConversationStateUpdateEvent{
		Base: event.NewBase(event.SourceEnvironment), Key: GoalKey, Value: s,
	})
	return err
}

// LastGoalStatus returns the last goal status recorded in the log, if any.
func (c *LocalConversation) LastGoalStatus() (GoalStatus, bool) {
	ev := c.state.Events()
	for i := ev.Len() - 1; i >= 0; i-- {
		en, err := ev.Entry(i)
		if err != nil || en.Kind != event.KindConversationStateUpdate {
			continue
		}
		e, err := ev.Event(i)
		if err != nil {
			continue
		}
		u, ok := e.(*event.ConversationStateUpdateEvent)
		if !ok || u.Key != GoalKey {
			continue
		}
		var s GoalStatus
		b, err := json.Marshal(u.Value)
		if err == nil && json.Unmarshal(b, &s) == nil && s.Objective != "" {
			return s, true
		}
	}
	return GoalStatus{}, false
}

// RunGoal is the package's RunGoal on c, also recording the loop's status
// in the log (see GoalStatus) so a UI shows it and ResumeGoal can continue
// it, after a restart too.
func (c *LocalConversation) RunGoal(ctx context.Context, objective string, opts *GoalOptions) (*GoalOutcome, error) {
	var o GoalOptions
	if opts != nil {
		o = *opts
	}
	user := o.OnStatus
	o.OnStatus = func(s GoalStatus) {
		if err := c.RecordGoalStatus(s); err != nil {
			c.log.Warn("goal: recording the status", "err", err)
		}
		if user != nil {
			user(s)
		}
	}
	return RunGoal(ctx, c, objective, &o)
}

// ResumeGoal continues the goal loop the log last recorded as interrupted
// (ErrNoResumableGoal if none), from the judged run it had reached.
// opts.MaxIterations 0 keeps the recorded bound.
func (c *LocalConversation) ResumeGoal(ctx context.Context, opts *GoalOptions) (*GoalOutcome, error) {
	last, ok := c.ResumableGoal()
	if !ok {
		return nil, ErrNoResumableGoal
	}
	var o GoalOptions
	if opts != nil {
		o = *opts
	}
	o.Resume = &last
	return c.RunGoal(ctx, "", &o)
}

// ResumableGoal returns the last goal status recorded in the log if that
// loop did not end (complete or capped).
func (c *LocalConversation) ResumableGoal() (GoalStatus, bool) {
	last, ok := c.LastGoalStatus()
	if !ok || last.Status == GoalComplete || last.Status == GoalCapped {
		return GoalStatus{}, false
	}
	return last, true
}
