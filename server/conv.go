package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/pubsub"
)

// MetaFile is the name of the agent server's per-conversation metadata
// file, the reference's StoredConversation.
const MetaFile = "meta.json"

// storedMeta is meta.json: the reference's StoredConversation (the
// ConversationConfig fields and the server's own), nulls kept. It does
// not hold the agent: base_state.json does. Secrets are kept in the
// state's secret registry (encrypted there with the server's key), so
// meta.json's secrets map stays empty.
type storedMeta struct {
	Workspace                         json.RawMessage            `json:"workspace"`
	Worktree                          bool                       `json:"worktree"`
	WorktreeOptions                   json.RawMessage            `json:"worktree_options"`
	ConversationID                    *string                    `json:"conversation_id"`
	ParentConversationID              *string                    `json:"parent_conversation_id"`
	ConfirmationPolicy                json.RawMessage            `json:"confirmation_policy"`
	SecurityAnalyzer                  json.RawMessage            `json:"security_analyzer"`
	InitialMessage                    json.RawMessage            `json:"initial_message"`
	MaxIterations                     int                        `json:"max_iterations"`
	StuckDetection                    bool                       `json:"stuck_detection"`
	Secrets                           map[string]json.RawMessage `json:"secrets"`
	SecretsEncrypted                  bool                       `json:"secrets_encrypted"`
	ToolModuleQualnames               map[string]string          `json:"tool_module_qualnames"`
	ClientTools                       []json.RawMessage          `json:"client_tools"`
	AgentLaunchAdditions              json.RawMessage            `json:"agent_launch_additions"`
	AgentDefinitions                  []json.RawMessage          `json:"agent_definitions"`
	Plugins                           json.RawMessage            `json:"plugins"`
	HookConfig                        json.RawMessage            `json:"hook_config"`
	Tags                              map[string]string          `json:"tags"`
	UserID                            *string                    `json:"user_id"`
	ObservabilityMetadata             json.RawMessage            `json:"observability_metadata"`
	ObservabilityTags                 json.RawMessage            `json:"observability_tags"`
	ObservabilitySpanName             string                     `json:"observability_span_name"`
	ObservabilityParentSpanContext    *string                    `json:"observability_parent_span_context"`
	Autotitle                         bool                       `json:"autotitle"`
	TitleLLMProfile                   *string                    `json:"title_llm_profile"`
	RequiredRuntimeCredentialBindings []string                   `json:"required_runtime_credential_bindings"`
	ID                                string                     `json:"id"`
	Title                             *string                    `json:"title"`
	Metrics                           json.RawMessage            `json:"metrics"`
	CreatedAt                         string                     `json:"created_at"`
	UpdatedAt                         string                     `json:"updated_at"`
	ForkedFromConversationID          *string                    `json:"forked_from_conversation_id"`
	ForkedFromEventID                 *string                    `json:"forked_from_event_id"`
	LaunchedAgentProfile              json.RawMessage            `json:"launched_agent_profile"`
}

// workingDir is the stored workspace's directory, "" if none.
func (m *storedMeta) workingDir() string {
	var ws struct {
		WorkingDir string `json:"working_dir"`
	}
	_ = json.Unmarshal(m.Workspace, &ws)
	return ws.WorkingDir
}

// utcNow is the reference's meta.json time: UTC with a Z.
func utcNow() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000000Z") }

