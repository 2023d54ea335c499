package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/gohands/gohands/api/protocol"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/plugin"
	"github.com/gohands/gohands/pubsub"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/security"
	"github.com/gohands/gohands/workspace"
)

// Options configure a remote Conversation. A nil *Options is the default.
type Options struct {
	// ID is the conversation's id. New creates the conversation with it,
	// or attaches to the one the server already has under it.
	ID string
	// MaxIterations bounds the steps of one run (0: the server's default).
	MaxIterations int
	// DisableStuckDetection turns the server's stuck detector off.
	DisableStuckDetection bool
	// ConfirmationPolicy is the policy the conversation starts with.
	ConfirmationPolicy security.ConfirmationPolicy
	// SecurityAnalyzer is the analyzer the conversation starts with, a
	// value of a registered kind.
	SecurityAnalyzer security.Analyzer
	// Secrets are sent to the server with the conversation.
	Secrets map[string]secret.Source
	// HookConfig is the reference's HookConfig JSON.
	HookConfig json.RawMessage
	// Plugins are sent in the start request: the server fetches and
	// loads them (its skills, hooks and MCP servers), from where it is.
	// The mirrored agent (State().Fields().Agent) is then the server's,
	// with them merged in.
	Plugins []plugin.Source
	// Tags are the conversation's tags.
	Tags map[string]string
	// OnEvent, if set, is called with every event of the conversation,
	// from the first, in the server's log order, once each. Calls are
	// serialised with the delivery of events: keep it quick, and do not
	// call the conversation's methods from it.
	OnEvent func(event.Event)
	// SubscriberBuffer is how many events a Subscribe subscriber may fall
	// behind before it is dropped (pubsub.DefaultBuffer if 0).
	SubscriberBuffer int
	// MinBackoff and MaxBackoff bound the wait between reconnections
	// (1 s and 30 s, as the reference, if zero).
	MinBackoff, MaxBackoff time.Duration
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
}

// Errors of a remote conversation.
var (
	// ErrUnauthorized is returned when the server refuses the session key.
	ErrUnauthorized = workspace.ErrUnauthorized
	// ErrNotFound is returned when the server has no such conversation.
	ErrNotFound = workspace.ErrNotFound
)

// Conversation is a conversation whose agent runs on an agent server. It
// implements conversation.Conversation; make one with New or Attach.
type Conversation struct {
	ws  *workspace.Remote
	id  string
	log *slog.Logger
	opt Options

	// state mirrors the server's: its log is every event received, in
	// order, and its fields carry the status and stats.
	state  *conversation.State
	events *pubsub.Broker[event.Event]

	ctx    context.Context // ends the receiver
	cancel context.CancelFunc
	done   chan struct{} // closed when the receiver has returned

	deliverMu sync.Mutex // one delivery at a time, in order

	mu       sync.Mutex
	seen     map[string]bool // ids of the events delivered
	lastID   string          // the last event delivered
	statusN  int             // status observations so far
	running  int             // statusN when "running" was last observed
	snapN    int             // statusN at the last non-running full_state snapshot
	changed  chan struct{}   // closed and replaced on every observation
	fatal    error           // why the receiver stopped for good
	runBusy  bool
	closed   bool
	connects int // successful socket connections, for tests
}

var _ conversation.Conversation = (*Conversation)(nil)

// toolModules names the reference's Python module of its tools, which its
// server imports to register them (StartConversationRequest's
// tool_module_qualnames). gohands' server resolves tools by name.
var toolModules = map[string]string{
	"terminal":         "openhands.tools.terminal.definition",
	"file_editor":      "openhands.tools.file_editor.definition",
	"task_tracker":     "openhands.tools.task_tracker.definition",
	"task":             "openhands.tools.task.definition",
	"task_tool_set":    "openhands.tools.task.definition",
	"browser_tool_set": "openhands.tools.browser_use.definition",
	"glob":             "openhands.tools.glob.definition",
	"grep":             "openhands.tools.grep.definition",
	// Registered only when their module is imported: without these the
	// reference 1.58.2's server answers the first message with a 500
	// ("ToolDefinition 'apply_patch' is not registered").
	"apply_patch":          "openhands.tools.apply_patch.definition",
	"planning_file_editor": "openhands.tools.planning_file_editor.definition",
	"read_file":            "openhands.tools.gemini.read_file.definition",
	"write_file":           "openhands.tools.gemini.write_file.definition",
	"edit":                 "openhands.tools.gemini.edit.definition",
	"list_directory":       "openhands.tools.gemini.list_directory.definition",
}

