package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/uuid"

	"github.com/gohands/gohands/agent/finish"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/skill"
)

// Keys of the conversation's agent_state, as the reference names them.
const (
	stateSessionID       = "acp_session_id"
	stateSessionCwd      = "acp_session_cwd"
	stateAgentName       = "acp_agent_name"
	stateAgentVersion    = "acp_agent_version"
	stateSuffixInstalled = "acp_suffix_installed"
)

// cancelDrain is how long a cancelled turn may take to end before the
// server is restarted.
const cancelDrain = 2 * time.Second

// systemPrompt is the placeholder SystemPromptEvent text: the real prompt
// and tools belong to the ACP server.
const systemPrompt = "This conversation is run by an ACP server, which owns its system prompt and tools; they are not shown here."

// Start implements conversation.Agent. It checks the configuration and
// emits the SystemPromptEvent of a new conversation; the server itself is
// started by the first Step, so that a failure to start is recorded as a
// ConversationErrorEvent of the run and a message sent before is kept.
func (a *Agent) Start(ctx context.Context, sess *conversation.Session) (conversation.Started, error) {
	if err := a.Validate(); err != nil {
		return conversation.Started{}, err
	}
	ac, _ := parseContext(a.AgentContext)
	r := &runner{a: a, sess: sess, log: sess.Logger().With("agent", Kind), skills: ac, terms: newTerminals(sess.WorkingDir())}
	if ac != nil {
		home, _ := os.UserHomeDir()
		for _, w := range ac.LoadSkills(sess.WorkingDir(), home) {
			r.log.Warn("acp agent: skill not loaded", "path", w.Path, "err", w.Err)
		}
		r.suffix = ac.SystemSuffix(&skill.PromptOptions{Model: a.modelName()})
	}
	if names := sess.Secrets().Names(); len(names) > 0 {
		s := "<CUSTOM_SECRETS>\nThese environment variables hold secrets you may use: " + strings.Join(names, ", ") + "\n</CUSTOM_SECRETS>"
		if r.suffix != "" {
			r.suffix += "\n\n"
		}
		r.suffix += s
	}
	if err := r.initState(); err != nil {
		return conversation.Started{}, err
	}
	// The server condenses its own context; a CondensationRequest is
	// nothing it acts on.
	return conversation.Started{Runner: r}, nil
}

var _ conversation.Runner = (*runner)(nil)

// Model implements conversation.Runner: the model is the server's, not
// one gohands can call.
func (r *runner) Model() llm.Model { return nil }

// SaveStats implements conversation.Runner: the runner keeps no metrics
// apart from the state.
func (r *runner) SaveStats() error { return nil }

// SwitchLLM implements conversation.Runner: the server chooses its model.
func (r *runner) SwitchLLM(llm.Config) (conversation.Agent, error) {
	return nil, conversation.ErrCannotSwitch
}

func (a *Agent) modelName() string {
	if a.Model != nil && *a.Model != "" {
		return *a.Model
	}
	return a.LLM.Model
}

// runner is an Agent bound to one conversation.
type runner struct {
	a      *Agent
	sess   *conversation.Session
	log    *slog.Logger
	skills *skill.AgentContext
	suffix string // sent with the first prompt of a new session
	terms  *terminals

	skillMu   sync.Mutex
	activated []string

	// stepMu serialises Step, Ask and Close.
	stepMu sync.Mutex
	// mu guards the fields below, which the SDK's callbacks read.
	mu        sync.Mutex
	srv       *server
	turn      *turn
	lastCost  float64
	installed bool // the suffix reached the server's session
	closed    bool
}

// server is a connected ACP session.
type server struct {
	p       *proc
	conn    *sdk.ClientSideConnection
	session sdk.SessionId
	name    string
	version string
	caps    sdk.AgentCapabilities
	// viaConfig says the session selects its model by the "model"
	// config option rather than session/set_model.
	viaConfig bool
}

// turn is a prompt in flight.
type turn struct {
	done     chan promptResult // receives the prompt's outcome
	cancel   context.CancelFunc
	perms    chan *permRequest // permission requests the policy holds
	pending  *permRequest      // the one the user is asked about
	activity atomic.Int64      // unix nanos of the latest update
	start    time.Time

	mu      sync.Mutex
	text    strings.Builder
	thought strings.Builder
	calls   []*toolCall
	usage   *sdk.SessionUsageUpdate
	planN   int
}

