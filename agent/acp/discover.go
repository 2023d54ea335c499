package acp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	sdk "github.com/coder/acp-go-sdk"
)

// ModelInfo is one model an ACP server offers for a session.
type ModelInfo struct {
	ModelID     string  `json:"model_id"`
	Name        *string `json:"name"`
	Description *string `json:"description"`
}

// DiscoveryError is why a server could not report its models: the codes
// of a conversation's start failure (CodeAuthRequired, CodeStartupTimeout,
// CodeSpawn, CodeInit).
type DiscoveryError struct {
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// Discovery is what an ACP server reports for a fresh session, before
// any conversation: its name and version, its default model and the
// models it offers, or why it could not say.
type Discovery struct {
	AgentName       *string     `json:"agent_name"`
	AgentVersion    *string     `json:"agent_version"`
	CurrentModelID  *string     `json:"current_model_id"`
	AvailableModels []ModelInfo `json:"available_models"`
	// SupportsRuntimeModelSwitch is whether a conversation can switch
	// among the models live: the server opened a session and is one
	// known to take a switch (see SupportsRuntimeModelSwitch).
	SupportsRuntimeModelSwitch bool            `json:"supports_runtime_model_switch"`
	Error                      *DiscoveryError `json:"error"`
}

// Discover starts the server of a (its command, arguments and startup
// timeout; its model, MCP servers and context are not used) in dir with
// the environment variables env added to ours, opens a session, reports
// what the server says of its models, and stops it. A server that
// cannot start, authenticate or open a session is reported in the
// Discovery's Error, never returned as an error.
func Discover(ctx context.Context, a *Agent, env map[string]string, dir string) Discovery {
	ctx, cancel := context.WithTimeout(ctx, seconds(a.StartupTimeout))
	defer cancel()
	d, srv, err := discover(ctx, a, environ(env), dir)
	if srv != nil {
		defer srv.p.stop()
	}
	if err == nil {
		if d.AvailableModels == nil {
			d.AvailableModels = []ModelInfo{}
		}
		return d
	}
	if ctx.Err() == context.DeadlineExceeded && (srv == nil || srv.p.broken() == nil) {
		err = fmt.Errorf("the ACP server did not start within %gs (acp_startup_timeout): %w", a.StartupTimeout, context.DeadlineExceeded)
	} else if srv != nil {
		if b := srv.p.broken(); b != nil {
			err = fmt.Errorf("%w: %v", err, b)
		}
	}
	de := &DiscoveryError{Code: initCode(err), Detail: detail(err)}
	if e := (*Error)(nil); errors.As(err, &e) {
		de.Code, de.Detail = e.Code, e.Detail
	}
	return Discovery{AvailableModels: []ModelInfo{}, Error: de}
}

func discover(ctx context.Context, a *Agent, env []string, dir string) (Discovery, *server, error) {
	var d Discovery
	argv := a.argv()
	if len(argv) == 0 {
		return d, nil, &Error{Code: CodeSpawn, Detail: "acp_command is empty", Err: errors.New("acp_command is empty")}
	}
	p, err := spawn(argv, env, dir)
	if err != nil {
		return d, nil, &Error{Code: CodeSpawn, Detail: fmt.Sprintf("starting %s: %v", argv[0], err), Err: err}
	}
	srv := &server{p: p}
	srv.conn = sdk.NewClientSideConnection(probeClient{}, p.stdin, p.out)
	srv.conn.SetLogger(slog.New(slog.DiscardHandler))
	init, err := call(ctx, srv, func(ctx context.Context) (sdk.InitializeResponse, error) {
		return srv.conn.Initialize(ctx, sdk.InitializeRequest{
			ProtocolVersion: sdk.ProtocolVersionNumber,
			ClientInfo:      &sdk.Implementation{Name: "gohands", Version: "dev"},
		})
	})
	if err != nil {
		return d, srv, fmt.Errorf("initialize: %w", err)
	}
	if i := init.AgentInfo; i != nil {
		if i.Name != "" {
			d.AgentName = &i.Name
		}
		if i.Version != "" {
			d.AgentVersion = &i.Version
		}
	}
	if id := authMethod(init.AuthMethods, env); id != "" {
		if _, err := call(ctx, srv, func(ctx context.Context) (sdk.AuthenticateResponse, error) {
			return srv.conn.Authenticate(ctx, sdk.AuthenticateRequest{MethodId: id})
		}); err != nil {
			return d, srv, fmt.Errorf("authenticate %s: %w", id, err)
		}
	}
	resp, err := call(ctx, srv, func(ctx context.Context) (sdk.NewSessionResponse, error) {
		return srv.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: dir, McpServers: []sdk.McpServer{}})
	})
	if err != nil {
		return d, srv, fmt.Errorf("session/new: %w", err)
	}
	if d.AgentName != nil {
		d.SupportsRuntimeModelSwitch = SupportsRuntimeModelSwitch(*d.AgentName)
	}
	if _, cur, available, ok := sessionModels(resp.ConfigOptions, resp.Models); ok {
		d.CurrentModelID, d.AvailableModels = &cur, available
	}
	return d, srv, nil
}

// probeClient answers a server during discovery, when no turn runs: it
// takes session updates and refuses everything else.
type probeClient struct{}

var errProbe = errors.New("not available while discovering models")

func (probeClient) SessionUpdate(context.Context, sdk.SessionNotification) error { return nil }
func (probeClient) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, errProbe
}
func (probeClient) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, errProbe
}
func (probeClient) RequestPermission(context.Context, sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	return sdk.RequestPermissionResponse{}, errProbe
}
func (probeClient) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, errProbe
}
func (probeClient) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, errProbe
}
func (probeClient) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, errProbe
}
func (probeClient) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, errProbe
}
func (probeClient) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, errProbe
}