// exposed returns v with its secrets encoding as plaintext: the server
// needs the model's key and the secrets' values.
func exposed(v any) (any, error) {
	h, ok := v.(secret.Holder)
	if !ok {
		return v, nil
	}
	return h.MapSecrets(func(s secret.String) (secret.String, error) { return s.Expose(), nil })
}

func kinded(v any) (json.RawMessage, error) {
	v, err := exposed(v)
	if err != nil {
		return nil, err
	}
	return event.MarshalKinded(v)
}

// New creates a conversation of agent on the agent server of ws, working
// in ws.WorkingDir there, or attaches to the server's conversation
// opts.ID if it has one. The agent is sent with its model's key, its tool
// specs and the secrets of opts: the server must be trusted with them.
func New(ctx context.Context, agent conversation.Agent, ws *workspace.Remote, opts *Options) (*Conversation, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if agent == nil {
		return nil, conversation.ErrNoAgent
	}
	if ws.WorkingDir == "" {
		return nil, errors.New("remote: the workspace has no working directory")
	}
	agentJSON, err := kinded(agent)
	if err != nil {
		return nil, fmt.Errorf("remote: encoding the agent: %w", err)
	}
	wsJSON, err := json.Marshal(protocol.LocalWorkspace{Kind: "LocalWorkspace", WorkingDir: ws.WorkingDir})
	if err != nil {
		return nil, fmt.Errorf("remote: encoding the workspace: %w", err)
	}
	stuck := !o.DisableStuckDetection
	body := protocol.StartRequest{Agent: agentJSON, Workspace: wsJSON, StuckDetection: &stuck, HookConfig: o.HookConfig}
	if o.ID != "" {
		u, err := uuid.Parse(o.ID)
		if err != nil {
			return nil, fmt.Errorf("remote: conversation id %q: %w", o.ID, err)
		}
		id := u.String()
		body.ConversationID = &id
	}
	if o.MaxIterations > 0 {
		body.MaxIterations = &o.MaxIterations
	}
	if o.ConfirmationPolicy != nil {
		if body.ConfirmationPolicy, err = kinded(o.ConfirmationPolicy); err != nil {
			return nil, fmt.Errorf("remote: confirmation policy: %w", err)
		}
	}
	if o.SecurityAnalyzer != nil {
		if body.SecurityAnalyzer, err = kinded(o.SecurityAnalyzer); err != nil {
			return nil, fmt.Errorf("remote: security analyzer: %w", err)
		}
	}
	if len(o.Secrets) > 0 {
		if body.Secrets, err = secretsJSON(o.Secrets); err != nil {
			return nil, err
		}
	}
	if len(o.Tags) > 0 {
		body.Tags = o.Tags
	}
	if len(o.Plugins) > 0 {
		if body.Plugins, err = json.Marshal(o.Plugins); err != nil {
			return nil, fmt.Errorf("remote: plugins: %w", err)
		}
	}
	if n, ok := agent.(interface{ ToolNames() []string }); ok {
		mods := map[string]string{}
		for _, name := range n.ToolNames() {
			if m, ok := toolModules[name]; ok {
				mods[name] = m
			}
		}
		if len(mods) > 0 {
			body.ToolModuleQualnames = mods
		}
	}
	var (
		info   json.RawMessage
		query  url.Values
		mirror any = agent
	)
	if len(o.Plugins) > 0 {
		// The server's agent has the plugins merged in: the mirror
		// takes it, skills included, rather than the one sent.
		query, mirror = url.Values{"include_skills": {"true"}}, nil
	}
	if err := ws.Request(ctx, http.MethodPost, "/api/conversations", query, body, &info); err != nil {
		return nil, fmt.Errorf("remote: creating the conversation: %w", err)
	}
	return open(ctx, ws, info, mirror, &o)
}

// secretsJSON encodes sources as the server takes them: kind-tagged, with
// their values.
func secretsJSON(sources map[string]secret.Source) (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(sources))
	for name, src := range sources {
		b, err := kinded(src)
		if err != nil {
			return nil, fmt.Errorf("remote: secret %s: %w", name, err)
		}
		out[name] = b
	}
	return out, nil
}

// Attach opens the server's conversation id, which must exist. Its agent
// is decoded from the server's answer (its kind must be registered, e.g.
// by importing package agent); the server keeps running it.
func Attach(ctx context.Context, ws *workspace.Remote, id string, opts *Options) (*Conversation, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	u, err := uuid.Parse(id)
	if err != nil {
		return nil, fmt.Errorf("remote: conversation id %q: %w", id, err)
	}
	var info json.RawMessage
	if err := ws.Request(ctx, http.MethodGet, "/api/conversations/"+u.String(), nil, nil, &info); err != nil {
		return nil, fmt.Errorf("remote: conversation %s: %w", u, err)
	}
	return open(ctx, ws, info, nil, &o)
}