type promptResult struct {
	resp sdk.PromptResponse
	err  error
}

// toolCall is the state of one of the server's tool calls.
type toolCall struct {
	ev       event.ACPToolCallEvent
	terminal bool // completed or failed
}

func (t *turn) touch() { t.activity.Store(time.Now().UnixNano()) }

func (t *turn) idle() time.Duration {
	return time.Since(time.Unix(0, t.activity.Load()))
}

// initState emits the placeholder SystemPromptEvent unless the log has one.
func (r *runner) initState() error {
	log := r.sess.State().Events()
	for i := range min(log.Len(), 3) {
		en, err := log.Entry(i)
		if err != nil {
			return fmt.Errorf("acp agent: %w", err)
		}
		if en.Kind == event.KindSystemPrompt {
			return nil
		}
	}
	e := &event.SystemPromptEvent{
		Base:         event.NewBase(event.SourceAgent),
		SystemPrompt: event.Text(systemPrompt),
		Tools:        []event.ToolDefinition{},
	}
	if r.suffix != "" {
		dyn := event.Text(r.suffix)
		e.DynamicContext = &dyn
	}
	return r.sess.Emit(e)
}

// PrepareMessage implements conversation.Runner: keyword skills
// the message triggers and the user message suffix go into its extended
// content, which the prompt carries.
func (r *runner) PrepareMessage(_ context.Context, m *event.MessageEvent) error {
	if r.skills == nil {
		return nil
	}
	r.skillMu.Lock()
	defer r.skillMu.Unlock()
	extra, names := r.skills.UserMessageExtra(event.TextOf(m.LLMMessage.Content), r.activated)
	if extra != "" {
		m.ExtendedContent = append(m.ExtendedContent, event.Text(extra))
	}
	m.ActivatedSkills = append(m.ActivatedSkills, names...)
	r.activated = append(r.activated, names...)
	return nil
}

// Step implements conversation.Runner: one whole remote turn, or the rest
// of one that waited for a confirmation.
func (r *runner) Step(ctx context.Context) error {
	r.stepMu.Lock()
	defer r.stepMu.Unlock()
	r.mu.Lock()
	t := r.turn
	r.mu.Unlock()
	if t == nil {
		srv, err := r.connect(ctx)
		if err != nil {
			return err
		}
		blocks, err := r.prompt(ctx)
		if err != nil {
			return err
		}
		if blocks == nil {
			return r.sess.SetStatus(conversation.StatusFinished)
		}
		t = r.startTurn(srv, blocks)
	} else if t.pending != nil {
		if err := r.answerPending(t); err != nil {
			return err
		}
	}
	return r.wait(ctx, t)
}

// current returns the runner's server while it runs, or, when it has
// exited, nil and the exited one (dead), which the caller drops or
// ignores. A closed runner is ErrConversationClosed.
func (r *runner) current() (srv, dead *server, err error) {
	r.mu.Lock()
	srv, closed := r.srv, r.closed
	r.mu.Unlock()
	if closed {
		return nil, nil, conversation.ErrConversationClosed
	}
	if srv != nil {
		select {
		case <-srv.p.exited:
			return nil, srv, nil
		default:
		}
	}
	return srv, nil, nil
}

// connect starts the server and its session unless it runs already.
func (r *runner) connect(ctx context.Context) (*server, error) {
	srv, dead, err := r.current()
	if err != nil || srv != nil {
		return srv, err
	}
	if dead != nil {
		r.log.Warn("acp agent: the server exited between turns; restarting it", "err", dead.p.exitError())
		r.dropServer(dead)
	}
	ctx, cancel := context.WithTimeout(ctx, seconds(r.a.StartupTimeout))
	defer cancel()
	srv, err = r.start(ctx)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded && (srv == nil || srv.p.broken() == nil) {
			err = fmt.Errorf("the ACP server did not start within %gs (acp_startup_timeout): %w", r.a.StartupTimeout, context.DeadlineExceeded)
			if srv != nil {
				if b := srv.p.broken(); b != nil {
					err = fmt.Errorf("%w; %v", err, b)
				}
			}
		} else if srv != nil {
			if b := srv.p.broken(); b != nil {
				err = fmt.Errorf("%w: %v", err, b)
			}
		}
		if srv != nil {
			srv.p.stop()
		}
		if ctx.Err() != nil && context.Cause(ctx) != context.DeadlineExceeded && !errors.Is(err, context.DeadlineExceeded) {
			return nil, err // paused
		}
		return nil, &Error{Code: initCode(err), Detail: detail(err), Err: err}
	}
	r.mu.Lock()
	r.srv = srv
	r.mu.Unlock()
	return srv, nil
}

