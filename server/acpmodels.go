package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/gohands/gohands/agent/acp"
)

// POST /api/acp/models starts an ACP server in a throwaway session and
// reports what it says of its models (acp.Discover), as the reference's
// does before a conversation starts: a failure to start comes back in
// the answer's error, not as an HTTP error. A good answer is reused for
// five minutes unless refresh asks again; at most two servers are asked
// at once. The command is acp_command: gohands has no default launch
// command per acp_server (the reference's pinned npx packages), so one
// without acp_command is refused. supports_runtime_model_switch is true
// for a server known to take a live switch (acp.SupportsRuntimeModelSwitch).

const acpDiscoveryTTL = 5 * time.Minute

type acpModelsRequest struct {
	AgentSettings *acpDiscoverySettings      `json:"agent_settings" required:"true"`
	Secrets       map[string]json.RawMessage `json:"secrets"`
	Refresh       bool                       `json:"refresh"`
}

// acpDiscoverySettings are the launch fields of the reference's
// ACPAgentSettings; its other members are accepted and not used.
type acpDiscoverySettings struct {
	AgentKind         *string  `json:"agent_kind,omitempty" enum:"acp"`
	ACPServer         *string  `json:"acp_server,omitempty" enum:"claude-code,codex,gemini-cli,kimi-code,pi,opencode,custom"`
	ACPCommand        []string `json:"acp_command,omitempty"`
	ACPArgs           []string `json:"acp_args,omitempty"`
	ACPSessionMode    *string  `json:"acp_session_mode,omitempty"`
	ACPStartupTimeout *float64 `json:"acp_startup_timeout,omitempty" exclusiveMinimum:"0"`
}

// acpDiscoveries keeps good answers and bounds the servers asked at once.
type acpDiscoveries struct {
	mu      sync.Mutex
	results map[string]acpDiscoveryResult
	slots   chan struct{}
}

type acpDiscoveryResult struct {
	until time.Time
	d     acp.Discovery
}

func (s *Server) acpModelsRoute() *route {
	return &route{method: "POST", path: "/api/acp/models", summary: "Start an ACP server in a throwaway session and report its models", tag: "ACP", body: acpModelsRequest{}, resp: acp.Discovery{}, errors: []int{422}, h: handle(s, nil, s.handleACPModels)}
}

func (s *Server) handleACPModels(in *request[none, acpModelsRequest]) (any, error) {
	st := in.body.AgentSettings
	if st == nil {
		return nil, &invalidError{loc: []any{"body", "agent_settings"}, typ: "missing", msg: "Field required"}
	}
	if st.AgentKind != nil && *st.AgentKind != "acp" {
		return nil, &invalidError{loc: []any{"body", "agent_settings", "agent_kind"}, typ: "literal_error", msg: "Input should be 'acp'"}
	}
	server := "claude-code"
	if st.ACPServer != nil {
		server = *st.ACPServer
	}
	if !slices.Contains(acpServers, server) {
		return nil, &invalidError{loc: []any{"body", "agent_settings", "acp_server"}, typ: "literal_error", msg: "Input should be 'claude-code', 'codex', 'gemini-cli', 'kimi-code', 'pi', 'opencode' or 'custom'"}
	}
	timeout := acp.DefaultStartupTimeout
	if t := st.ACPStartupTimeout; t != nil {
		if *t <= 0 {
			return nil, &invalidError{loc: []any{"body", "agent_settings", "acp_startup_timeout"}, typ: "greater_than", msg: "Input should be greater than 0"}
		}
		timeout = *t
	}
	switch {
	case len(st.ACPCommand) > 0:
	case server == "custom":
		return nil, statusErr(422, "%s", acpCustomNoCommand)
	default:
		return nil, statusErr(422, "No default ACP command for acp_server='%s' in gohands: set acp_command", server)
	}
	srcs, err := s.decodeSecrets(in.body.Secrets, false, true)
	if err != nil {
		return nil, err
	}
	env := map[string]string{}
	for name, src := range srcs {
		v, err := src.Resolve(in.r.Context())
		if err != nil {
			s.log.Warn("acp model discovery: a secret cannot be resolved", "secret", name)
			continue
		}
		env[name] = v
	}
	key := acpDiscoveryKey(st, env)
	c := &s.acpDiscoveries
	c.mu.Lock()
	if c.results == nil {
		c.results, c.slots = map[string]acpDiscoveryResult{}, make(chan struct{}, 2)
	}
	r, ok := c.results[key]
	c.mu.Unlock()
	if ok && !in.body.Refresh && time.Now().Before(r.until) {
		return r.d, nil
	}
	select {
	case c.slots <- struct{}{}:
	case <-in.r.Context().Done():
		return nil, in.r.Context().Err()
	}
	defer func() { <-c.slots }()
	a := &acp.Agent{Command: st.ACPCommand, Args: st.ACPArgs, StartupTimeout: timeout, SessionMode: st.ACPSessionMode}
	root := s.opts.ConversationsPath
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(root, ".acp-model-discovery-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	work := filepath.Join(dir, "workspace")
	if err := os.Mkdir(work, 0o755); err != nil {
		return nil, err
	}
	d := acp.Discover(in.r.Context(), a, env, work)
	if d.Error == nil {
		c.mu.Lock()
		c.results[key] = acpDiscoveryResult{time.Now().Add(acpDiscoveryTTL), d}
		c.mu.Unlock()
	} else {
		s.log.Info("acp model discovery failed", "acp_server", server, "code", d.Error.Code)
	}
	return d, nil
}

// acpDiscoveryKey names what a discovery's answer depends on: the
// command, its arguments, the session mode and the credentials.
func acpDiscoveryKey(st *acpDiscoverySettings, env map[string]string) string {
	b, _ := json.Marshal([]any{st.ACPCommand, st.ACPArgs, st.ACPSessionMode, env})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