// conv is one conversation known to the server: its metadata, always in
// memory, and its LocalConversation, loaded on demand and released when
// idle. An idle conversation costs no goroutine.
type conv struct {
	s  *Server
	id string // dashed
	// created is the record's created_at, which never changes: the
	// conversation's place in Server.order.
	created string

	mu      sync.Mutex
	meta    storedMeta
	lc      *conversation.LocalConversation
	unsub   func()
	running bool
	runDone chan struct{} // closed when the last run started ends
	// announced is closed, per webhook, once the info of a conversation
	// just installed was posted (see awaitAnnounced).
	announced []<-chan struct{}
	// runStopped is lc.Stopped() when the last run started (see
	// awaitRunEnd).
	runStopped uint64
	goal       *goalLoop // the goal loop in progress, if any
	// parent is the parent id under which kids indexes this conversation
	// (see setMeta).
	parent   string
	lastUsed time.Time
	endedAt  time.Time // when the last run ended (see publishEndedRun)
	holds    int       // requests using the loaded conversation (see hold)
	gone     bool      // deleted
	// ran is set by a run since the conversation was loaded: its tools may
	// hold what a reload cannot rebuild (a shell's directory and
	// variables), so it stays loaded for IdleTTL. One that has not run is
	// released after coldTTL (see evictIdle).
	ran bool

	metaM sync.Mutex // held while meta.json is written

	subs atomic.Pointer[[]*subscriber]
	subM sync.Mutex

	encM sync.Mutex
	enc  *encCache // allocated by the first encode: most conversations have no socket
}

// encCache holds a conversation's recent event encodings.
type encCache struct {
	enc [16]encoded
	n   int
}

var (
	errNotFound       = errors.New("conversation not found")
	errAlreadyRunning = &httpError{status: http.StatusConflict, detail: "Conversation already running. Wait for completion or pause first."}
	// A run slot frees when any run ends: a second is a fair first wait.
	errTooManyRuns  = &httpError{status: http.StatusTooManyRequests, detail: "Too many conversations running; retry later.", retryAfter: 1}
	errShuttingDown = &httpError{status: http.StatusServiceUnavailable, detail: "Server is shutting down"}
)