// start spawns the server and opens a session. On error the returned
// server, if any, must be stopped.
func (r *runner) start(ctx context.Context) (*server, error) {
	env, err := r.env(ctx)
	if err != nil {
		return nil, err
	}
	argv := r.a.argv()
	p, err := spawn(argv, env, r.sess.WorkingDir())
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	srv := &server{p: p}
	srv.conn = sdk.NewClientSideConnection(&client{r: r}, p.stdin, p.out)
	srv.conn.SetLogger(slog.New(slog.DiscardHandler))
	init, err := call(ctx, srv, func(ctx context.Context) (sdk.InitializeResponse, error) {
		return srv.conn.Initialize(ctx, sdk.InitializeRequest{
			ProtocolVersion: sdk.ProtocolVersionNumber,
			ClientCapabilities: sdk.ClientCapabilities{
				Fs:       sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true},
				Terminal: true,
			},
			ClientInfo: &sdk.Implementation{Name: "gohands", Version: "dev"},
		})
	})
	if err != nil {
		return srv, fmt.Errorf("initialize: %w", err)
	}
	srv.caps = init.AgentCapabilities
	if init.AgentInfo != nil {
		srv.name, srv.version = init.AgentInfo.Name, init.AgentInfo.Version
	}
	if id := authMethod(init.AuthMethods, env); id != "" {
		_, err := call(ctx, srv, func(ctx context.Context) (sdk.AuthenticateResponse, error) {
			return srv.conn.Authenticate(ctx, sdk.AuthenticateRequest{MethodId: id})
		})
		if err != nil {
			return srv, fmt.Errorf("authenticate %s: %w", id, err)
		}
	}
	cwd := r.sess.WorkingDir()
	mcp, err := mcpServers(r.a.MCPConfig, srv.caps.McpCapabilities, r.log)
	if err != nil {
		return srv, err
	}
	prior, resumed := r.priorSession(cwd), false
	var opts []sdk.SessionConfigOption
	var models *sdk.SessionModelState
	if prior != "" && srv.caps.LoadSession {
		resp, err := call(ctx, srv, func(ctx context.Context) (sdk.LoadSessionResponse, error) {
			return srv.conn.LoadSession(ctx, sdk.LoadSessionRequest{Cwd: cwd, SessionId: sdk.SessionId(prior), McpServers: mcp})
		})
		var re *sdk.RequestError
		switch {
		case err == nil:
			srv.session, resumed = sdk.SessionId(prior), true
			opts, models = resp.ConfigOptions, resp.Models
		case errors.As(err, &re):
			r.log.Warn("acp agent: session/load failed; starting a new session", "err", err)
		default:
			return srv, fmt.Errorf("session/load: %w", err)
		}
	}
	if !resumed {
		resp, err := call(ctx, srv, func(ctx context.Context) (sdk.NewSessionResponse, error) {
			return srv.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: cwd, McpServers: mcp})
		})
		if err != nil {
			return srv, fmt.Errorf("session/new: %w", err)
		}
		srv.session, opts, models = resp.SessionId, resp.ConfigOptions, resp.Models
	}
	viaConfig, current, available, said := sessionModels(opts, models)
	if !said && resumed {
		// A loaded session need not repeat its model state: use what
		// the session said when it was made.
		viaConfig, _ = r.sess.Fields().AgentState[stateViaConfig].(bool)
	}
	srv.viaConfig = viaConfig
	if m := r.a.Model; m != nil && *m != "" {
		// As in the reference, a model the server refuses leaves the
		// session on its default rather than failing the start: a
		// server's model list depends on the account.
		switch err := r.applyModel(ctx, srv, *m); {
		case err == nil:
			current = *m
		case ctx.Err() != nil:
			return srv, fmt.Errorf("selecting model %s: %w", *m, err)
		default:
			r.log.Warn("acp agent: the server refused the model; the session runs its default", "model", *m, "err", err)
		}
	}
	if m := r.a.SessionMode; m != nil && *m != "" {
		_, err := call(ctx, srv, func(ctx context.Context) (sdk.SetSessionModeResponse, error) {
			return srv.conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: srv.session, ModeId: sdk.SessionModeId(*m)})
		})
		if err != nil {
			return srv, fmt.Errorf("session/set_mode %s: %w", *m, err)
		}
	}
	r.mu.Lock()
	r.installed = resumed && r.sess.Fields().AgentState[stateSuffixInstalled] == true
	r.mu.Unlock()
	err = r.sess.State().Update(func(f *conversation.Fields) error {
		st := make(map[string]any, len(f.AgentState)+7)
		maps.Copy(st, f.AgentState)
		st[stateSessionID] = string(srv.session)
		st[stateSessionCwd] = cwd
		st[stateAgentName] = srv.name
		st[stateAgentVersion] = srv.version
		st[stateRuntimeSwitch] = SupportsRuntimeModelSwitch(srv.name)
		st[stateViaConfig] = srv.viaConfig
		if said {
			// A session that says nothing of models keeps the list
			// its conversation had.
			st[stateModels] = available
		}
		if current != "" {
			st[stateCurrentModel] = current
		} else {
			delete(st, stateCurrentModel)
		}
		if !resumed {
			delete(st, stateSuffixInstalled)
		}
		f.AgentState = st
		return nil
	})
	if err != nil {
		return srv, err
	}
	r.log.Info("acp agent: session ready", "server", srv.name, "version", srv.version, "resumed", resumed)
	return srv, nil
}