// conversationInfo is the part of the server's ConversationInfo the
// client reads.
type conversationInfo struct {
	ID              string                       `json:"id"`
	ConversationID  string                       `json:"conversation_id"` // legacy name
	Agent           json.RawMessage              `json:"agent"`
	ExecutionStatus conversation.ExecutionStatus `json:"execution_status"`
	MaxIterations   int                          `json:"max_iterations"`
	StuckDetection  bool                         `json:"stuck_detection"`
	Stats           *conversation.Stats          `json:"stats"`
}

// open builds the client of the conversation described by info, reads
// its events and connects its socket.
func open(ctx context.Context, ws *workspace.Remote, info json.RawMessage, agent any, o *Options) (*Conversation, error) {
	var ci conversationInfo
	if err := json.Unmarshal(info, &ci); err != nil {
		return nil, fmt.Errorf("remote: bad conversation from the server: %w", err)
	}
	id := ci.ID
	if id == "" {
		id = ci.ConversationID
	}
	u, err := uuid.Parse(id)
	if err != nil {
		return nil, fmt.Errorf("remote: the server answered no conversation id (%q)", id)
	}
	if agent == nil {
		if agent, err = event.DecodeKinded[any](ci.Agent); err != nil {
			return nil, fmt.Errorf("remote: the conversation's agent: %w", err)
		}
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	f := conversation.NewFields(u.String(), agent, &workspace.Local{WorkingDir: ws.WorkingDir})
	if ci.ExecutionStatus.Valid() {
		f.ExecutionStatus = ci.ExecutionStatus
	}
	if ci.MaxIterations > 0 {
		f.MaxIterations = ci.MaxIterations
	}
	f.StuckDetection = ci.StuckDetection
	if ci.Stats != nil {
		f.Stats = *ci.Stats
	}
	st, err := conversation.Create(ctx, conversation.NewMemoryStore(), f, nil)
	if err != nil {
		return nil, fmt.Errorf("remote: %w", err)
	}
	c := &Conversation{
		ws: ws, id: u.String(), log: log.With("conversation", u.String()), opt: *o,
		state:   st,
		events:  pubsub.NewBroker[event.Event](&pubsub.Options{Buffer: o.SubscriberBuffer}),
		done:    make(chan struct{}),
		seen:    map[string]bool{},
		changed: make(chan struct{}),
	}
	if c.opt.MinBackoff <= 0 {
		c.opt.MinBackoff = time.Second
	}
	if c.opt.MaxBackoff <= 0 {
		c.opt.MaxBackoff = 30 * time.Second
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	// The history first, so that a caller sees it before New returns.
	if err := c.reconcile(ctx); err != nil {
		c.cancel()
		st.Close()
		return nil, err
	}
	ready := make(chan error, 1)
	go c.receive(ready)
	select {
	case err := <-ready:
		if err != nil {
			c.Close()
			return nil, err
		}
	case <-ctx.Done():
		c.Close()
		return nil, ctx.Err()
	}
	return c, nil
}

// ID implements conversation.Conversation.
func (c *Conversation) ID() string { return c.id }

// State implements conversation.Conversation: the mirror of the server's
// state, its log holding every event received.
func (c *Conversation) State() *conversation.State { return c.state }

// Status returns the conversation's execution status as last heard from
// the server.
func (c *Conversation) Status() conversation.ExecutionStatus {
	return c.state.Fields().ExecutionStatus
}

// Workspace returns the conversation's workspace.
func (c *Conversation) Workspace() *workspace.Remote { return c.ws }

// path is the conversation's API path followed by rest.
func (c *Conversation) path(rest string) string { return "/api/conversations/" + c.id + rest }

// check returns why the conversation cannot be used, if it cannot.
func (c *Conversation) check() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return conversation.ErrConversationClosed
	}
	return c.fatal
}

// post sends a POST to the conversation's route rest.
func (c *Conversation) post(ctx context.Context, rest string, body, out any) error {
	if err := c.check(); err != nil {
		return err
	}
	if err := c.ws.Request(ctx, http.MethodPost, c.path(rest), nil, body, out); err != nil {
		return fmt.Errorf("remote: %w", err)
	}
	return nil
}

// SendMessage implements conversation.Conversation. It returns once the
// server has logged the message; the event reaches the callbacks as all
// others do.
func (c *Conversation) SendMessage(ctx context.Context, msg event.Message) error {
	body := protocol.SendMessageRequest{Role: "user", Content: msg.Content}
	return c.post(ctx, "/events", body, nil)
}

