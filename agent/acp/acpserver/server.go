// Package acpserver serves gohands conversations to an Agent Client
// Protocol client, an editor such as Zed, on a pair of streams (the
// program's stdin and stdout): the other direction of package acp.
//
// Each ACP session is a persisted conversation (its id is the session id),
// so session/load continues one, replaying its history as session/update
// notifications. A prompt sends the user message and runs the agent; its
// events stream back as agent message and thought chunks, tool calls
// updated in place, and plans (from the task tracker). Actions the
// session's mode holds become session/request_permission requests. The
// modes are the confirmation policies: always ask, always approve, ask
// for risky actions (rated by the rule-based analyzer). MCP servers the
// client passes are connected as tools. session/list lists the stored
// sessions and session/resume continues one without replaying it; the
// "model" config option and the /model and /mode commands switch a
// session's model and mode.
package acpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/uuid"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/security"
)

// The session modes.
const (
	ModeAsk     = "always-ask"
	ModeApprove = "always-approve"
	ModeRisky   = "ask-risky"
)

var modes = []sdk.SessionMode{
	{Id: ModeAsk, Name: "Always ask", Description: new("Every action waits for your permission.")},
	{Id: ModeApprove, Name: "Always approve", Description: new("Actions run without asking.")},
	{Id: ModeRisky, Name: "Ask for risky actions", Description: new("Actions rated HIGH or of unknown risk wait for your permission.")},
}

// Options configure Serve.
type Options struct {
	// NewAgent returns the agent of a session. mcp holds the MCP servers
	// the client passed, in the reference's mcp_config format (server
	// name → server); the agent should connect them as tools. Required.
	NewAgent func(mcp map[string]json.RawMessage) (conversation.Agent, error)
	// PersistenceDir is where sessions are stored. Required.
	PersistenceDir string
	// Mode is the mode of new sessions; ModeAsk if empty (an editor's
	// user approves each action unless they choose otherwise).
	Mode string
	// Name and Version identify the agent to the client.
	Name, Version string
	// Logger gets diagnostics; nil discards them. Never stdout: it is
	// the protocol's.
	Logger *slog.Logger
	// Model is the model new sessions use, and Models those a session may
	// switch to (the "model" config option, the /model command) with the
	// LLM configuration SwitchModel returns. Without SwitchModel the model
	// is not offered.
	Model       string
	Models      []string
	SwitchModel func(model string) (llm.Config, error)
}

// Serve answers the client on r and w until the client closes r or ctx
// ends. Open sessions are closed when it returns.
func Serve(ctx context.Context, r io.Reader, w io.Writer, opts *Options) error {
	if opts == nil || opts.NewAgent == nil || opts.PersistenceDir == "" {
		return errors.New("acpserver: NewAgent and PersistenceDir are required")
	}
	o := *opts
	if o.Mode == "" {
		o.Mode = ModeAsk
	}
	if policyOf(o.Mode) == nil {
		return fmt.Errorf("acpserver: unknown mode %q", o.Mode)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Name == "" {
		o.Name = "gohands"
	}
	s := &server{opts: &o, sessions: map[string]*session{}, ready: make(chan struct{})}
	s.conn = sdk.NewAgentSideConnection(s, w, r)
	s.conn.SetLogger(o.Logger)
	close(s.ready)
	select {
	case <-s.conn.Done():
	case <-ctx.Done():
	}
	s.mu.Lock()
	all := s.sessions
	s.sessions = nil
	s.mu.Unlock()
	var errs []error
	for _, ss := range all {
		errs = append(errs, ss.close())
	}
	return errors.Join(errs...)
}

type server struct {
	opts *Options
	// conn is set once ready is closed: the connection reads and answers
	// requests (a session's first updates) before its constructor returns.
	conn  *sdk.AgentSideConnection
	ready chan struct{}

	mu       sync.Mutex
	sessions map[string]*session
}

var (
	_ sdk.Agent       = (*server)(nil)
	_ sdk.AgentLoader = (*server)(nil)
)

// policyOf is the confirmation policy of a mode, nil for an unknown one.
func policyOf(mode string) security.ConfirmationPolicy {
	switch mode {
	case ModeAsk:
		return security.AlwaysConfirm{}
	case ModeApprove:
		return security.NeverConfirm{}
	case ModeRisky:
		return security.NewConfirmRisky()
	}
	return nil
}

// modeOf is the mode of a policy; policies other than the modes' count
// as always-ask, the closest.
func modeOf(p security.ConfirmationPolicy) string {
	switch p.(type) {
	case security.NeverConfirm, *security.NeverConfirm:
		return ModeApprove
	case *security.ConfirmRisky:
		return ModeRisky
	}
	return ModeAsk
}

func (s *server) Initialize(_ context.Context, req sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	return sdk.InitializeResponse{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: sdk.PromptCapabilities{Image: true, EmbeddedContext: true},
			McpCapabilities:    sdk.McpCapabilities{Http: true, Sse: true},
			SessionCapabilities: sdk.SessionCapabilities{
				List:   &sdk.SessionListCapabilities{},
				Resume: &sdk.SessionResumeCapabilities{},
			},
		},
		AgentInfo:   &sdk.Implementation{Name: s.opts.Name, Version: s.opts.Version},
		AuthMethods: []sdk.AuthMethod{},
	}, nil
}