// priorSession is the session to resume: acp_resume_session_id, else the
// one stored in the conversation if it was made in the same directory
// (servers key sessions by cwd).
func (r *runner) priorSession(cwd string) string {
	if id := r.a.ResumeSessionID.Value(); id != "" {
		return id
	}
	st := r.sess.Fields().AgentState
	id, _ := st[stateSessionID].(string)
	if c, ok := st[stateSessionCwd].(string); ok && c != cwd {
		return ""
	}
	return id
}

// env is the server's environment: ours, the conversation's secrets (an
// ACP server is a black box, so it gets them all, as in the reference),
// and acp_env.
func (r *runner) env(ctx context.Context) ([]string, error) {
	extra := map[string]string{}
	sec := r.sess.Secrets()
	for _, name := range sec.Names() {
		v, err := sec.Value(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("secret %s: %w", name, err)
		}
		extra[name] = v
	}
	for k, v := range r.a.Env {
		extra[k] = v.Value()
	}
	return environ(extra), nil
}

// authMethod picks a method the server offers whose credential is in env
// (the reference's choice for API keys), or "" to skip authenticate.
func authMethod(methods []sdk.AuthMethod, env []string) string {
	has := func(k string) bool {
		return slices.ContainsFunc(env, func(kv string) bool {
			name, v, _ := strings.Cut(kv, "=")
			return name == k && v != ""
		})
	}
	for _, m := range methods {
		var id string
		switch {
		case m.Agent != nil:
			id = string(m.Agent.Id)
		case m.EnvVar != nil:
			id = string(m.EnvVar.Id)
		default:
			continue
		}
		switch id {
		case "api-key":
			if has("CODEX_API_KEY") || has("OPENAI_API_KEY") {
				return id
			}
		case "gemini-api-key":
			if has("GEMINI_API_KEY") {
				return id
			}
		}
	}
	return ""
}

// call runs a request. When the connection broke because of the server
// (it exited, or garbled a message), that is the error, rather than the
// SDK's "peer disconnected".
func call[T any](ctx context.Context, srv *server, f func(context.Context) (T, error)) (T, error) {
	v, err := f(ctx)
	if err == nil {
		return v, nil
	}
	select {
	case <-srv.conn.Done():
		// The exit is seen a little after the end of the output.
		if srv.p.broken() == nil {
			select {
			case <-srv.p.exited:
			case <-time.After(time.Second):
			}
		}
		if b := srv.p.broken(); b != nil {
			return v, b
		}
	default:
	}
	return v, err
}

