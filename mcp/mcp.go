package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gohands/gohands/internal/lazyregexp"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/tool"
)

// Defaults of Options.
const (
	// DefaultConnectTimeout bounds starting a server and listing its tools
	// (the reference's 30 s).
	DefaultConnectTimeout = 30 * time.Second
	// DefaultCallTimeout bounds a tool call when the server sets no
	// timeout (the reference's 300 s).
	DefaultCallTimeout = 300 * time.Second
)

// Options configures Connect. A nil *Options is valid.
type Options struct {
	// Reserved are names already taken, usually the built-in tools'. An
	// MCP tool with such a name is renamed (see Set.Renamed).
	Reserved []string
	// Logger receives connection and renaming reports; nil means
	// slog.Default().
	Logger *slog.Logger
	// ConnectTimeout bounds connecting to one server and listing its
	// tools; 0 means DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// CallTimeout bounds a tool call of a server without a configured
	// timeout; 0 means DefaultCallTimeout.
	CallTimeout time.Duration
	// HTTPClient is used for SSE and streamable HTTP servers; nil means a
	// client without timeout (streams are long-lived).
	HTTPClient *http.Client
	// Implementation is how the client introduces itself to servers; nil
	// means gohands.
	Implementation *sdk.Implementation
	// Secrets, if set, resolves references to secrets ($NAME, ${NAME},
	// ${NAME:-default}) in the string arguments of each call, as the
	// reference does with the conversation's secrets. The action keeps
	// the references; only the server sees the values. A conversation
	// passes its secret.Manager's Lookup.
	Secrets func(name string) (value string, ok bool)
	// Mask, if set, is applied to the text of every observation, so that
	// secrets a server echoes do not reach the model (secret.Manager.Mask).
	Mask func(text string) string
	// OAuth configures servers whose auth strategy is oauth2; nil uses and
	// refreshes their stored tokens, and fails a server that must be
	// authorized again.
	OAuth *OAuthOptions
}

// Rename records an MCP tool that got another name than its own because
// the name was taken by a built-in tool or by a tool of another server.
type Rename struct {
	Server  string // the server's name in the Config
	Tool    string // the tool's name on the server
	NewName string // the name the model sees
}

// ServerError is the failure to connect to one server.
type ServerError struct {
	Server string
	Err    error
}

func (e *ServerError) Error() string { return fmt.Sprintf("mcp server %q: %v", e.Server, e.Err) }
func (e *ServerError) Unwrap() error { return e.Err }

// Set is the connected servers of a Config and their tools. It is safe for
// concurrent use.
type Set struct {
	servers []*server
	tools   []tool.Tool
	renamed []Rename
	errs    []*ServerError
}

// Connect starts or connects to every enabled server of cfg (all at once),
// lists their tools and returns them.
//
// A server that cannot be reached does not stop the others: the Set holds
// every server that connected, and the error (a join of *ServerError, one
// per failed server, also listed by Set.Errors) names the ones that did
// not. The Set is never nil; close it when the conversation ends, even
// when err is not nil.
func Connect(ctx context.Context, cfg Config, opts *Options) (*Set, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.Implementation == nil {
		o.Implementation = &sdk.Implementation{Name: "gohands", Version: "1"}
	}
	set := &Set{}
	names := slices.Sorted(maps.Keys(cfg.Enabled()))
	type result struct {
		srv   *server
		tools []*sdk.Tool
		err   error
	}
	results := make([]result, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		spec := cfg[name]
		srv := &server{name: name, spec: spec, opts: &o}
		if spec.Auth != nil && spec.Auth.Strategy == AuthOAuth2 && spec.EffectiveTransport() != TransportStdio {
			srv.oauth = newOAuthHandler(name, &spec, &o)
		}
		results[i].srv = srv
		if err := spec.Validate(); err != nil {
			results[i].err = err
			continue
		}
		wg.Go(func() {
			results[i].tools, results[i].err = srv.start(ctx)
		})
	}
	wg.Wait()

	taken := make(map[string]bool)
	for _, n := range o.Reserved {
		taken[n] = true
	}
	// A name two servers share is renamed on both, so neither depends on
	// which server happens to be listed first.
	count := make(map[string]int)
	for _, r := range results {
		for _, t := range r.tools {
			count[t.Name]++
		}
	}
	var errs []error
	for _, r := range results {
		if r.err != nil {
			se := &ServerError{Server: r.srv.name, Err: r.err}
			set.errs = append(set.errs, se)
			errs = append(errs, se)
			o.Logger.Warn("mcp: server failed", "server", r.srv.name, "err", r.err)
			continue
		}
		set.servers = append(set.servers, r.srv)
		var renamed []string
		for _, st := range r.tools {
			t, err := newTool(r.srv, st)
			if err != nil {
				o.Logger.Warn("mcp: tool skipped", "server", r.srv.name, "err", err)
				continue
			}
			if taken[t.name] || count[t.name] > 1 || !validName.MatchString(t.name) {
				t.name = uniqueName(prefixed(r.srv.name, st.Name), taken)
				set.renamed = append(set.renamed, Rename{Server: r.srv.name, Tool: st.Name, NewName: t.name})
				renamed = append(renamed, st.Name+" -> "+t.name)
			}
			taken[t.name] = true
			set.tools = append(set.tools, t)
		}
		if len(renamed) > 0 {
			o.Logger.Warn("mcp: tools renamed to avoid a name collision", "server", r.srv.name, "renamed", strings.Join(renamed, ", "))
		}
		o.Logger.Info("mcp: server connected", "server", r.srv.name, "tools", len(r.tools))
	}
	return set, errors.Join(errs...)
}

