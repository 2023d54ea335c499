package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/plugin"
	"github.com/gohands/gohands/pubsub"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/security"
	"github.com/gohands/gohands/telemetry"
	"github.com/gohands/gohands/workspace"
)

// LocalConversation is a Conversation whose agent runs in this process,
// working in a local directory. Make one with New.
type LocalConversation struct {
	id      string
	state   *State
	agent   Agent
	sess    *Session
	secrets *secret.Manager
	stuck   *StuckDetector // nil when disabled
	// stuckCache holds the decoded events of the last stuck window, so each
	// check decodes only new ones. Used by the run loop only.
	stuckCache map[string]event.Event
	workDir    string
	dir        string // conversation directory, "" in memory
	maxIter    int
	log        *slog.Logger

	callback func(event.Event)           // LocalOptions.OnEvent, on the commit path
	events   *pubsub.Broker[event.Event] // Subscribe's subscribers, off it

	startMu sync.Mutex
	started *Started // once the agent is started

	// viewMu guards the model's view and the pending actions, both kept
	// up to date by onEvent once built (lazily, on first use).
	viewMu    sync.Mutex
	view      []event.Event
	viewOK    bool
	pending   []*event.ActionEvent
	pendingOK bool

	runMu   sync.Mutex
	running bool
	// begun says the run in progress has stored its start (see
	// lockBetweenRuns).
	begun bool
	// stopped counts the runs that have left their loop (see Stopped).
	stopped  uint64
	runDone  chan struct{}
	cancel   context.CancelCauseFunc // of the step in progress
	pauseReq bool
	// interrupted says the pause that ends the run is an Interrupt, which
	// records an InterruptEvent instead of a PauseEvent.
	interrupted bool
	closed      bool

	// unrecorded is the error event of a run whose store failed to take
	// it (a full disk): subscribers got it at once, and the next run
	// stores it before anything else. Under runMu.
	unrecorded *event.ConversationErrorEvent

	// budget is LocalOptions.MaxBudgetPerRun (0: none).
	budget float64
	// switchReq is a model switch asked for during a Run (under runMu).
	switchReq *llm.Config
	// loads are the plugins LoadPlugin added during a Run, for the run
	// loop to add before its next step (under runMu).
	loads []*plugin.Set
	// opts are the options the conversation was opened with (Fork
	// opens the fork with them).
	opts LocalOptions
}

var _ Conversation = (*LocalConversation)(nil)

// errPaused is the cause of a step context cancelled by Pause.
var errPaused = errors.New("conversation paused")