// prompt builds the content of the turn from the latest user message,
// or returns nil if there is none.
func (r *runner) prompt(ctx context.Context) ([]sdk.ContentBlock, error) {
	log := r.sess.State().Events()
	for i := log.Len() - 1; i >= 0; i-- {
		en, err := log.Entry(i)
		if err != nil {
			return nil, fmt.Errorf("acp agent: %w", err)
		}
		if en.Kind != event.KindMessage || en.Source != event.SourceUser {
			continue
		}
		e, err := log.Event(ctx, i)
		if err != nil {
			return nil, fmt.Errorf("acp agent: %w", err)
		}
		m := e.(*event.MessageEvent)
		var blocks []sdk.ContentBlock
		for _, c := range slices.Concat(m.LLMMessage.Content, m.ExtendedContent) {
			switch c.Type {
			case event.ContentText:
				if strings.TrimSpace(c.Text) != "" {
					blocks = append(blocks, sdk.TextBlock(c.Text))
				}
			case event.ContentImage:
				for _, u := range c.ImageURLs {
					if b, ok := imageBlock(u); ok {
						blocks = append(blocks, b)
					}
				}
			}
		}
		if len(blocks) == 0 {
			continue
		}
		r.mu.Lock()
		if !r.installed && r.suffix != "" {
			blocks = append(blocks, sdk.TextBlock(r.suffix))
		}
		r.mu.Unlock()
		return blocks, nil
	}
	return nil, nil
}

// imageBlock converts a data: URL; ACP servers take images inline only.
func imageBlock(u string) (sdk.ContentBlock, bool) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return sdk.ContentBlock{}, false
	}
	meta, data, ok := strings.Cut(rest, ",")
	mime, isB64 := strings.CutSuffix(meta, ";base64")
	if !ok || !isB64 {
		return sdk.ContentBlock{}, false
	}
	return sdk.ImageBlock(data, mime), true
}

// startTurn sends session/prompt.
func (r *runner) startTurn(srv *server, blocks []sdk.ContentBlock) *turn {
	ctx, cancel := context.WithCancel(context.Background())
	t := &turn{done: make(chan promptResult, 1), cancel: cancel, perms: make(chan *permRequest, 16), start: time.Now()}
	t.touch()
	r.mu.Lock()
	r.turn = t
	r.mu.Unlock()
	go func() {
		resp, err := call(ctx, srv, func(ctx context.Context) (sdk.PromptResponse, error) {
			return srv.conn.Prompt(ctx, sdk.PromptRequest{SessionId: srv.session, Prompt: blocks})
		})
		t.done <- promptResult{resp, err}
	}()
	return t
}

// wait follows a turn until it ends, a permission needs the user, the
// server goes idle too long, or ctx (a pause) ends it.
func (r *runner) wait(ctx context.Context, t *turn) error {
	r.mu.Lock()
	srv := r.srv
	r.mu.Unlock()
	limit := seconds(r.a.PromptTimeout)
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		select {
		case res := <-t.done:
			return r.finish(srv, t, res)
		case p := <-t.perms:
			return r.hold(t, p)
		case <-ctx.Done():
			r.abort(srv, t, "paused")
			return ctx.Err()
		case <-srv.p.exited:
			// Let the prompt's own error (sent before the exit was seen)
			// win if it is there.
			select {
			case res := <-t.done:
				return r.finish(srv, t, res)
			case <-time.After(100 * time.Millisecond):
			}
			err := srv.p.exitError()
			r.abort(srv, t, "server exited")
			return r.turnError(err)
		case <-timer.C:
			if idle := t.idle(); idle < limit {
				timer.Reset(limit - idle)
				continue
			}
			r.abort(srv, t, "idle")
			msg := fmt.Sprintf("ACP prompt timed out after %gs with no activity from the ACP server (acp_prompt_timeout)", r.a.PromptTimeout)
			if err := r.sess.Emit(&event.MessageEvent{Base: event.NewBase(event.SourceAgent), LLMMessage: event.Message{Role: event.RoleAssistant, Content: event.List[event.Content]{event.Text(msg)}}}); err != nil {
				return err
			}
			return &Error{Code: CodePrompt, Detail: msg}
		}
	}
}

// hold logs a permission request the policy holds as a pending action and
// makes the conversation wait for confirmation; the turn stays in flight.
func (r *runner) hold(t *turn, p *permRequest) error {
	t.pending = p
	if err := r.sess.Emit(p.action); err != nil {
		return err
	}
	return r.sess.SetStatus(conversation.StatusWaitingForConfirmation)
}