func (s *server) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

func (s *server) NewSession(ctx context.Context, req sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	ss, err := s.open(ctx, "", req.Cwd, req.McpServers)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	ss.announce()
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(ss.conv.ID()), Modes: ss.modes(), ConfigOptions: ss.configOptions()}, nil
}

func (s *server) LoadSession(ctx context.Context, req sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	id := string(req.SessionId)
	if _, err := filepath.Abs(req.Cwd); err != nil || id == "" {
		return sdk.LoadSessionResponse{}, sdk.NewInvalidParams(map[string]any{"error": "sessionId and an absolute cwd are required"})
	}
	if !exists(s.opts.PersistenceDir, id) {
		return sdk.LoadSessionResponse{}, &sdk.RequestError{Code: -32002, Message: "Resource not found", Data: map[string]any{"sessionId": id}}
	}
	ss, err := s.open(ctx, id, req.Cwd, req.McpServers)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	// The history goes out before the answer, as the protocol asks.
	for _, e := range ss.history(ctx) {
		ss.replay(e)
	}
	ss.announce()
	if err := ss.flush(ctx); err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	return sdk.LoadSessionResponse{Modes: ss.modes(), ConfigOptions: ss.configOptions()}, nil
}

// open creates or opens the conversation of a session.
func (s *server) open(ctx context.Context, id, cwd string, servers []sdk.McpServer) (*session, error) {
	if !filepath.IsAbs(cwd) {
		return nil, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("cwd %q is not absolute", cwd)})
	}
	mcp, err := mcpConfig(servers)
	if err != nil {
		return nil, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	ag, err := s.opts.NewAgent(mcp)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if old := s.sessions[id]; id != "" && old != nil {
		delete(s.sessions, id)
		s.mu.Unlock()
		old.close()
	} else {
		s.mu.Unlock()
	}
	// A loaded session keeps its stored policy, hence its mode.
	policy := policyOf(s.opts.Mode)
	if id == "" {
		id = uuid.NewString()
	} else {
		policy = nil
	}
	ss := &session{s: s, id: sdk.SessionId(id), mode: s.opts.Mode, model: s.opts.Model, out: make(chan func(), 1024)}
	if policy == nil {
		// A stored session keeps the model it last used.
		if sum, ok, _ := filestore.Describe(s.opts.PersistenceDir, id); ok && sum.Model != "" {
			ss.model = sum.Model
		}
	}
	go ss.send()
	// OnEvent runs on the commit path, so the updates of a turn are
	// queued before Run returns and the turn's answer can wait for them.
	conv, err := conversation.New(ctx, ag, cwd, &conversation.LocalOptions{
		ID:                 id,
		Backend:            filestore.NewBackend(s.opts.PersistenceDir, nil),
		ConfirmationPolicy: policy,
		SecurityAnalyzer:   &security.RuleAnalyzer{WorkDir: cwd},
		Logger:             s.opts.Logger,
		OnEvent:            ss.forward,
	})
	if err != nil {
		close(ss.out)
		return nil, err
	}
	ss.conv = conv
	ss.mode = modeOf(conv.State().Fields().Policy())
	if m := ss.model; policy == nil && m != "" && m != s.opts.Model && s.opts.SwitchModel != nil {
		// NewAgent gave the default model; the session goes on with its own.
		if err := ss.setModel(ctx, m); err != nil {
			s.opts.Logger.Warn("acp: the session's model cannot be restored", "model", m, "err", err)
		}
	}
	s.mu.Lock()
	s.sessions[conv.ID()] = ss
	s.mu.Unlock()
	return ss, nil
}