// validName is what model providers accept as a tool name.
var validName = lazyregexp.New(`^[a-zA-Z0-9_-]{1,64}$`)

var invalidChars = lazyregexp.New(`[^a-zA-Z0-9_-]+`)

// prefixed returns "<server>_<tool>", cleaned to a valid tool name.
func prefixed(server, name string) string {
	s := invalidChars.ReplaceAllString(server+"_"+name, "_")
	if len(s) > 64 {
		s = s[:64]
	}
	return s
}

func uniqueName(name string, taken map[string]bool) string {
	if !taken[name] {
		return name
	}
	for i := 2; ; i++ {
		suffix := fmt.Sprintf("_%d", i)
		n := name
		if len(n)+len(suffix) > 64 {
			n = n[:64-len(suffix)]
		}
		if !taken[n+suffix] {
			return n + suffix
		}
	}
}

// Tools returns the tools of all connected servers, in server-name order
// and, within a server, in the order it listed them.
func (s *Set) Tools() []tool.Tool { return slices.Clone(s.tools) }

// Renamed returns the tools that were renamed to avoid a name collision.
func (s *Set) Renamed() []Rename { return slices.Clone(s.renamed) }

// Errors returns the servers that failed to connect.
func (s *Set) Errors() []*ServerError { return slices.Clone(s.errs) }

// OAuthState returns the OAuth state of the named oauth2 server as it is
// now (after any authorization or refresh), or nil.
func (s *Set) OAuthState(server string) *OAuthState {
	for _, srv := range s.servers {
		if srv.name == server && srv.oauth != nil {
			return srv.oauth.State()
		}
	}
	return nil
}

// Call calls the tool named name (its name on the server) of the named
// server, and returns the text of its result and its isError flag. It is
// for a caller that checks a server; an agent calls tools as tool.Tool.
func (s *Set) Call(ctx context.Context, server, name string, args map[string]any) (text string, isError bool, err error) {
	for _, srv := range s.servers {
		if srv.name != server {
			continue
		}
		if args == nil {
			args = map[string]any{}
		}
		res, err := srv.call(ctx, name, args)
		if err != nil {
			return "", false, err
		}
		var parts []string
		for _, c := range res.Content {
			if t, ok := c.(*sdk.TextContent); ok {
				parts = append(parts, t.Text)
			}
		}
		return strings.Join(parts, "\n"), res.IsError, nil
	}
	return "", false, fmt.Errorf("no connected MCP server %q", server)
}

// Servers returns the names of the connected servers.
func (s *Set) Servers() []string {
	names := make([]string, len(s.servers))
	for i, srv := range s.servers {
		names[i] = srv.name
	}
	return names
}