// loadStored lists the stored conversations (those with a meta.json);
// they are loaded on first use. With a shared catalog it also learns of
// the conversations other servers created, and forgets those they
// deleted.
func (s *Server) loadStored(ctx context.Context) error {
	metas, err := s.cat.metas(ctx)
	if err != nil {
		if metas == nil {
			return err
		}
		s.log.Warn("skipping unreadable conversations", "err", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var added []*conv
	defer func() { s.order.add(added...) }()
	for id, m := range metas {
		c := s.convs[id]
		switch {
		case c == nil:
			c = s.newConv(id, m)
			s.convs[id] = c
			added = append(added, c)
		case s.cat.shared():
			// Another server may have changed it; what this one holds
			// loaded is the newest.
			c.mu.Lock()
			if c.lc == nil && !c.gone {
				c.setMeta(m)
			}
			c.mu.Unlock()
		}
	}
	if s.cat.shared() {
		for id, c := range s.convs {
			if _, ok := metas[id]; !ok && !c.isLoaded() {
				delete(s.convs, id)
				s.order.remove(c)
			}
		}
	}
	return nil
}

// lookup returns the conversation with id, or nil. With a shared catalog,
// a conversation another server created is found there.
func (s *Server) lookup(id string) *conv {
	c, _ := s.lookupErr(id)
	return c
}

// lookupErr is lookup that tells a conversation that does not exist (nil,
// nil) from a shared catalog that cannot be read (nil, an error with
// status 503): an unreachable database must not read as "not found".
func (s *Server) lookupErr(id string) (*conv, error) {
	s.mu.RLock()
	c := s.convs[id]
	s.mu.RUnlock()
	if c != nil || !s.cat.shared() {
		return c, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, ok, err := s.cat.meta(ctx, id)
	if err != nil {
		s.log.Warn("looking a conversation up", "conversation", id, "err", err)
		return nil, &httpError{status: http.StatusServiceUnavailable, detail: "The conversation store cannot be read; retry later."}
	}
	if !ok {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.convs[id]; c != nil {
		return c, nil
	}
	c = s.newConv(id, m)
	s.convs[id] = c
	s.order.add(c)
	return c, nil
}

func (c *conv) isLoaded() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lc != nil
}

// load returns the LocalConversation, opening it from disk if released.
func (c *conv) load(ctx context.Context) (*conversation.LocalConversation, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lastUsed = time.Now()
	if c.gone {
		return nil, errNotFound
	}
	if c.lc != nil {
		return c.lc, nil
	}
	// A shared conversation left running is one whose server died: it
	// resumes here once loaded (the crash-recovery rules answer the action
	// that was interrupted).
	resume := c.s.cat.shared() && c.savedStatus() == conversation.StatusRunning
	registerStoredAgentDefinitions(c.meta.AgentDefinitions, c.s.log)
	workDir := c.meta.workingDir()
	if workDir == "" {
		workDir = c.s.opts.WorkspacePath
	}
	// The start plugins' sub-agents are not stored: New loads them again.
	plugins, err := decodePlugins(c.meta.Plugins)
	if err != nil {
		c.s.log.Warn("conversation's stored plugins not read", "conversation", c.id, "err", err)
	}
	lc, err := conversation.New(ctx, nil, workDir, &conversation.LocalOptions{
		Plugins:              plugins,
		PluginFetch:          c.s.fetchOptions(),
		ID:                   c.id,
		Backend:              c.s.cat.backend(),
		Cipher:               c.s.cipher,
		MaxIterations:        c.meta.MaxIterations,
		RecordStateChanges:   true,
		OmitSecurityAnalysis: !c.s.opts.SecurityAnalysisEvents,
		SubscriberBuffer:     c.s.opts.SubscriberBuffer,
		Logger:               c.s.log,
		Profiles:             c.s.llmProfiles(),
		MCPOAuthWriteBack:    c.s.writeBackMCPOAuth,
	})
	if err != nil {
		return nil, fmt.Errorf("loading conversation %s: %w", c.id, err)
	}
	c.attach(lc)
	if resume {
		c.s.log.Info("resuming a conversation whose server died", "conversation", c.id)
		go func() {
			// A server at MaxConcurrentRuns resumes it when a run ends.
			for {
				err := c.run(context.Background())
				if err == errTooManyRuns && !c.s.closing.Load() {
					time.Sleep(time.Second)
					continue
				}
				if err != nil && !errors.Is(err, errAlreadyRunning) {
					c.s.log.Warn("resuming a conversation", "conversation", c.id, "err", err)
				}
				return
			}
		}()
	}
	return lc, nil
}

// hold is load for a request: the conversation stays loaded until ctx
// (the request's) ends. Without it the idle evictor could close the
// conversation between a handler's load and its use (a create with a
// message to send, at a short IdleTTL on a loaded machine: "conversation:
// closed").
func (c *conv) hold(ctx context.Context) (*conversation.LocalConversation, error) {
	c.mu.Lock()
	c.holds++
	c.mu.Unlock()
	context.AfterFunc(ctx, func() {
		c.mu.Lock()
		c.holds--
		c.lastUsed = time.Now()
		c.mu.Unlock()
	})
	return c.load(ctx)
}

// savedStatus is the execution status in the stored base state ("" when
// unreadable).
func (c *conv) savedStatus() conversation.ExecutionStatus {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	data, err := c.s.cat.readBase(ctx, c.id)
	if err != nil || data == nil {
		return ""
	}
	var f struct {
		Status conversation.ExecutionStatus `json:"execution_status"`
	}
	json.Unmarshal(data, &f)
	return f.Status
}

// attach makes lc the loaded conversation. Called with mu held.
func (c *conv) attach(lc *conversation.LocalConversation) {
	c.lc = lc
	c.ran = false
	c.unsub = func() {}
	if len(c.s.hooks) > 0 {
		c.unsub = lc.Subscribe(c.toWebhooks)
	}
	c.unsub = c.autotitle(lc, c.unsub)
}

// install makes meta and lc the conversation's record and loaded
// conversation, writes meta.json and announces the conversation to the
// webhooks. When the record cannot be written, the conversation is marked
// gone and lc is closed.
func (c *conv) install(meta storedMeta, lc *conversation.LocalConversation) error {
	c.mu.Lock()
	c.setMeta(meta)
	c.gone = false
	c.attach(lc)
	c.lastUsed = time.Now()
	c.mu.Unlock()
	if err := c.saveMeta(); err != nil {
		c.mu.Lock()
		c.gone = true
		c.mu.Unlock()
		lc.Close()
		return err
	}
	c.created = meta.CreatedAt
	c.s.order.add(c)
	announced := make([]<-chan struct{}, 0, len(c.s.hooks))
	for _, h := range c.s.hooks {
		announced = append(announced, h.addConversation(c))
	}
	c.mu.Lock()
	c.announced = announced
	c.mu.Unlock()
	return nil
}

// awaitAnnounced waits, at most max, until the webhooks have been sent
// the info of the conversation install made. A create answers after
// that: the OpenHands app (1.11) records a conversation both when its
// create is answered and when the webhook reaches it, each by a look-up
// then an insert, and when the two overlap the second insert fails and
// the app's start task with it. The reference posts the webhook in the
// background, so the app's race is open with it too; a receiver that is
// down or slow delays the answer by max at most.
func (c *conv) awaitAnnounced(ctx context.Context, max time.Duration) {
	c.mu.Lock()
	announced := c.announced
	c.announced = nil
	c.mu.Unlock()
	if len(announced) == 0 {
		return
	}
	t := time.NewTimer(max)
	defer t.Stop()
	for _, done := range announced {
		select {
		case <-done:
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// toWebhooks hands every event to the webhooks (off the agent's path:
// Subscribe runs it on its own goroutine).
func (c *conv) toWebhooks(e event.Event) {
	b, err := c.encode(e)
	if err != nil {
		c.s.log.Error("encoding an event for webhooks", "conversation", c.id, "err", err)
		return
	}
	for _, h := range c.s.hooks {
		h.addEvent(c.id, b)
	}
}

// encode returns the JSON of e. The sockets of a conversation get the same
// events in the same order, so a few recent encodings are kept and each
// event is encoded about once, however many sockets watch.
func (c *conv) encode(e event.Event) ([]byte, error) {
	c.encM.Lock()
	if c.enc != nil {
		for i := range c.enc.enc {
			if c.enc.enc[i].e == e {
				b := c.enc.enc[i].b
				c.encM.Unlock()
				return b, nil
			}
		}
	}
	c.encM.Unlock()
	b, err := event.Marshal(e)
	if err != nil {
		return nil, err
	}
	c.encM.Lock()
	if c.enc == nil {
		c.enc = new(encCache)
	}
	c.enc.enc[c.enc.n%len(c.enc.enc)] = encoded{e, b}
	c.enc.n++
	c.encM.Unlock()
	return b, nil
}

type encoded struct {
	e event.Event
	b []byte
}

// publish sends a frame that is not a logged event (a state snapshot, an
// error) to every socket.
func (c *conv) publish(b []byte) {
	if p := c.subs.Load(); p != nil {
		for _, sub := range *p {
			sub.send(b)
		}
	}
}

// fullState encodes the full_state ConversationStateUpdateEvent: the
// current state, redacted, nulls omitted. It is sent to sockets, never
// persisted.
func fullState(lc *conversation.LocalConversation) ([]byte, error) {
	f, err := lc.State().Fields().MarshalJSON()
	if err != nil {
		return nil, err
	}
	return event.Marshal(&event.ConversationStateUpdateEvent{
		Base: event.NewBase(event.SourceEnvironment), Key: event.FullStateKey, Value: json.RawMessage(f),
	})
}

// publishFullState sends a full_state snapshot to the sockets.
func (c *conv) publishFullState(lc *conversation.LocalConversation) {
	if p := c.subs.Load(); p == nil || len(*p) == 0 {
		return
	}
	b, err := fullState(lc)
	if err != nil {
		c.s.log.Error("encoding the state snapshot", "conversation", c.id, "err", err)
		return
	}
	c.publish(b)
}

// publishEndedRun sends a full_state snapshot to the sockets when no run
// is in progress. A reference client arms itself for a run's final
// snapshot only once POST /run has answered, ignores a snapshot that came
// before, and polls GET /api/conversations/{id} while it waits; when the
// run is quick (it stops to wait for confirmation) and the client's thread
// loses the CPU after the answer, the run's snapshot arrives before the
// arming and the client waits until its timeout, as waiting_for_confirmation
// is not a status its poll accepts. A snapshot sent as a poll is answered
// reaches it armed. It is only offered: a socket whose queue is full
// already has a snapshot to come, and frequent polls never drop it.
//
// Within Server.endedGrace (2 s) of the run's end it sends nothing: the run's own
// snapshot may still be on its way to a client that polled because its
// socket reader was slow, and a second one would then arrive after that
// client's next POST /run and end its wait for the next run at once
// (TestGohandsServer's confirm scenario saw "running" after run()).
// A client that armed too late waits that much longer, once.
func (c *conv) publishEndedRun() {
	c.mu.Lock()
	lc, running, ended := c.lc, c.running, c.endedAt
	c.mu.Unlock()
	p := c.subs.Load()
	if lc == nil || running || p == nil || len(*p) == 0 || time.Since(ended) < c.s.endedGrace {
		return
	}
	b, err := fullState(lc)
	if err != nil {
		c.s.log.Error("encoding the state snapshot", "conversation", c.id, "err", err)
		return
	}
	for _, sub := range *p {
		sub.offer(b)
	}
}

// subscribe adds a socket subscriber; it fails when the conversation has
// MaxSubscribers already.
func (c *conv) subscribe(ctx context.Context, lc *conversation.LocalConversation) (*subscriber, bool) {
	c.subM.Lock()
	defer c.subM.Unlock()
	var cur []*subscriber
	if p := c.subs.Load(); p != nil {
		cur = *p
	}
	if len(cur) >= c.s.opts.MaxSubscribers {
		return nil, false
	}
	sub := newSubscriber(64)
	sub.events = lc.Watch(ctx)
	next := append(slices.Clip(cur), sub)
	c.subs.Store(&next)
	return sub, true
}

func (c *conv) unsubscribe(sub *subscriber) {
	c.subM.Lock()
	defer c.subM.Unlock()
	if p := c.subs.Load(); p != nil {
		next := slices.DeleteFunc(slices.Clone(*p), func(x *subscriber) bool { return x == sub })
		c.subs.Store(&next)
	}
	sub.close()
	if sub.events != nil {
		sub.events.Close()
	}
	c.mu.Lock()
	c.lastUsed = time.Now()
	c.mu.Unlock()
}

func (c *conv) hasSubscribers() bool {
	p := c.subs.Load()
	return p != nil && len(*p) > 0
}

// run starts a run in the background. It fails with 409 when one is in
// progress and 429 when MaxConcurrentRuns conversations run.
func (c *conv) run(ctx context.Context) error { return c.startRun(ctx, false) }

// reserveRun takes one of the MaxConcurrentRuns slots ahead of a run, for
// a request that must not change anything if it would be refused (a
// create with run set); startRun(ctx, true) then uses it. It reports
// false when every slot is taken.
func (s *Server) reserveRun() bool {
	if s.runs.Add(1) > int64(s.opts.MaxConcurrentRuns) {
		s.runs.Add(-1)
		return false
	}
	return true
}

// startRun is run; with reserved the caller holds a slot from reserveRun,
// which startRun takes over, or releases when it fails.
func (c *conv) startRun(ctx context.Context, reserved bool) error {
	s := c.s
	release := func() {
		if reserved {
			s.runs.Add(-1)
		}
	}
	lc, err := c.load(ctx)
	if err != nil {
		release()
		return err
	}
	c.mu.Lock()
	if c.running && c.awaitRunEnd(ctx, lc) {
		c.mu.Lock()
	}
	if c.running {
		c.mu.Unlock()
		release()
		return errAlreadyRunning
	}
	if s.closing.Load() {
		c.mu.Unlock()
		release()
		return errShuttingDown
	}
	if !reserved && !s.reserveRun() {
		c.mu.Unlock()
		return errTooManyRuns
	}
	c.running = true
	c.ran = true
	c.runStopped = lc.Stopped()
	done := make(chan struct{})
	c.runDone = done
	s.runWG.Add(1)
	c.mu.Unlock()
	// The answer waits until the run has stored its start: a client that
	// then reads the status sees this run's, never the one before it
	// (see awaitRunEnd).
	runCtx, endSpan := c.traceRun()
	result := lc.Start(runCtx)
	go func() {
		defer s.runWG.Done()
		defer close(done)
		err := <-result
		endSpan(err)
		if s.runReturned != nil {
			s.runReturned(c.id)
		}
		var re *conversation.RunError
		if err != nil && !errors.As(err, &re) && !errors.Is(err, conversation.ErrConversationClosed) {
			s.log.Error("conversation run failed", "conversation", c.id, "err", err)
		}
		// A run that ended in error still "running" could not record its
		// end: its store failed (a shared database unreachable, a lease
		// lost). What this server holds is no longer the truth: it lets
		// the conversation go, and it is opened again from the database
		// (see pgstore's abandon).
		abandon := err != nil && s.cat.shared() && lc.Unrecorded() != nil && !s.closing.Load()
		c.mu.Lock()
		c.running = false
		c.lastUsed = time.Now()
		c.endedAt = c.lastUsed
		c.meta.UpdatedAt = utcNow()
		c.mu.Unlock()
		s.runs.Add(-1)
		if err := c.saveMeta(); err != nil {
			s.log.Error("saving meta.json", "conversation", c.id, "err", err)
		}
		c.publishFullState(lc)
		s.chargeParent(c, lc)
		for _, h := range s.hooks {
			h.addConversation(c)
		}
		if abandon {
			s.log.Warn("letting a conversation go after its store failed", "conversation", c.id, "err", err)
			if err := c.unload(true); err != nil {
				s.log.Debug("letting a conversation go", "conversation", c.id, "err", err)
			}
		}
	}()
	return nil
}

// runEndWait bounds how long a run request waits for a run that has
// stopped to end (see awaitRunEnd).
// (a hang guard: a run that stored its end returns as soon as its step
// is cancelled and its stop hooks ran).
const runEndWait = 30 * time.Second

// awaitRunEnd is called with c.mu held while a run is in progress. When
// that run is only ending (it left its loop: lc.Stopped moved since it
// started; or its status is no longer running, as a pause or interrupt
// stores it before the loop returns: every run stored "running" before
// its request was answered, see startRun), it releases c.mu, waits for the end (at most runEndWait), and
// reports true; the caller locks c.mu again. Otherwise it keeps c.mu and
// reports false. A client that saw the status change and asks for the
// next run at once would otherwise get 409 and take the ending run's
// final snapshot for its own run's end (a reference client did, under
// load: TestGohandsServer158's pause scenario).
func (c *conv) awaitRunEnd(ctx context.Context, lc *conversation.LocalConversation) bool {
	if lc.Stopped() == c.runStopped && lc.Status() == conversation.StatusRunning {
		return false
	}
	done := c.runDone
	c.mu.Unlock()
	t := time.NewTimer(runEndWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
	}
	return true
}

// isRunning reports whether a run is in progress.
func (c *conv) isRunning() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.running
}

// pauseForShutdown pauses a running conversation.
func (c *conv) pauseForShutdown() {
	c.mu.Lock()
	lc, running, goal := c.lc, c.running, c.goal
	c.mu.Unlock()
	if goal != nil {
		goal.cancel() // it records itself interrupted, resumable later
	}
	if lc != nil && running {
		if err := lc.Pause(context.Background()); err != nil {
			c.s.log.Warn("pausing for shutdown", "conversation", c.id, "err", err)
		}
	}
}

// unload releases the LocalConversation (persisting it) unless it is
// running or watched, or force is set.
func (c *conv) unload(force bool) error {
	c.mu.Lock()
	if c.lc == nil || (!force && (c.running || c.goal != nil || c.holds > 0 || c.hasSubscribers())) {
		c.mu.Unlock()
		return nil
	}
	lc, unsub := c.lc, c.unsub
	c.lc, c.unsub = nil, nil
	c.mu.Unlock()
	unsub()
	err := lc.Close()
	if c.isGone() {
		return err
	}
	return errors.Join(err, c.saveMeta())
}

func (c *conv) isGone() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gone
}

// saveMeta writes meta.json atomically.
func (c *conv) saveMeta() error {
	// One writer at a time: two (the end of a run, the idle evictor,
	// a create) would share the temporary file, and the older record
	// could land last.
	c.metaM.Lock()
	defer c.metaM.Unlock()
	c.mu.Lock()
	if c.gone {
		c.mu.Unlock()
		return nil
	}
	data, err := json.Marshal(&c.meta)
	c.mu.Unlock()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.s.cat.saveMeta(ctx, c.id, data)
}

// coldTTL is how long a loaded conversation that has not run stays
// loaded without use. It holds nothing a reload does not rebuild (its
// state and events are stored), so it costs the memory of its record alone
// once released; the short wait spares a reload to the request that
// usually follows a creation (the first message).
const coldTTL = time.Second

// evictLoop releases conversations idle longer than IdleTTL, or coldTTL
// for those that have not run.
func (s *Server) evictLoop() {
	defer s.janitor.Done()
	ttl := min(s.opts.IdleTTL, coldTTL)
	every := min(max(ttl/4, 10*time.Millisecond), 30*time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	released := false
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		now := time.Now()
		if s.evictIdle(now.Add(-s.opts.IdleTTL), now.Add(-min(s.opts.IdleTTL, coldTTL))) > 0 {
			released = true
		}
		// What released conversations held goes back to the system once
		// the server is quiet: the runtime would keep it until its next
		// collection, which an idle server may not make for minutes.
		if released && s.runs.Load() == 0 && now.Sub(time.Unix(0, s.active.Load())) >= coldTTL {
			debug.FreeOSMemory()
			released = false
		}
	}
}

// evictIdle releases the conversations last used before cutoff, and those
// that have not run since they were loaded last used before coldCutoff.
func (s *Server) evictIdle(cutoff, coldCutoff time.Time) (released int) {
	s.mu.RLock()
	var idle []*conv
	for _, c := range s.convs {
		c.mu.Lock()
		before := cutoff
		if !c.ran {
			before = coldCutoff
		}
		if c.lc != nil && !c.running && c.goal == nil && c.holds == 0 && c.lastUsed.Before(before) && !c.hasSubscribers() {
			idle = append(idle, c)
		}
		c.mu.Unlock()
	}
	s.mu.RUnlock()
	for _, c := range idle {
		if err := c.unload(false); err != nil {
			s.log.Warn("releasing an idle conversation", "conversation", c.id, "err", err)
		}
	}
	return len(idle)
}

// subscriber is one socket: the conversation's events through the
// conversation's broker (events), and the frames that are not logged
// events (snapshots, errors) through ch. Neither ever blocks the agent: a
// socket that falls behind is dropped, and its client reconciles over REST
// when it reconnects.
type subscriber struct {
	events  *pubsub.Subscription[event.Event]
	ch      chan []byte
	done    chan struct{}
	once    sync.Once
	dropped atomic.Int64
}

func newSubscriber(n int) *subscriber {
	return &subscriber{ch: make(chan []byte, n), done: make(chan struct{})}
}

func (s *subscriber) send(b []byte) {
	select {
	case <-s.done:
	case s.ch <- b:
	default:
		s.dropped.Add(1)
		s.close()
	}
}

// offer sends b unless the socket's queue is full.
func (s *subscriber) offer(b []byte) {
	select {
	case <-s.done:
	case s.ch <- b:
	default:
	}
}

func (s *subscriber) close() { s.once.Do(func() { close(s.done) }) }