// answerPending answers the request the user was asked about: approved
// if its action is still pending (running again confirms), denied if it
// was rejected.
func (r *runner) answerPending(t *turn) error {
	p := t.pending
	t.pending = nil
	t.touch()
	pending, err := r.sess.Pending()
	if err != nil {
		return err
	}
	approved := slices.ContainsFunc(pending, func(a *event.ActionEvent) bool { return a.ID == p.action.ID })
	if !approved {
		p.answer(p.option(false))
		return nil
	}
	id := p.option(true)
	p.answer(id)
	obs := &PermissionObservation{OptionID: string(id)}
	obs.Content = event.List[event.Content]{event.Text("Approved: " + string(id))}
	return r.sess.Emit(&event.ObservationEvent{
		Base:        event.NewBase(event.SourceEnvironment),
		ToolName:    p.action.ToolName,
		ToolCallID:  p.action.ToolCallID,
		ActionID:    p.action.ID,
		Observation: obs,
	})
}

// abort ends a turn that will not finish: session/cancel, every open
// permission request answered cancelled, a short wait for the prompt to
// end, and the open tool calls closed as failed. A server that does not
// end the turn in time is stopped; the next step starts a new one.
func (r *runner) abort(srv *server, t *turn, why string) {
	r.log.Info("acp agent: cancelling the turn", "why", why)
	cctx, cancel := context.WithTimeout(context.Background(), cancelDrain)
	defer cancel()
	srv.conn.Cancel(cctx, sdk.CancelNotification{SessionId: srv.session})
	if t.pending != nil {
		t.pending.answer("")
		t.pending = nil
	}
	drained := false
	for !drained {
		select {
		case p := <-t.perms:
			p.answer("")
		case <-t.done:
			drained = true
		case <-cctx.Done():
			r.log.Warn("acp agent: the server did not end the cancelled turn; stopping it")
			t.cancel()
			r.dropServer(srv)
			drained = true
		}
	}
	t.cancel()
	r.closeCalls(t, "failed")
	r.mu.Lock()
	r.turn = nil
	r.mu.Unlock()
}

// dropServer stops srv and forgets it.
func (r *runner) dropServer(srv *server) {
	srv.p.stop()
	r.mu.Lock()
	if r.srv == srv {
		r.srv = nil
	}
	r.mu.Unlock()
}

// closeCalls emits a terminal event with status for each tool call still
// open, so no card is left spinning.
func (r *runner) closeCalls(t *turn, status string) {
	t.mu.Lock()
	var evs []event.Event
	for _, c := range t.calls {
		if c.terminal {
			continue
		}
		c.terminal = true
		e := c.ev
		e.Base = event.NewBase(event.SourceAgent)
		e.Status = status
		e.IsError = status == "failed"
		evs = append(evs, &e)
	}
	t.mu.Unlock()
	for _, e := range evs {
		if err := r.sess.Emit(e); err != nil {
			r.log.Warn("acp agent: closing a tool call", "err", err)
		}
	}
}