// Close disconnects from every server; stdio servers are stopped, with
// every process they started. Tool calls after Close fail.
func (s *Set) Close() error {
	var errs []error
	for _, srv := range s.servers {
		if err := srv.close(); err != nil {
			errs = append(errs, &ServerError{Server: srv.name, Err: err})
		}
	}
	return errors.Join(errs...)
}

// server is one connected server. Its session is replaced when the server
// crashes or disconnects.
type server struct {
	name string
	spec Server
	opts *Options

	reconnect sync.Mutex // held while replacing a dead session

	oauth *oauthHandler // oauth2 servers only; it outlives reconnections

	mu      sync.Mutex
	session *sdk.ClientSession
	proc    *process           // stdio only
	dead    error              // why the session ended, if it did
	cancel  context.CancelFunc // ends the session's context
	closed  bool
}

// crashError reports a call that failed because the server went away.
type crashError struct {
	server string
	err    error
}

func (e *crashError) Error() string {
	return fmt.Sprintf("MCP server %q disconnected (%v). It will be restarted on the next call.", e.server, e.err)
}
func (e *crashError) Unwrap() error { return e.err }

var errClosed = errors.New("the MCP connection was closed")

func (s *server) callTimeout() time.Duration {
	if s.spec.Timeout > 0 {
		return s.spec.Timeout
	}
	return s.opts.CallTimeout
}

// start connects and lists the tools.
func (s *server) start(ctx context.Context) ([]*sdk.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.ConnectTimeout)
	defer cancel()
	cs, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	var tools []*sdk.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			s.close()
			return nil, fmt.Errorf("listing tools: %w", s.explain(err))
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// connect opens a new session and installs it.
func (s *server) connect(ctx context.Context) (*sdk.ClientSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	var transport sdk.Transport
	var proc *process
	switch s.spec.EffectiveTransport() {
	case TransportStdio:
		cmd := exec.Command(s.spec.Command, s.spec.Args...)
		cmd.Dir = s.spec.Cwd
		cmd.Env = stdioEnv(s.spec.Env)
		proc = newProcess(cmd)
		transport = &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	case TransportSSE:
		if s.oauth != nil {
			return nil, errors.New("auth strategy 'oauth2' needs a streamable HTTP server, not SSE")
		}
		hc, err := s.httpClient()
		if err != nil {
			return nil, err
		}
		transport = &sdk.SSEClientTransport{Endpoint: s.spec.URL, HTTPClient: hc}
	default:
		hc, err := s.httpClient()
		if err != nil {
			return nil, err
		}
		st := &sdk.StreamableClientTransport{Endpoint: s.spec.URL, HTTPClient: hc, MaxRetries: -1}
		if s.oauth != nil {
			st.OAuthHandler = s.oauth
		}
		transport = st
	}
	client := sdk.NewClient(s.opts.Implementation, &sdk.ClientOptions{
		Logger:       s.opts.Logger.With("mcp_server", s.name),
		Capabilities: &sdk.ClientCapabilities{}, // no roots: we serve none
	})
	s.proc = proc
	// The session's streams (SSE, streamable HTTP) live as long as the
	// context given to Connect, so that context must outlive ctx, which
	// only bounds the handshake.
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	cs, err := client.Connect(life, transport, nil)
	if !stop() {
		// ctx ended during the handshake: report that, not the
		// cancellation it caused.
		if err == nil {
			cs.Close()
		}
		err = fmt.Errorf("connecting: %w", ctx.Err())
	}
	if err != nil {
		cancel()
		if proc != nil {
			proc.kill()
		}
		return nil, s.explainLocked(err)
	}
	s.session, s.dead, s.cancel = cs, nil, cancel
	go func() {
		err := cs.Wait()
		if err == nil {
			err = errClosed
		}
		s.mu.Lock()
		if s.session == cs {
			s.dead = err
		}
		s.mu.Unlock()
	}()
	return cs, nil
}

// explain adds the tail of a stdio server's stderr to err: that is where
// servers say why they failed.
func (s *server) explain(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.explainLocked(err)
}

func (s *server) explainLocked(err error) error {
	if s.proc == nil {
		return err
	}
	if tail := strings.TrimSpace(s.proc.stderr.String()); tail != "" {
		return fmt.Errorf("%w; server stderr: %s", err, tail)
	}
	return err
}