func (s *server) session(id sdk.SessionId) (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.sessions[string(id)]
	if ss == nil {
		return nil, &sdk.RequestError{Code: -32002, Message: "Resource not found", Data: map[string]any{"sessionId": string(id)}}
	}
	return ss, nil
}

func (s *server) SetSessionMode(ctx context.Context, req sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	ss, err := s.session(req.SessionId)
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	p := policyOf(string(req.ModeId))
	if p == nil {
		return sdk.SetSessionModeResponse{}, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("unknown mode %q", req.ModeId)})
	}
	if err := ss.conv.SetConfirmationPolicy(ctx, p); err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	ss.mu.Lock()
	ss.mode = string(req.ModeId)
	ss.mu.Unlock()
	return sdk.SetSessionModeResponse{}, nil
}

func (s *server) Cancel(ctx context.Context, req sdk.CancelNotification) error {
	ss, err := s.session(req.SessionId)
	if err != nil {
		return nil // nothing to cancel
	}
	return ss.conv.Pause(ctx)
}

func (s *server) Prompt(ctx context.Context, req sdk.PromptRequest) (sdk.PromptResponse, error) {
	ss, err := s.session(req.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	return ss.prompt(ctx, req.Prompt)
}

func (s *server) CloseSession(_ context.Context, req sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	s.mu.Lock()
	ss := s.sessions[string(req.SessionId)]
	delete(s.sessions, string(req.SessionId))
	s.mu.Unlock()
	if ss != nil {
		return sdk.CloseSessionResponse{}, ss.close()
	}
	return sdk.CloseSessionResponse{}, nil
}

// mcpConfig turns the client's MCP servers into the reference's
// mcp_config (name → server).
func mcpConfig(servers []sdk.McpServer) (map[string]json.RawMessage, error) {
	if len(servers) == 0 {
		return nil, nil
	}
	out := make(map[string]json.RawMessage, len(servers))
	for _, s := range servers {
		var name string
		var v map[string]any
		switch {
		case s.Stdio != nil:
			env := map[string]string{}
			for _, e := range s.Stdio.Env {
				env[e.Name] = e.Value
			}
			name = s.Stdio.Name
			v = map[string]any{"command": s.Stdio.Command, "args": s.Stdio.Args, "env": env}
		case s.Http != nil:
			name = s.Http.Name
			v = map[string]any{"url": s.Http.Url, "transport": "http", "headers": headers(s.Http.Headers)}
		case s.Sse != nil:
			name = s.Sse.Name
			v = map[string]any{"url": s.Sse.Url, "transport": "sse", "headers": headers(s.Sse.Headers)}
		default:
			return nil, errors.New("unsupported MCP server transport")
		}
		if name == "" {
			return nil, errors.New("an MCP server has no name")
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		out[name] = b
	}
	return out, nil
}

func headers(hs []sdk.HttpHeader) map[string]string {
	m := make(map[string]string, len(hs))
	for _, h := range hs {
		m[h.Name] = h.Value
	}
	return m
}

// text is the text of a prompt: text blocks, and the text of embedded
// resources as the file they quote.
func text(blocks []sdk.ContentBlock) (string, []event.Content) {
	var parts []string
	var images []event.Content
	for _, b := range blocks {
		switch {
		case b.Text != nil:
			parts = append(parts, b.Text.Text)
		case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
			r := b.Resource.Resource.TextResourceContents
			parts = append(parts, fmt.Sprintf("<file uri=%q>\n%s\n</file>", r.Uri, r.Text))
		case b.ResourceLink != nil:
			parts = append(parts, "@"+b.ResourceLink.Uri)
		case b.Image != nil:
			images = append(images, event.Content{Type: event.ContentImage, ImageURLs: []string{"data:" + b.Image.MimeType + ";base64," + b.Image.Data}})
		}
	}
	return strings.Join(parts, "\n"), images
}

// connection is the client connection, once Serve has set it.
func (s *server) connection() *sdk.AgentSideConnection {
	<-s.ready
	return s.conn
}