// finish ends a turn with the prompt's outcome.
func (r *runner) finish(srv *server, t *turn, res promptResult) error {
	t.cancel()
	for {
		select {
		case p := <-t.perms:
			p.answer("")
			continue
		default:
		}
		break
	}
	r.mu.Lock()
	r.turn = nil
	r.mu.Unlock()
	if res.err != nil {
		r.closeCalls(t, "failed")
		if b := srv.p.broken(); b != nil {
			r.dropServer(srv)
		}
		d := detail(res.err)
		if err := r.sess.Emit(&event.MessageEvent{Base: event.NewBase(event.SourceAgent), LLMMessage: event.Message{Role: event.RoleAssistant, Content: event.List[event.Content]{event.Text("ACP error: " + d)}}}); err != nil {
			return err
		}
		return r.turnError(res.err)
	}
	r.closeCalls(t, "completed")
	r.mu.Lock()
	if !r.installed && r.suffix != "" {
		r.installed = true
		r.mu.Unlock()
		if err := r.sess.State().Update(func(f *conversation.Fields) error {
			st := make(map[string]any, len(f.AgentState)+1)
			maps.Copy(st, f.AgentState)
			st[stateSuffixInstalled] = true
			f.AgentState = st
			return nil
		}); err != nil {
			return err
		}
	} else {
		r.mu.Unlock()
	}
	if err := r.recordUsage(srv, t, res.resp); err != nil {
		return err
	}
	t.mu.Lock()
	text, thought := t.text.String(), t.thought.String()
	t.mu.Unlock()
	if text == "" {
		text = "(No response from ACP server)"
	}
	// Secrets split across chunks only show in the joined text; the
	// session masks it when it is emitted.
	callID := uuid.NewString()
	args, _ := json.Marshal(map[string]string{"message": text})
	act := &event.ActionEvent{
		Base:             event.NewBase(event.SourceAgent),
		Thought:          event.List[event.Content]{},
		ReasoningContent: thought,
		Action:           &finish.Action{Message: text},
		ToolName:         finish.Name,
		ToolCallID:       callID,
		ToolCall:         event.ToolCall{ID: callID, Name: finish.Name, Arguments: string(args), Origin: "completion"},
		LLMResponseID:    uuid.NewString(),
		SecurityRisk:     event.RiskUnknown,
	}
	obs := &event.ObservationEvent{
		Base:        event.NewBase(event.SourceEnvironment),
		ToolName:    finish.Name,
		ToolCallID:  callID,
		ActionID:    act.ID,
		Observation: &finish.Observation{ObservationBase: event.ObservationBase{Content: event.List[event.Content]{event.Text(text)}}},
	}
	if err := r.sess.EmitAll(act, obs); err != nil {
		return err
	}
	return r.sess.SetStatus(conversation.StatusFinished)
}

// turnError names a failed turn.
func (r *runner) turnError(err error) error {
	return &Error{Code: turnCode(err), Detail: detail(err), Err: err}
}

// recordUsage adds the turn's tokens, cost and latency to the
// conversation's metrics under the sentinel usage id.
func (r *runner) recordUsage(srv *server, t *turn, resp sdk.PromptResponse) error {
	t.mu.Lock()
	uu := t.usage
	t.mu.Unlock()
	model := r.a.modelName()
	return r.sess.State().Update(func(f *conversation.Fields) error {
		var m llm.Metrics
		if old := f.Stats.UsageToMetrics[SentinelUsageID]; old != nil {
			m = old.Clone()
		} else {
			m = llm.Metrics{ModelName: model, Costs: []llm.Cost{}, ResponseLatencies: []llm.ResponseLatency{}, TokenUsages: []llm.TokenUsage{}}
		}
		if uu != nil && uu.Cost != nil {
			r.mu.Lock()
			delta := uu.Cost.Amount - r.lastCost
			r.lastCost = uu.Cost.Amount
			r.mu.Unlock()
			m.AddCost(model, delta, time.Now())
		}
		if u := resp.Usage; u != nil && (u.InputTokens > 0 || u.OutputTokens > 0) {
			tu := llm.TokenUsage{Model: model, PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, ResponseID: string(srv.session)}
			if u.CachedReadTokens != nil {
				tu.CacheReadTokens = *u.CachedReadTokens
			}
			if u.CachedWriteTokens != nil {
				tu.CacheWriteTokens = *u.CachedWriteTokens
			}
			if u.ThoughtTokens != nil {
				tu.ReasoningTokens = *u.ThoughtTokens
			}
			if uu != nil {
				tu.ContextWindow = uu.Size
			}
			m.AddTokenUsage(tu)
		}
		m.AddLatency(model, time.Since(t.start), string(srv.session))
		s := make(event.Map[string, *llm.Metrics], len(f.Stats.UsageToMetrics)+1)
		maps.Copy(s, f.Stats.UsageToMetrics)
		s[SentinelUsageID] = &m
		f.Stats.UsageToMetrics = s
		return nil
	})
}

// Ask implements conversation.Runner. An ACP server has one history, the
// session's; a side question would enter it, so it is refused.
func (r *runner) Ask(context.Context, []event.Event, string) (string, error) {
	return "", errors.New("acp agent: side questions are not supported: the ACP server keeps the history")
}

// Close implements conversation.Runner: it cancels a turn in flight and
// stops the server and the terminals it opened.
func (r *runner) Close() error {
	r.mu.Lock()
	r.closed = true
	srv, t := r.srv, r.turn
	r.mu.Unlock()
	if srv != nil {
		if t != nil {
			r.abort(srv, t, "closed")
		}
		r.dropServer(srv)
	}
	r.terms.closeAll()
	return nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

var _ io.Closer = (*runner)(nil)