// New opens a conversation between agent and the user, working in the
// local directory workDir (created if missing).
//
// The conversation is kept in opts.Store, or in the store opts.Backend
// opens for its id, or in memory. When that store already holds a
// conversation, it is resumed: its id
// must match, a non-nil agent must accept the persisted one (see
// Agent.Verify) and runs the conversation, the stored agent staying as it was
// unless opts.ReplaceAgent is set, and a nil agent means the persisted
// one. A
// conversation left running by a process that died is settled first
// (State.RecoverRunning), and every action of a conversation in error or
// finished that nothing answers is answered with that error
// (State.AnswerUnanswered): the model sees it, and no action whose outcome
// was not stored runs twice.
func New(ctx context.Context, agent Agent, workDir string, opts *LocalOptions) (*LocalConversation, error) {
	var o LocalOptions
	if opts != nil {
		o = *opts
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	// New owns o.Store: every failure closes it (or the state over it).
	c := &LocalConversation{}
	store := o.Store
	fail := func(err error) (*LocalConversation, error) {
		if c.state != nil {
			c.state.Close()
		} else if store != nil {
			store.Close()
		}
		return nil, err
	}
	id, err := conversationID(ctx, o.ID, store)
	if err != nil {
		return fail(err)
	}
	if workDir, err = makeWorkDir(workDir); err != nil {
		return fail(err)
	}
	resumePlugins := o.Plugins
	if agent != nil {
		if agent, err = withPlugins(ctx, agent, workDir, &o); err != nil {
			return fail(err)
		}
		resumePlugins = nil
	}
	o.Plugins = nil // merged: a fork takes the agent and hooks as they are
	c.id, c.workDir, c.log = id, workDir, log.With("conversation", id)
	c.opts = o
	c.sess = &Session{c: c}
	c.callback = o.OnEvent
	c.events = pubsub.NewBroker[event.Event](&pubsub.Options{Buffer: o.SubscriberBuffer})

	switch {
	case store != nil:
	case o.Backend != nil:
		if store, err = o.Backend.Open(ctx, id); err != nil {
			return nil, fmt.Errorf("conversation: %w", err)
		}
	default:
		store = NewMemoryStore()
	}
	if ds, ok := store.(DirStore); ok {
		c.dir = ds.Dir()
	}
	sopts := &Options{Cipher: o.Cipher, OnEvent: c.onEvent, RecordChanges: o.RecordStateChanges, RestartNote: c.restartNote}
	base, err := store.ReadBase(ctx)
	if err != nil {
		return fail(fmt.Errorf("conversation: %w", err))
	}
	if base != nil {
		agent, err = c.resumeState(ctx, store, agent, sopts)
	} else {
		err = c.createState(ctx, store, agent, sopts)
	}
	if err != nil {
		return fail(err)
	}
	c.agent = agent
	if len(resumePlugins) > 0 {
		c.agent = c.pluginSubAgents(ctx, agent, resumePlugins)
	}
	if err := c.setUp(ctx); err != nil {
		return fail(err)
	}
	if m := o.FirstMessage; m != nil {
		if err := c.sendFirst(ctx, *m, base == nil); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// conversationID is the conversation's id in canonical form: the one
// given, or the store's, or a new one.
func conversationID(ctx context.Context, id string, store Store) (string, error) {
	if id == "" && store != nil {
		var err error
		if id, err = storedID(ctx, store); err != nil {
			return "", fmt.Errorf("conversation: %w", err)
		}
	}
	if id == "" {
		return uuid.NewString(), nil
	}
	u, err := uuid.Parse(id)
	if err != nil {
		return "", fmt.Errorf("conversation id %q: %w", id, err)
	}
	return u.String(), nil
}

// makeWorkDir makes the workspace directory and returns its absolute path.
func makeWorkDir(workDir string) (string, error) {
	if workDir == "" {
		return "", errors.New("conversation: empty workspace directory")
	}
	workDir, err := filepath.Abs(workDir)
	if err != nil {
		return "", fmt.Errorf("conversation: workspace: %w", err)
	}
	if err := os.MkdirAll(workDir, 0o755); err != nil {
		return "", fmt.Errorf("conversation: workspace: %w", err)
	}
	return workDir, nil
}

// resumeState opens the stored state, recovers what an interrupted run
// left, and applies the options; it returns the agent that runs (the
// persisted one when agent is nil).
func (c *LocalConversation) resumeState(ctx context.Context, store Store, agent Agent, sopts *Options) (Agent, error) {
	o, id := &c.opts, c.id
	var err error
	if c.state, err = OpenID(ctx, store, id, sopts); err != nil {
		return nil, fmt.Errorf("conversation: %w", err)
	}
	persisted := c.state.Fields().Agent
	if agent == nil {
		a, ok := persisted.(Agent)
		if !ok {
			return nil, fmt.Errorf("%w: persisted agent %T cannot run here", ErrNoAgent, persisted)
		}
		agent = a
	} else if persisted != nil { // nil: rebuilt without one (RebuildBase)
		if err := agent.Verify(persisted); err != nil {
			return nil, fmt.Errorf("conversation: resume %s: %w", id, err)
		}
	}
	// The recovery comes first: it reads the actions it answers, and
	// a log that does not read back (a damaged store) fails the
	// resume before anything is written.
	if c.state.Fields().ExecutionStatus == StatusRunning {
		if _, err := c.state.RecoverRunning(); err != nil {
			return nil, fmt.Errorf("conversation: recover: %w", err)
		}
	}
	if st := c.state.Fields().ExecutionStatus; st == StatusError || st == StatusFinished {
		// Never run again an action whose outcome was not stored. A
		// finished conversation has none, unless the process died
		// while writing the result of its finish action: run again,
		// that action would end the next run before the model sees
		// the user's next message.
		if _, err := c.state.AnswerUnanswered(); err != nil {
			return nil, fmt.Errorf("conversation: recover: %w", err)
		}
	}
	keep := persisted != nil && !o.ReplaceAgent
	err = c.state.Update(func(f *Fields) error {
		if !keep {
			f.Agent = agent
		}
		f.Workspace = &workspace.Local{WorkingDir: c.workDir}
		f.PersistenceDir = c.dir
		if o.MaxIterations > 0 {
			f.MaxIterations = o.MaxIterations
		}
		if o.DisableStuckDetection {
			f.StuckDetection = false
		}
		if o.ConfirmationPolicy != nil {
			f.ConfirmationPolicy = o.ConfirmationPolicy
		}
		if o.SecurityAnalyzer != nil {
			f.SecurityAnalyzer = o.SecurityAnalyzer
		}
		if o.HookConfig != nil {
			f.HookConfig = o.HookConfig
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("conversation: %w", err)
	}
	return agent, nil
}

// createState creates the state of a new conversation (a fork's copy when
// seeded).
func (c *LocalConversation) createState(ctx context.Context, store Store, agent Agent, sopts *Options) error {
	o := &c.opts
	if agent == nil {
		return ErrNoAgent
	}
	f := NewFields(c.id, agent, &workspace.Local{WorkingDir: c.workDir})
	f.PersistenceDir = c.dir
	if o.MaxIterations > 0 {
		f.MaxIterations = o.MaxIterations
	}
	f.StuckDetection = !o.DisableStuckDetection
	f.ConfirmationPolicy = o.ConfirmationPolicy
	f.SecurityAnalyzer = o.SecurityAnalyzer
	f.HookConfig = o.HookConfig
	if o.seed != nil {
		// A fork's copies are not changes to record.
		o.seed.fields(f)
		sopts.RecordChanges = false
	}
	var err error
	if c.state, err = create(ctx, store, f, sopts, o.FirstMessage != nil); err != nil {
		return fmt.Errorf("conversation: %w", err)
	}
	if o.seed != nil {
		if err := o.seed.events(c.state); err != nil {
			return fmt.Errorf("conversation: fork: %w", err)
		}
		c.state.opts.RecordChanges = o.RecordStateChanges
	}
	return nil
}

// setUp sets the run limits, the stuck detector and the secrets from the
// state and the options.
func (c *LocalConversation) setUp(ctx context.Context) error {
	o := &c.opts
	f := c.state.Fields()
	c.maxIter = f.MaxIterations
	c.budget = o.MaxBudgetPerRun
	if c.maxIter <= 0 {
		c.maxIter = DefaultMaxIterations
	}
	if f.StuckDetection {
		c.stuck = NewStuckDetector(o.StuckThresholds)
	}
	c.secrets = secret.NewManager(f.SecretRegistry, &secret.ManagerOptions{Logger: c.log})
	if len(o.Secrets) > 0 {
		return c.UpdateSecrets(ctx, o.Secrets)
	}
	return nil
}

// sendFirst sends LocalOptions.FirstMessage; creating says the base state
// is still to be written, which ends the creation.
func (c *LocalConversation) sendFirst(ctx context.Context, m event.Message, creating bool) error {
	if creating && c.HasUserMessage() {
		c.log.Info("conversation: taking up the events of an interrupted creation; its first message is there")
	} else if err := c.SendMessage(ctx, m); err != nil {
		return err
	}
	if creating {
		if err := c.state.finishCreate(); err != nil {
			return fmt.Errorf("conversation: %w", err)
		}
	}
	return nil
}

// HasUserMessage reports whether the log holds a message from the user.
func (c *LocalConversation) HasUserMessage() bool {
	for _, e := range c.state.Events().Entries() {
		if e.Kind == event.KindMessage && e.Source == event.SourceUser {
			return true
		}
	}
	return false
}

// storedID returns the id of the conversation in store, or "" if it is
// empty.
func storedID(ctx context.Context, store Store) (string, error) {
	base, err := store.ReadBase(ctx)
	if err != nil || base == nil {
		return "", err
	}
	var head struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(base, &head); err != nil {
		return "", fmt.Errorf("base state: %w", err)
	}
	return head.ID, nil
}

// ID implements Conversation.
func (c *LocalConversation) ID() string { return c.id }

// State implements Conversation.
func (c *LocalConversation) State() *State { return c.state }

// Status returns the execution status.
func (c *LocalConversation) Status() ExecutionStatus { return c.state.Fields().ExecutionStatus }

// Dir returns the conversation's persistence directory, or "" for an
// in-memory conversation.
func (c *LocalConversation) Dir() string { return c.dir }

// WorkingDir returns the workspace directory.
func (c *LocalConversation) WorkingDir() string { return c.workDir }

// Secrets returns the conversation's secret registry.
func (c *LocalConversation) Secrets() *secret.Manager { return c.secrets }

// Subscribe implements Conversation. fn runs on a goroutine of its own,
// fed through a bounded buffer (LocalOptions.SubscriberBuffer): the
// commit path never waits for it. A subscriber that falls more than the
// buffer behind is dropped, with a warning in the log; use Watch to learn
// it directly.
func (c *LocalConversation) Subscribe(fn func(event.Event)) (unsubscribe func()) {
	return c.events.SubscribeFunc(fn, c.log)
}

// Watch subscribes to the conversation's events from now on, until ctx
// is done or the subscription is closed. It is Subscribe for callers that
// read a channel (the agent server's WebSocket): the subscription's Err
// tells whether it fell behind and was dropped.
func (c *LocalConversation) Watch(ctx context.Context) *pubsub.Subscription[event.Event] {
	return c.events.Subscribe(ctx)
}

// onEvent runs for every committed event, in commit order: it keeps the
// view and the pending actions current, calls LocalOptions.OnEvent, and
// publishes the event to the subscribers without waiting for them.
func (c *LocalConversation) onEvent(e event.Event) {
	c.viewMu.Lock()
	if c.viewOK {
		c.view = applyToView(c.view, e)
	}
	if c.pendingOK {
		c.pending = applyToPending(c.pending, e)
	}
	c.viewMu.Unlock()
	if c.callback != nil {
		c.callback(e)
	}
	c.events.Publish(e)
}

// startAgent materialises the agent once.
func (c *LocalConversation) startAgent(ctx context.Context) (Started, error) {
	c.startMu.Lock()
	defer c.startMu.Unlock()
	if c.started != nil {
		return *c.started, nil
	}
	s, err := c.agent.Start(ctx, c.sess)
	if err != nil {
		return Started{}, fmt.Errorf("conversation: start agent: %w", err)
	}
	if s.Runner == nil {
		return Started{}, fmt.Errorf("conversation: start agent: %T started no runner", c.agent)
	}
	if s.Agent != nil {
		if err := c.state.Update(func(f *Fields) error { f.Agent = s.Agent; return nil }); err != nil {
			_ = s.Runner.Close()
			return Started{}, fmt.Errorf("conversation: start agent: %w", err)
		}
		c.agent = s.Agent
	}
	c.started = &s
	return s, nil
}

// start materialises the agent once and returns its runner.
func (c *LocalConversation) start(ctx context.Context) (Runner, error) {
	s, err := c.startAgent(ctx)
	return s.Runner, err
}

func (c *LocalConversation) isClosed() bool {
	c.runMu.Lock()
	defer c.runMu.Unlock()
	return c.closed
}

// SendMessage implements Conversation. The message's role must be user.
func (c *LocalConversation) SendMessage(ctx context.Context, msg event.Message) error {
	if c.isClosed() {
		return ErrConversationClosed
	}
	if msg.Role == "" {
		msg.Role = event.RoleUser
	}
	if msg.Role != event.RoleUser {
		return fmt.Errorf("conversation: message role %q: only user messages can be sent", msg.Role)
	}
	runner, err := c.start(ctx)
	if err != nil {
		return err
	}
	if err := c.checkReadable(); err != nil {
		return err
	}
	ev := &event.MessageEvent{Base: event.NewBase(event.SourceUser), LLMMessage: msg}
	if err := runner.PrepareMessage(ctx, ev); err != nil {
		return fmt.Errorf("conversation: prepare message: %w", err)
	}
	return c.state.Do(func(tx *Tx) error {
		f := tx.Fields()
		if f.ExecutionStatus == StatusFinished || f.ExecutionStatus == StatusStuck {
			f.ExecutionStatus = StatusIdle
		}
		_, err := tx.Append(ev)
		return err
	})
}

// Run implements Conversation.
func (c *LocalConversation) Run(ctx context.Context) error { return c.run(ctx, func() {}) }

// Start begins a run in the background and returns once it is under
// way: its status stored (running, unless it resumes one that waits for
// confirmation) or, when it could not start, its end. The run's result
// arrives on the channel. A server answering a run request with Start
// has told its client nothing the client can see contradicted: the
// status it reads next is the new run's, not the one before it.
func (c *LocalConversation) Start(ctx context.Context) <-chan error {
	started := make(chan struct{})
	res := make(chan error, 1)
	go func() {
		var once sync.Once
		signal := func() { once.Do(func() { close(started) }) }
		defer signal()
		res <- c.run(ctx, signal)
	}()
	<-started
	return res
}

// run is Run; it calls started once the run has stored its start.
func (c *LocalConversation) run(ctx context.Context, started func()) (err error) {
	runner, err := c.start(ctx)
	if err != nil {
		return err
	}
	c.runMu.Lock()
	if c.closed {
		c.runMu.Unlock()
		return ErrConversationClosed
	}
	if c.running {
		c.runMu.Unlock()
		return ErrRunning
	}
	c.running, c.pauseReq, c.interrupted = true, false, false
	c.runDone = make(chan struct{})
	done := c.runDone
	unrecorded := c.unrecorded
	c.runMu.Unlock()
	defer func() {
		c.runMu.Lock()
		c.running, c.begun, c.cancel = false, false, nil
		c.addLeftLoads()
		close(done)
		c.runMu.Unlock()
	}()

	if err := c.checkReadable(); err != nil {
		return err
	}
	ctx, span := telemetry.Start(ctx, telemetry.KindRun, "conversation.run")
	if span.Recording() {
		span.SetString(telemetry.AttrConversationID, c.ID())
		defer func() { span.SetString(telemetry.AttrStatus, string(c.Status())); span.End(err) }()
	}
	if err := c.startRun(unrecorded); err != nil {
		return c.fail(errorCode(err), err.Error(), err)
	}
	c.runMu.Lock()
	c.begun = true
	c.runMu.Unlock()
	started()
	err = c.runLoop(ctx, runner)
	c.runMu.Lock()
	c.stopped++
	c.runMu.Unlock()
	if err != nil && c.Status() == StatusRunning {
		// The run could not record how it ended (its store failed while
		// pausing, say): it ends in error, not "running" with nothing
		// running.
		return c.fail(errorCode(err), err.Error(), err)
	}
	return err
}

// checkReadable builds the model's view (once; it then follows the
// events) before a message or a run writes anything: a log that does not
// read back (a damaged store, see filestore.Repair) fails them with
// nothing written, where the run would have stored the message, then
// failed on it and stored its error, at every try.
func (c *LocalConversation) checkReadable() error {
	if _, err := c.sess.View(); err != nil {
		return fmt.Errorf("conversation: the log does not read back: %w", err)
	}
	return nil
}

// startRun sets status running. Before, it stores the error event of the
// last run if its store could not (unrecorded), and, when the last run
// ended in error, answers the actions it left unanswered with that error,
// as New does on resume: an action whose outcome was not stored never
// runs twice.
func (c *LocalConversation) startRun(unrecorded *event.ConversationErrorEvent) error {
	if unrecorded != nil {
		if _, err := c.state.Append(unrecorded); err != nil {
			return err
		}
		c.runMu.Lock()
		c.unrecorded = nil
		c.runMu.Unlock()
	}
	if c.Status() == StatusError {
		if _, err := c.state.AnswerUnanswered(); err != nil {
			return err
		}
	}
	return c.state.Update(func(f *Fields) error {
		switch f.ExecutionStatus {
		case StatusIdle, StatusPaused, StatusError, StatusStuck:
			f.ExecutionStatus = StatusRunning
		}
		return nil
	})
}

// runLoop steps the agent until the run ends.
func (c *LocalConversation) runLoop(ctx context.Context, runner Runner) error {
	for iter := 0; ; {
		if c.pauseRequested() || ctx.Err() != nil {
			return c.pauseAfterRun(ctx)
		}
		switch st := c.Status(); st {
		case StatusPaused, StatusFinished:
			return nil
		case StatusStuck, StatusError:
			return c.runError(st)
		case StatusWaitingForConfirmation:
			// Running again approves the pending actions.
			if err := c.sess.SetStatus(StatusRunning); err != nil {
				return err
			}
		}
		if c.stuck != nil {
			if stop, err := c.checkStuck(); err != nil || stop {
				if err != nil {
					return err
				}
				continue
			}
		}
		if err := c.applySwitch(runner); err != nil {
			return c.fail(errorCode(err), err.Error(), err)
		}
		loaded, lerr := c.applyLoads(ctx, runner)
		if lerr != nil {
			return c.fail(errorCode(lerr), lerr.Error(), lerr)
		}
		runner = loaded
		stepCtx, cancel := context.WithCancelCause(ctx)
		c.runMu.Lock()
		c.cancel = cancel
		paused := c.pauseReq
		c.runMu.Unlock()
		if paused {
			cancel(errPaused)
		}
		err := c.tracedStep(stepCtx, runner, iter)
		cancel(nil)
		iter++
		if c.pauseRequested() || ctx.Err() != nil {
			return c.pauseAfterRun(ctx)
		}
		if err != nil {
			return c.fail(errorCode(err), err.Error(), err)
		}
		st := c.Status()
		if st == StatusWaitingForConfirmation {
			return nil
		}
		if detail := c.overBudget(runner); detail != "" && st != StatusFinished {
			return c.fail(CodeMaxBudget, detail, nil)
		}
		if iter >= c.maxIter && st != StatusFinished {
			return c.fail(CodeMaxIterations, fmt.Sprintf("Agent reached maximum iterations limit (%d).", c.maxIter), nil)
		}
	}
}

// tracedStep runs one step in a span of its own when tracing is on.
func (c *LocalConversation) tracedStep(ctx context.Context, r Runner, iter int) error {
	ctx, span := telemetry.Start(ctx, telemetry.KindStep, "agent.step")
	if !span.Recording() {
		return c.step(ctx, r)
	}
	span.SetInt(telemetry.AttrStep, int64(iter+1))
	err := c.step(ctx, r)
	span.End(err)
	return err
}

// step runs one step, turning a panic of the agent into an error.
func (c *LocalConversation) step(ctx context.Context, r Runner) (err error) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("agent step panicked", "panic", p)
			err = fmt.Errorf("agent step panicked: %v", p)
		}
	}()
	return r.Step(ctx)
}

// checkStuck runs the stuck detector: it may nudge the agent (an
// environment message) or stop the run with status stuck.
func (c *LocalConversation) checkStuck() (stop bool, err error) {
	events := c.stuckWindow()
	if nudge := c.stuck.ErrorNudge(events); nudge != "" {
		return false, c.sess.Emit(&event.MessageEvent{
			Base:       event.NewBase(event.SourceEnvironment),
			LLMMessage: event.UserMessage(nudge),
		})
	}
	if stuck, reason := c.stuck.Check(events); stuck {
		err := c.state.Do(func(tx *Tx) error {
			tx.Fields().ExecutionStatus = StatusStuck
			_, err := tx.Append(&event.ConversationErrorEvent{Base: event.NewBase(event.SourceEnvironment), Code: CodeStuck, Detail: reason})
			return err
		})
		if err != nil {
			return true, fmt.Errorf("conversation: %w", err)
		}
		return true, nil
	}
	return false, nil
}

// stuckWindow returns the events the stuck detector looks at: the last
// StuckWindow events of the active branch, pauses and state changes
// included, as the reference's window is.
func (c *LocalConversation) stuckWindow() []event.Event {
	if c.stuckCache == nil {
		c.stuckCache = make(map[string]event.Event, StuckWindow)
	}
	v, err := stuckWindowEvents(c.state, c.stuckCache)
	if err != nil {
		c.log.Warn("stuck detection: no window", "err", err)
		return nil
	}
	return v
}

// endWait bounds how long a change between runs waits for a run that has
// stored its end to return (a hang guard).
const endWait = 30 * time.Second

// lockBetweenRuns locks runMu. When the run in progress has stored how it
// ended (its status is no longer running: it finished, paused or waits
// for confirmation, and is returning), it first waits for that run to
// return, at most endWait: a caller that saw the status expects the
// conversation to be between runs, not an ErrRunning (the agent server's
// load_plugin answered 409 to a client that saw "finished").
func (c *LocalConversation) lockBetweenRuns() {
	c.runMu.Lock()
	if !c.running || !c.begun || c.Status() == StatusRunning {
		return
	}
	done := c.runDone
	c.runMu.Unlock()
	t := time.NewTimer(endWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
	c.runMu.Lock()
}

// Stopped returns how many runs have left their loop. A run that has left
// it has stored how it ended (paused, finished, waiting for confirmation)
// and is returning: a caller that saw that status and wants the next run
// can tell it from a run that is under way, and wait for its end.
func (c *LocalConversation) Stopped() uint64 {
	c.runMu.Lock()
	defer c.runMu.Unlock()
	return c.stopped
}

func (c *LocalConversation) pauseRequested() bool {
	c.runMu.Lock()
	defer c.runMu.Unlock()
	return c.pauseReq
}

// pauseAfterRun records the pause that ended a run.
func (c *LocalConversation) pauseAfterRun(ctx context.Context) error {
	if err := c.writePause(); err != nil {
		return err
	}
	return ctx.Err()
}

// writePause sets status paused and writes a PauseEvent, unless the
// conversation is already paused or ended.
func (c *LocalConversation) writePause() error {
	c.runMu.Lock()
	interrupted := c.interrupted
	c.runMu.Unlock()
	if err := c.pauseWith(interrupted, StatusIdle, StatusRunning, StatusWaitingForConfirmation); err != nil {
		return fmt.Errorf("conversation: pause: %w", err)
	}
	return nil
}

// pauseNow sets status paused, if the status is one of from, then writes a
// PauseEvent: the status change comes first in the log, as in the
// reference.
func (c *LocalConversation) pauseNow(from ...ExecutionStatus) error {
	return c.pauseWith(false, from...)
}

// pauseWith is pauseNow writing a PauseEvent, or an InterruptEvent when
// interrupt is set.
func (c *LocalConversation) pauseWith(interrupt bool, from ...ExecutionStatus) error {
	return c.state.Do(func(tx *Tx) error {
		if !slices.Contains(from, tx.f.ExecutionStatus) {
			return nil
		}
		tx.Fields().ExecutionStatus = StatusPaused
		// In the same commit as the change, after it (see
		// AppendAfterChanges): a client that sees paused finds the
		// PauseEvent, which follows the change in the log and in time,
		// as the reference orders them.
		tx.AppendAfterChanges(func() event.Event {
			if interrupt {
				return &event.InterruptEvent{Base: event.NewBase(event.SourceUser)}
			}
			return &event.PauseEvent{Base: event.NewBase(event.SourceUser)}
		})
		return nil
	})
}

// fail ends a run with status error and a ConversationErrorEvent. When
// the store cannot take them (a full disk), the run ends in error all the
// same: the status is set in memory (the store gets it with its next
// write), subscribers get the event at once, and the next run stores it.
func (c *LocalConversation) fail(code, detail string, cause error) error {
	cls := event.ClassifyError(code, detail)
	ev := &event.ConversationErrorEvent{
		Base: event.NewBase(event.SourceEnvironment), Code: code, Detail: detail, Classification: &cls,
	}
	re := &RunError{Status: StatusError, Code: code, Detail: detail, Err: cause}
	err := c.state.Do(func(tx *Tx) error {
		tx.Fields().ExecutionStatus = StatusError
		_, err := tx.Append(ev)
		return err
	})
	if err == nil {
		return re
	}
	c.log.Error("conversation: the store failed; the run ends in error, recorded when the store works again", "code", code, "detail", detail, "err", err)
	c.state.setStatusUnsaved(StatusError)
	c.runMu.Lock()
	if c.unrecorded == nil {
		c.unrecorded = ev
	}
	c.runMu.Unlock()
	c.sess.Publish(ev)
	return errors.Join(re, err)
}

// Unrecorded returns the ConversationErrorEvent of a run that ended in
// error when its store failed to take it, or nil. Subscribers got it; the
// next run stores it first.
func (c *LocalConversation) Unrecorded() *event.ConversationErrorEvent {
	c.runMu.Lock()
	defer c.runMu.Unlock()
	return c.unrecorded
}

// runError is the RunError of a conversation that is already in error or
// stuck, from its latest ConversationErrorEvent.
func (c *LocalConversation) runError(st ExecutionStatus) error {
	re := &RunError{Status: st, Code: string(st)}
	p, err := c.state.Events().Search(Query{Kind: event.KindConversationError, Descending: true, Limit: 1})
	if err == nil && len(p.Entries) == 1 {
		if e, err := c.state.Events().Event(c.state.ctx, p.Entries[0].Index); err == nil {
			ce := e.(*event.ConversationErrorEvent)
			re.Code, re.Detail = ce.Code, ce.Detail
		}
	}
	return re
}

// errorCode names an error as the reference names the exception it would
// raise (the SDK's LLM* exception classes), so that event.ClassifyError
// and Python readers understand it.
func errorCode(err error) string {
	var coded interface{ ErrorCode() string }
	if errors.As(err, &coded) {
		return coded.ErrorCode()
	}
	// A system call's failure (a full disk, a missing file) is the
	// reference's OSError.
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return "OSError"
	}
	for _, k := range []struct {
		err  error
		code string
	}{
		{llm.ErrAuthentication, "LLMAuthenticationError"},
		{llm.ErrRateLimit, "LLMRateLimitError"},
		{llm.ErrContextWindowExceeded, "LLMContextWindowExceedError"},
		{llm.ErrMalformedHistory, "LLMMalformedConversationHistoryError"},
		{llm.ErrContentPolicy, "LLMContentPolicyViolationError"},
		{llm.ErrBadRequest, "LLMBadRequestError"},
		{llm.ErrTimeout, "LLMTimeoutError"},
		{llm.ErrConnection, "LLMServiceUnavailableError"},
		{llm.ErrServer, "LLMServiceUnavailableError"},
		{llm.ErrNoResponse, "LLMNoResponseError"},
		{llm.ErrFunctionCall, "FunctionCallValidationError"},
	} {
		if errors.Is(err, k.err) {
			return k.code
		}
	}
	return "AgentError"
}

// Pause implements Conversation.
func (c *LocalConversation) Pause(ctx context.Context) error { return c.pause(true, false) }

// PauseAfterStep is Pause that lets the step in progress finish (its LLM
// call and tools) before the run stops: the reference's pause, which the
// agent server's pause route offers. Pause is its interrupt.
func (c *LocalConversation) PauseAfterStep(ctx context.Context) error {
	return c.pause(false, false)
}

// pause asks the run to stop; cancelStep cancels the step in progress,
// and interrupt records the stop as an InterruptEvent.
func (c *LocalConversation) pause(cancelStep, interrupt bool) error {
	c.runMu.Lock()
	if c.closed {
		c.runMu.Unlock()
		return ErrConversationClosed
	}
	if c.running {
		c.pauseReq = true
		c.interrupted = c.interrupted || interrupt
		if c.cancel != nil && cancelStep {
			c.cancel(errPaused)
		}
		c.runMu.Unlock()
		return nil
	}
	c.runMu.Unlock()
	// With no run to cut short, an interrupt is a pause, as in the
	// reference.
	return c.pauseNow(StatusIdle, StatusRunning)
}

// AskAgent implements Conversation.
func (c *LocalConversation) AskAgent(ctx context.Context, question string) (string, error) {
	if c.isClosed() {
		return "", ErrConversationClosed
	}
	r, err := c.start(ctx)
	if err != nil {
		return "", err
	}
	view, err := c.sess.View()
	if err != nil {
		return "", err
	}
	return r.Ask(ctx, view, question)
}

// SetConfirmationPolicy implements Conversation. nil means NeverConfirm.
func (c *LocalConversation) SetConfirmationPolicy(ctx context.Context, p security.ConfirmationPolicy) error {
	return c.state.Update(func(f *Fields) error {
		f.ConfirmationPolicy = p
		return nil
	})
}

// RejectPendingActions implements Conversation. It fails with ErrRunning
// while a step may be executing those actions.
func (c *LocalConversation) RejectPendingActions(ctx context.Context, reason string) error {
	c.lockBetweenRuns()
	running, closed := c.running, c.closed
	c.runMu.Unlock()
	if closed {
		return ErrConversationClosed
	}
	if running && c.Status() != StatusWaitingForConfirmation {
		return ErrRunning
	}
	if reason == "" {
		reason = event.DefaultRejectionReason
	}
	pending, err := c.sess.Pending()
	if err != nil {
		return err
	}
	// The status change comes first in the log, as in the reference.
	err = c.state.Update(func(f *Fields) error {
		if f.ExecutionStatus == StatusWaitingForConfirmation {
			f.ExecutionStatus = StatusIdle
		}
		return nil
	})
	if err != nil {
		return err
	}
	return c.state.Do(func(tx *Tx) error {
		for _, a := range pending {
			_, err := tx.Append(&event.UserRejectObservation{
				Base:     event.NewBase(event.SourceEnvironment),
				ToolName: a.ToolName, ToolCallID: a.ToolCallID, ActionID: a.ID,
				RejectionReason: reason, RejectionSource: event.RejectedByUser,
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// UpdateSecrets implements Conversation. The registry is persisted
// (redacted unless the conversation has a cipher).
func (c *LocalConversation) UpdateSecrets(ctx context.Context, sources map[string]secret.Source) error {
	if err := c.secrets.Update(sources); err != nil {
		return fmt.Errorf("conversation: secrets: %w", err)
	}
	return c.state.Update(func(f *Fields) error {
		f.SecretRegistry = c.secrets.Registry()
		return nil
	})
}

// Close implements Conversation. A Run in progress is paused and waited
// for.
func (c *LocalConversation) Close() error {
	c.runMu.Lock()
	if c.closed {
		c.runMu.Unlock()
		return nil
	}
	c.closed = true
	done := c.runDone
	if c.running {
		c.pauseReq = true
		if c.cancel != nil {
			c.cancel(errPaused)
		}
	}
	c.runMu.Unlock()
	if done != nil {
		<-done
	}
	var errs []error
	c.startMu.Lock()
	if c.started != nil {
		errs = append(errs, c.started.Runner.Close())
	}
	c.startMu.Unlock()
	errs = append(errs, c.state.Close())
	c.events.Close()
	return errors.Join(errs...)
}