func (s *server) httpClient() (*http.Client, error) {
	h, err := s.spec.headers()
	if err != nil {
		return nil, err
	}
	base := s.opts.HTTPClient
	if base == nil {
		base = &http.Client{}
	}
	if len(h) == 0 {
		return base, nil
	}
	c := *base
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.Transport = &headerTransport{base: rt, headers: h}
	return &c, nil
}

type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}

// stdioDefaultEnv are the variables a stdio server inherits, as the MCP
// SDKs do: enough to find programs and a home, not the agent's secrets.
var stdioDefaultEnv = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "TMPDIR", "LANG"}

func stdioEnv(extra map[string]secret.String) []string {
	var env []string
	for _, k := range stdioDefaultEnv {
		if v, ok := os.LookupEnv(k); ok {
			if _, over := extra[k]; !over {
				env = append(env, k+"="+v)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		env = append(env, k+"="+extra[k].Value())
	}
	return env
}

// session returns a live session. A session found dead is reported once
// (the call fails with a crashError) and replaced on the next call.
func (s *server) live(ctx context.Context) (*sdk.ClientSession, error) {
	s.mu.Lock()
	cs, dead, closed := s.session, s.dead, s.closed
	if dead != nil && cs != nil {
		s.mu.Unlock()
		s.drop(cs)
		return nil, &crashError{server: s.name, err: s.explain(dead)}
	}
	s.mu.Unlock()
	if closed {
		return nil, errClosed
	}
	if cs != nil {
		return cs, nil
	}
	// One reconnection at a time: concurrent calls wait for it and share
	// the new session.
	s.reconnect.Lock()
	defer s.reconnect.Unlock()
	s.mu.Lock()
	cs = s.session
	s.mu.Unlock()
	if cs != nil {
		return cs, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.ConnectTimeout)
	defer cancel()
	s.opts.Logger.Info("mcp: reconnecting", "server", s.name)
	cs, err := s.connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("reconnecting to MCP server %q: %w", s.name, err)
	}
	return cs, nil
}

// drop ends a session found dead and what is left of its server.
func (s *server) drop(cs *sdk.ClientSession) {
	s.mu.Lock()
	var cancel context.CancelFunc
	if s.session == cs {
		s.session, cancel = nil, s.cancel
		s.cancel = nil
	}
	s.mu.Unlock()
	cs.Close()
	if cancel != nil {
		cancel()
	}
	s.reap()
}

// reap kills what is left of a stdio server's process group.
func (s *server) reap() {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p != nil {
		p.kill()
	}
}

func (s *server) call(ctx context.Context, name string, args any) (*sdk.CallToolResult, error) {
	cs, err := s.live(ctx)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, s.callTimeout())
	defer cancel()
	res, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err == nil {
		return res, nil
	}
	if cerr := cctx.Err(); cerr != nil {
		return nil, cerr
	}
	if errors.Is(err, sdk.ErrConnectionClosed) || s.isDead(cs) {
		s.drop(cs)
		return nil, &crashError{server: s.name, err: s.explain(err)}
	}
	return nil, err
}

// isDead reports whether cs has ended, waiting briefly: a crash is noticed
// by the reader shortly after the call fails.
func (s *server) isDead(cs *sdk.ClientSession) bool {
	for range 20 {
		s.mu.Lock()
		dead := s.session != cs || s.dead != nil
		s.mu.Unlock()
		if dead {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// close ends the session and stops a stdio server's processes. It
// returns nil: an error of the session's own shutdown (a server already
// gone) leaves nothing to clean up, and is only logged.
func (s *server) close() error {
	s.mu.Lock()
	s.closed = true
	cs, cancel := s.session, s.cancel
	s.session = nil
	s.mu.Unlock()
	var err error
	if cs != nil {
		err = cs.Close()
	}
	if cancel != nil {
		cancel()
	}
	s.reap()
	if err != nil {
		// A stdio server ended by a signal reports that as the close
		// error, and a remote one that is already gone fails the session
		// DELETE; either way nothing is left on our side.
		s.opts.Logger.Debug("mcp: server closed", "server", s.name, "err", err)
	}
	return nil
}