// Pause implements conversation.Conversation with the server's pause: the
// step in progress finishes first.
func (c *Conversation) Pause(ctx context.Context) error {
	return c.post(ctx, "/pause", nil, nil)
}

// Interrupt implements conversation.Conversation with the server's
// interrupt: the model call in progress is cancelled; the status becomes
// paused.
func (c *Conversation) Interrupt(ctx context.Context) error {
	return c.post(ctx, "/interrupt", nil, nil)
}

// AskAgent implements conversation.Conversation.
func (c *Conversation) AskAgent(ctx context.Context, question string) (string, error) {
	var out struct {
		Response *string `json:"response"`
	}
	if err := c.post(ctx, "/ask_agent", protocol.AskRequest{Question: question}, &out); err != nil {
		return "", err
	}
	if out.Response == nil {
		return "", errors.New("remote: ask_agent answered no response")
	}
	return *out.Response, nil
}

// SetConfirmationPolicy implements conversation.Conversation. nil means
// NeverConfirm.
func (c *Conversation) SetConfirmationPolicy(ctx context.Context, p security.ConfirmationPolicy) error {
	if p == nil {
		p = &security.NeverConfirm{}
	}
	b, err := kinded(p)
	if err != nil {
		return fmt.Errorf("remote: confirmation policy: %w", err)
	}
	return c.post(ctx, "/confirmation_policy", protocol.PolicyRequest{Policy: b}, nil)
}

// RejectPendingActions implements conversation.Conversation.
func (c *Conversation) RejectPendingActions(ctx context.Context, reason string) error {
	if reason == "" {
		reason = event.DefaultRejectionReason
	}
	if err := c.post(ctx, "/events/respond_to_confirmation", protocol.ConfirmationRequest{Accept: false, Reason: reason}, nil); err != nil {
		return err
	}
	// The rejections are logged when the call returns: have them
	// delivered before it does, as a local conversation does.
	return c.reconcile(ctx)
}

// UpdateSecrets implements conversation.Conversation.
func (c *Conversation) UpdateSecrets(ctx context.Context, sources map[string]secret.Source) error {
	s, err := secretsJSON(sources)
	if err != nil {
		return err
	}
	return c.post(ctx, "/secrets", protocol.SecretsRequest{Secrets: s}, nil)
}

// Subscribe implements conversation.Conversation. fn runs on a goroutine
// of its own; one that falls more than the buffer behind is dropped. It
// also gets the server's transient events (streamed tokens).
func (c *Conversation) Subscribe(fn func(event.Event)) (unsubscribe func()) {
	return c.events.SubscribeFunc(fn, c.log)
}

// Close implements conversation.Conversation: it closes the socket. The
// conversation goes on on the server (a Run in progress there is not
// paused); Attach comes back to it.
func (c *Conversation) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	<-c.done
	c.events.Close()
	return c.state.Close()
}

// Delete deletes the conversation on the server and closes the client.
func (c *Conversation) Delete(ctx context.Context) error {
	err := c.ws.Request(ctx, http.MethodDelete, c.path(""), nil, nil, nil)
	c.Close()
	if err != nil {
		return fmt.Errorf("remote: %w", err)
	}
	return nil
}

// List returns the ids and statuses of the server's conversations, newest
// first.
func List(ctx context.Context, ws *workspace.Remote) ([]Info, error) {
	var out []Info
	q := url.Values{"limit": {"100"}}
	for {
		var page struct {
			Items      []*Info `json:"items"`
			NextPageID *string `json:"next_page_id"`
		}
		if err := ws.Request(ctx, http.MethodGet, "/api/conversations/search", q, nil, &page); err != nil {
			return nil, fmt.Errorf("remote: listing conversations: %w", err)
		}
		for _, it := range page.Items {
			if it != nil {
				out = append(out, *it)
			}
		}
		if page.NextPageID == nil || *page.NextPageID == "" || len(page.Items) == 0 {
			return out, nil
		}
		q.Set("page_id", *page.NextPageID)
	}
}

// Info is a conversation as the server lists it.
type Info struct {
	ID              string                       `json:"id"`
	Title           *string                      `json:"title"`
	ExecutionStatus conversation.ExecutionStatus `json:"execution_status"`
	CreatedAt       string                       `json:"created_at"`
	UpdatedAt       string                       `json:"updated_at"`
	Workspace       struct {
		WorkingDir string `json:"working_dir"`
	} `json:"workspace"`
}
