package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/mcp"
	"github.com/gohands/gohands/plugin"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/security"
	"github.com/gohands/gohands/skill"
	"github.com/gohands/gohands/telemetry/oteltrace"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/askoracle"
	"github.com/gohands/gohands/tools/preset"
	"github.com/gohands/gohands/tools/routetask"
	"github.com/gohands/gohands/workspace"
	"github.com/gohands/gohands/workspace/docker"

	"golang.org/x/sys/unix"
)

// prepared is everything a run needs before its conversation is opened:
// the model, the agent, where it works and what it resumes.
type prepared struct {
	cfg       llm.Config
	keySource string   // where the key came from, for a 401 hint
	model     *llm.LLM // nil with --acp
	agent     conversation.Agent
	mcp       *mcp.Set
	workDir   string
	base      string // persistence directory
	id        string // "" for a new conversation with a fresh id
	resume    bool
	sources   map[string]secret.Source
	keyEnv    map[string]secret.String // the key variables before they were hidden
	confirm   string
	policy    security.ConfirmationPolicy
	analyzer  security.Analyzer
	// stored is what the resumed conversation's own security settings
	// are, when no --confirm (flag or settings) chose others.
	stored storedSafety
	logger *slog.Logger
	// profiles are the settings' llm_profiles, which tools consult (the
	// "oracle" one adds ask_oracle).
	profiles llm.Profiles
	// hookConfig, if set, is the conversation's hook_config: the
	// workspace's hooks and those of the --plugin sources.
	hookConfig json.RawMessage
	// plugins are the --plugin sources an agent server loads (--server).
	plugins []plugin.Source
	// creating is set when resuming a creation that stopped after storing
	// the task and before the base state: a task given again is not sent
	// twice (conversation.LocalOptions.FirstMessage).
	creating bool
}

// close stops what prepare started.
func (p *prepared) close() {
	if p.mcp != nil {
		p.mcp.Close()
	}
}

// prepare reads the settings, the flags and the environment, and builds
// the model and the agent. needTask is false when the caller asks for a
// task itself (the interactive mode).
func (a *app) prepare(ctx context.Context, f *runFlags) (*prepared, error) {
	st, _, err := a.loadSettings()
	if err != nil {
		return nil, err
	}
	p := &prepared{}
	if p.base, err = a.persistenceDir(f.persistenceDir); err != nil {
		return nil, err
	}
	if err := checkRunNumbers(f); err != nil {
		return nil, err
	}
	// The conversation to resume, if any, decides the workspace.
	stored, err := p.findStored(f)
	if err != nil {
		return nil, err
	}
	if p.workDir, err = a.workspace(f, stored); err != nil {
		return nil, err
	}
	if p.sources, err = a.parseSecrets(f.secrets); err != nil {
		return nil, err
	}
	if f.acp == "" {
		if p.cfg, p.keySource, err = a.llmConfig(f, st, stored); err != nil {
			return nil, err
		}
	} else if f.mcpConfig != "" {
		return nil, usageErr("--mcp-config cannot be used with --acp: the ACP server brings its own tools")
	}
	acpKeys, secretNames, err := a.hideKeys(f, st, p)
	if err != nil {
		return nil, err
	}
	p.confirm = f.confirm
	if p.confirm == "" {
		p.confirm = cmpOr(st.Confirm, "never")
	}
	if p.policy, p.analyzer, err = confirmPolicy(p.confirm, p.workDir, secretNames); err != nil {
		return nil, err
	}
	if f.confirm == "" && st.Confirm == "" && p.resume && !p.creating {
		p.stored = readStoredSafety(stored.Dir)
	}

	level := slog.LevelWarn
	if f.verbose {
		level = slog.LevelDebug
	}
	p.logger = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: level}))
	llmLog := p.logger
	if !f.verbose {
		// Retries are reported by OnRetry, in one readable line.
		llmLog = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	}
	if f.acp != "" {
		ag, err := acpAgent(f.acp)
		if err != nil {
			return nil, err
		}
		if len(acpKeys) > 0 {
			ag.Env = acpKeys
		}
		p.agent = ag
		return p, nil
	}
	if err := a.buildAgent(ctx, f, st, p, llmLog); err != nil {
		return nil, err
	}
	return p, nil
}

// checkRunNumbers refuses negative limits.
func checkRunNumbers(f *runFlags) error {
	switch {
	case f.goal < 0:
		return usageErr("--goal %d: must not be negative", f.goal)
	case f.maxBudget < 0:
		return usageErr("--max-budget %v: must not be negative", f.maxBudget)
	case f.maxIterations < 0:
		return usageErr("--max-iterations %d: must not be negative", f.maxIterations)
	}
	return nil
}

// findStored sets the id of the conversation --conversation-id names (a
// UUID or a unique prefix of one) and whether it is stored, and returns
// what is stored of it.
func (p *prepared) findStored(f *runFlags) (convInfo, error) {
	var stored convInfo
	if f.conversationID == "" {
		return stored, nil
	}
	u, err := uuid.Parse(f.conversationID)
	if err != nil && looksLikeID(f.conversationID) {
		// A unique prefix, as show, rm and -r take.
		c, ferr := findConversation(p.base, f.conversationID)
		if ferr != nil {
			return stored, usageErr("--conversation-id: %v", ferr)
		}
		u, err = uuid.Parse(c.ID)
	}
	if err != nil {
		return stored, usageErr("--conversation-id %q: not a conversation id (a UUID or a unique prefix of one)", f.conversationID)
	}
	p.id = u.String()
	if stored, p.resume, err = storedConversation(p.base, p.id); err != nil {
		return stored, &exitErr{code: exitError, msg: fmt.Sprintf("conversation %s: %v", p.id, err)}
	}
	p.creating = p.resume && stored.Status == "" // events, no base state yet
	return stored, nil
}

// hideKeys takes the model's keys and the secrets out of the environment
// (the agent's commands inherit it; the terminal exports a secret only to
// the commands that name it) and keeps what the keys held in p.keyEnv. It
// returns the keys an ACP server gets, and the secrets' names.
func (a *app) hideKeys(f *runFlags, st settings, p *prepared) (event.Map[string, secret.String], []string, error) {
	hide := append([]string{envAPIKey}, allKeyVars()...)
	// An ACP server authenticates itself with the user's provider keys:
	// it gets them as acp_env (secrets), not from this process, whose
	// environment the agent's commands inherit.
	acpKeys := event.Map[string, secret.String]{}
	if f.acp != "" {
		for _, name := range hide {
			if v := a.getenv(name); v != "" {
				acpKeys[name] = secret.New(v)
			}
		}
	}
	if st.APIKeyEnv != "" {
		hide = append(hide, st.APIKeyEnv)
	}
	// What the hidden variables held stays known to this process, for
	// /model to find another provider's key.
	p.keyEnv = map[string]secret.String{}
	for _, name := range hide {
		if v := a.getenv(name); v != "" {
			p.keyEnv[name] = secret.New(v)
		}
	}
	// The tracing exporter read its headers (a backend's key) at start.
	hide = append(hide, oteltrace.CredentialVars()...)
	var secretNames []string
	for name := range p.sources {
		hide = append(hide, name)
		secretNames = append(secretNames, name)
	}
	for _, name := range hide {
		if err := a.unsetenv(name); err != nil {
			return nil, nil, &exitErr{code: exitError, msg: fmt.Sprintf("unsetting $%s: %v", name, err)}
		}
	}
	return acpKeys, secretNames, nil
}

// buildAgent builds the model, connects the MCP servers and makes the
// preset's agent with them.
func (a *app) buildAgent(ctx context.Context, f *runFlags, st settings, p *prepared, llmLog *slog.Logger) error {
	cfg := p.cfg
	var err error
	p.model, err = llm.New(cfg, &llm.Options{
		Logger: llmLog,
		OnRetry: func(attempt int, wait time.Duration, err error) {
			if a.onRetry != nil {
				a.onRetry(attempt, max(cfg.NumRetries, 1), wait, err)
				return
			}
			printRetry(a.stderr, attempt, max(cfg.NumRetries, 1), wait, err)
		},
		Retryable: worthRetrying,
	})
	if err != nil {
		return usageErr("model %q: %v", cfg.Model, err)
	}
	// Streamed replies show as they are written.
	cfg.Stream = true
	if path, err := a.settingsPath(); err == nil {
		if p.profiles, err = llm.LoadProfiles(path); err != nil {
			return usageErr("llm_profiles: %v", err)
		}
	}
	popts := &preset.Options{SubAgents: true, Browser: f.browser}
	if _, ok := p.profiles[askoracle.Profile]; ok {
		popts.ExtraTools = append(popts.ExtraTools, tool.Spec{Name: askoracle.Name})
	}
	// As in a start request's tools, a built-in (switch_llm, think, ...)
	// is asked for by class name in include_default_tools.
	var builtins []string
	for _, name := range f.tools {
		if kind, ok := agent.BuiltinKind(name); ok {
			builtins = append(builtins, kind)
			continue
		}
		if !slices.Contains(tool.Registered(), name) {
			return usageErr("--tool %q: no such tool (known: %s)", name, strings.Join(knownTools(), ", "))
		}
		popts.ExtraTools = append(popts.ExtraTools, tool.Spec{Name: name})
	}
	if f.metaProfile != "" {
		spec, err := metaProfileTool(f.metaProfile)
		if err != nil {
			return err
		}
		popts.ExtraTools = append(popts.ExtraTools, spec)
	}
	ag, err := preset.New(f.preset, cfg, popts)
	if err != nil {
		return usageErr("--preset: %v", err)
	}
	for _, kind := range builtins {
		if !slices.Contains(ag.IncludeDefaultTools, kind) {
			ag.IncludeDefaultTools = append(ag.IncludeDefaultTools, kind)
		}
	}
	if f.memory || st.LoadPublicSkills || len(st.RegisteredMarketplaces) > 0 {
		if err := checkMarketplaces(st.RegisteredMarketplaces); err != nil {
			return err
		}
		ag.AgentContext, err = withContext(ag.AgentContext, func(ac *skill.AgentContext) {
			ac.LoadMemory = ac.LoadMemory || f.memory
			ac.LoadPublicSkills = ac.LoadPublicSkills || st.LoadPublicSkills
			ac.RegisteredMarketplaces = append(ac.RegisteredMarketplaces, st.RegisteredMarketplaces...)
		})
		if err != nil {
			return err
		}
	}
	if err := a.applyPlugins(f, p); err != nil {
		return err
	}
	mcpFile := f.mcpConfig
	// Servers of the settings keep their refreshed OAuth tokens there.
	fromSettings := map[string]bool{}
	if mcpFile == "" && len(st.MCPServers) > 0 {
		for name := range st.MCPServers {
			fromSettings[name] = true
		}
		if mcpFile, err = writeMCPSettings(st); err != nil {
			return &exitErr{code: exitError, msg: fmt.Sprintf("MCP servers of the settings: %v", err)}
		}
		defer os.Remove(mcpFile)
	}
	p.mcp, err = a.connectMCP(ctx, mcpFile, ag, llmLog, func(server string, st *mcp.OAuthState) error {
		if !fromSettings[server] {
			return nil
		}
		return a.saveOAuthState(server, st)
	})
	if err != nil {
		p.close()
		return err
	}
	opts := &agent.Options{Model: p.model}
	if p.mcp != nil {
		// The servers are ours; the agent must not start them again.
		opts.ExtraTools, opts.MCPConnected = p.mcp.Tools(), true
	}
	p.agent = ag.WithOptions(opts)
	return nil
}

// metaProfileTool is the route_task_to_model spec of --meta-profile
// name, which must be stored.
func metaProfileTool(name string) (tool.Spec, error) {
	dir := routetask.StoreDir()
	if strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		return tool.Spec{}, usageErr("--meta-profile %q: not a meta-profile name", name)
	}
	if _, err := os.Stat(filepath.Join(dir, name+".json")); err != nil {
		return tool.Spec{}, usageErr("--meta-profile %s: no %s.json in %s", name, name, dir)
	}
	return tool.Spec{Name: routetask.KindName, Params: event.Map[string, any]{"active_meta_profile": name}}, nil
}

// knownTools lists what --tool takes: the registered tools and the
// built-ins' tool names.
func knownTools() []string {
	names := tool.Registered()
	for _, n := range agent.BuiltinNames() {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// withContext returns the agent context raw changed by set.
func withContext(raw json.RawMessage, set func(*skill.AgentContext)) (json.RawMessage, error) {
	var ac skill.AgentContext
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &ac); err != nil {
			return nil, fmt.Errorf("agent context: %w", err)
		}
	}
	set(&ac)
	return json.Marshal(&ac)
}

// checkMarketplaces checks the settings' registered_marketplaces: each
// a registration with a name and a source.
func checkMarketplaces(regs []json.RawMessage) error {
	for i, raw := range regs {
		var r plugin.Registration
		err := json.Unmarshal(raw, &r)
		if err == nil && (r.Name == "" || r.Source == "") {
			err = errors.New("name and source are required")
		}
		if err == nil {
			err = (&plugin.Source{Source: r.Source, Ref: r.Ref, RepoPath: r.RepoPath}).Validate()
		}
		if err != nil {
			return usageErr("settings: registered_marketplaces[%d]: %v", i, err)
		}
	}
	return nil
}

// writeMCPSettings writes the settings' enabled MCP servers as an
// mcp.json file for connectMCP.
func writeMCPSettings(st settings) (string, error) {
	servers := map[string]json.RawMessage{}
	for name, raw := range st.MCPServers {
		var probe struct {
			Disabled bool `json:"disabled"`
		}
		if json.Unmarshal(raw, &probe) == nil && probe.Disabled {
			continue
		}
		servers[name] = raw
	}
	return writeMCPServers(servers)
}

// writeMCPServers writes servers as a temporary mcp.json file.
func writeMCPServers(servers map[string]json.RawMessage) (string, error) {
	data, err := json.Marshal(map[string]any{"mcpServers": servers})
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp("", "gohands-mcp-*.json")
	if err != nil {
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return "", err
	}
	return f.Name(), f.Close()
}

// workspace returns the directory the agent works in. A resumed
// conversation works in its stored workspace: run from another directory
// it goes back there, and an explicit different --workspace is refused
// unless --move-workspace says the conversation moves.
func (a *app) workspace(f *runFlags, stored convInfo) (string, error) {
	if stored.Workspace != "" && f.workspace == "" {
		if _, err := os.Stat(stored.Workspace); err != nil {
			return "", usageErr("conversation %s works in %s, which is gone; give --workspace DIR --move-workspace to continue it elsewhere", stored.ID, stored.Workspace)
		}
		return stored.Workspace, nil
	}
	dir := f.workspace
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", &exitErr{code: exitError, msg: fmt.Sprintf("workspace: %v", err)}
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", &exitErr{code: exitError, msg: fmt.Sprintf("workspace: %v", err)}
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return "", usageErr("--workspace %s: no such directory", dir)
	}
	if !fi.IsDir() {
		return "", usageErr("--workspace %s: not a directory", dir)
	}
	if stored.Workspace != "" && filepath.Clean(stored.Workspace) != dir && !f.moveWorkspace {
		return "", usageErr("conversation %s works in %s, not %s; run it there, or add --move-workspace to move it", stored.ID, stored.Workspace, dir)
	}
	return dir, nil
}

// llmConfig builds the model configuration. Precedence, lowest first: the
// settings file, --llm-config (whose model brings its base URL), the stored conversation's model and base
// URL (on resume), the environment, the flags. The key comes from
// --api-key, $LLM_API_KEY, the provider's usual variable
// ($ANTHROPIC_API_KEY, …), the variable the settings name, the settings,
// then --llm-config.
func (a *app) llmConfig(f *runFlags, st settings, stored convInfo) (llm.Config, string, error) {
	cfg := llm.DefaultConfig("")
	// What the file names is taken from it; the rest from the settings.
	var named struct{ Model, BaseURL *string }
	if f.profile != "" {
		path, err := a.settingsPath()
		if err != nil {
			return cfg, "", usageErr("--profile: %v", err)
		}
		profiles, err := llm.LoadProfiles(path)
		if err != nil {
			return cfg, "", usageErr("--profile: %v", err)
		}
		if cfg, err = profiles.Profile(f.profile); err != nil {
			return cfg, "", usageErr("--profile: %v", err)
		}
		named.Model, named.BaseURL = &cfg.Model, &cfg.BaseURL
	} else if f.llmConfig != "" {
		data, err := os.ReadFile(f.llmConfig)
		if err != nil {
			return cfg, "", usageErr("--llm-config: %v", err)
		}
		if err := json.Unmarshal(data, &cfg); err != nil {
			return cfg, "", usageErr("--llm-config %s: %v", f.llmConfig, err)
		}
		var probe struct {
			Model   *string `json:"model"`
			BaseURL *string `json:"base_url"`
		}
		_ = json.Unmarshal(data, &probe) // valid JSON: decoded above
		named.Model, named.BaseURL = probe.Model, probe.BaseURL
	}
	if named.Model == nil {
		cfg.Model = st.Model
	}
	if named.BaseURL == nil {
		cfg.BaseURL = st.BaseURL
	}
	switch {
	case f.profile != "":
		// The profile names the model, also for a resumed conversation.
	case stored.Model != "":
		cfg.Model, cfg.BaseURL = stored.Model, stored.BaseURL
	default:
		cfg.Model = cmpOr(a.getenv(envModel), cfg.Model)
		cfg.BaseURL = cmpOr(a.getenv(envBaseURL), cfg.BaseURL)
	}
	cfg.Model = cmpOr(f.model, cfg.Model)
	cfg.BaseURL = cmpOr(f.baseURL, cfg.BaseURL)
	if strings.TrimSpace(cfg.Model) == "" {
		return cfg, "", usageErr("%s", noModelHelp)
	}

	key, source := f.apiKey, "--api-key"
	if key == "" {
		key, source = a.getenv(envAPIKey), "$"+envAPIKey
	}
	for _, v := range keyVarsFor(cfg.Model) {
		if key == "" {
			key, source = a.getenv(v), "$"+v
		}
	}
	if key == "" && st.APIKeyEnv != "" {
		key, source = a.getenv(st.APIKeyEnv), "$"+st.APIKeyEnv+" (named by the settings file)"
	}
	if k := st.APIKeys[providerOf(cfg.Model)]; key == "" && k != "" {
		key, source = k, "the settings file (api_keys)"
	}
	if key == "" && st.APIKey != "" {
		key, source = st.APIKey, "the settings file"
	}
	switch {
	case key != "":
		cfg.APIKey = secret.New(key)
	case !cfg.APIKey.IsZero():
		source = "--llm-config"
	case llm.CloudAuth(cfg.Model):
		// Bedrock and Vertex AI sign with the cloud's own credentials.
		source = ""
	case cfg.BaseURL == "":
		// A hosted provider without a key fails at the first call: say so
		// now. A server of one's own (--base-url) may need none.
		return cfg, "", usageErr("%s", missingKeyHelp(cfg.Model))
	default:
		source = ""
	}
	if err := applyRetries(&cfg, f.retry, st); err != nil {
		return cfg, "", err
	}
	return cfg, source, nil
}

// worthRetrying refuses retries of errors a person must fix beyond those
// the LLM never retries (llm.Unreachable): the server is not an LLM API
// at all (404, 405, 501).
func worthRetrying(err error) bool {
	var ae *llm.APIError
	return !errors.As(err, &ae) || ae.StatusCode != http.StatusNotFound && ae.StatusCode != http.StatusMethodNotAllowed && ae.StatusCode != http.StatusNotImplemented
}

// sessionKeyHint says, for an agent server's refusal of the session key
// (HTTP 401 or 403), which key to give; "" for another error. given is
// where the key came from ("" when none was given).
func sessionKeyHint(err error, given string) string {
	if !errors.Is(err, workspace.ErrUnauthorized) {
		return ""
	}
	if given == "" {
		return "the agent server wants its session key: set $SESSION_API_KEY or pass --session-key (the server's $OH_SESSION_API_KEYS_0)"
	}
	return "the agent server refused the session key from " + given + ": give the one it was started with (its $OH_SESSION_API_KEYS_0)"
}

// sessionKey is the session key for an agent server and where it came
// from.
func (a *app) sessionKey(flag string) (key, from string) {
	switch {
	case flag != "":
		return flag, "--session-key"
	case a.getenv("SESSION_API_KEY") != "":
		return a.getenv("SESSION_API_KEY"), "$SESSION_API_KEY"
	}
	return "", ""
}

// hint adds to a model error what a newcomer should check.
func (p *prepared) hint(err error) string {
	var dns *net.DNSError
	var ae *llm.APIError
	where := "the provider"
	if p.cfg.BaseURL != "" {
		where = p.cfg.BaseURL
	}
	switch {
	case errors.Is(err, unix.ECONNREFUSED):
		return fmt.Sprintf("nothing answers at %s: is the server at --base-url running?", where)
	case errors.As(err, &dns):
		return fmt.Sprintf("cannot find the host %s: check --base-url", dns.Name)
	case errors.Is(err, llm.ErrAuthentication):
		if p.keySource != "" {
			return fmt.Sprintf("the key from %s was refused: check it", p.keySource)
		}
		return "the provider wants a key: set " + envAPIKey
	case errors.As(err, &ae) && (ae.StatusCode == http.StatusNotFound || ae.StatusCode == http.StatusMethodNotAllowed || ae.StatusCode == http.StatusNotImplemented):
		return fmt.Sprintf("%s answered HTTP %d: check the model name (%s) and the /v1 path of --base-url", where, ae.StatusCode, p.cfg.Model)
	}
	return ""
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// conversationWorkspace is where the conversation of p runs: on this
// machine; with --server, on that agent server; with --sandbox docker,
// on the agent server of a new container of the gohands image, with the
// workspace mounted at its own path and this machine's network (what
// --sandbox docker of the interactive mode means). open.Conversation
// opens the conversation there. keyFrom says where a server's session key
// came from. Closing ws removes the container.
func (a *app) conversationWorkspace(ctx context.Context, f *runFlags, p *prepared) (ws workspace.Workspace, keyFrom string, err error) {
	switch {
	case f.server != "" && f.sandbox != "":
		return nil, "", usageErr("--server and --sandbox cannot be used together")
	case f.server == "" && f.sandbox == "":
		return &workspace.Local{WorkingDir: p.workDir}, "", nil
	case p.mcp != nil:
		return nil, "", usageErr("MCP servers cannot be used with --server or --sandbox: the agent server starts its own")
	case f.server != "":
		key, from := a.sessionKey(f.sessionKey)
		return &workspace.Remote{Host: f.server, APIKey: key, WorkingDir: p.workDir}, from, nil
	case f.sandbox != "docker":
		return nil, "", usageErr("--sandbox %q: the only sandbox is docker", f.sandbox)
	}
	o := &docker.Options{
		Image:      f.sandboxImage,
		WorkingDir: p.workDir,
		Volumes:    []string{p.workDir + ":" + p.workDir},
		Network:    "host", // a model server on 127.0.0.1 stays reachable as it is
		// The conversation lives in the container, apart from this
		// machine's store.
		Env: map[string]string{"OH_CONVERSATIONS_PATH": "/tmp/gohands/conversations", "OH_BASH_EVENTS_DIR": "/tmp/gohands/bash_events"},
	}
	if uid := os.Getuid(); uid > 0 {
		o.User = fmt.Sprintf("%d:%d", uid, os.Getgid()) // files in the workspace stay the user's
	}
	dw, err := docker.New(ctx, o)
	if err != nil {
		return nil, "", &exitErr{code: exitError, msg: fmt.Sprintf("sandbox: %v", err)}
	}
	return dw, "", nil
}

// storedSafety is what a conversation's base state says of its security
// settings not made by gohands.
type storedSafety struct {
	analyzer bool // it has a security analyzer gohands did not make
	asks     bool // its confirmation policy makes actions wait (not NeverConfirm)
}

// readStoredSafety reads the security settings of the conversation in dir;
// an unreadable base state has none (the resume reports it).
func readStoredSafety(dir string) storedSafety {
	b, err := os.ReadFile(filepath.Join(dir, filestore.BaseStateFile))
	if err != nil {
		return storedSafety{}
	}
	var st struct {
		Analyzer json.RawMessage `json:"security_analyzer"`
		Policy   struct {
			Kind string `json:"kind"`
		} `json:"confirmation_policy"`
	}
	if json.Unmarshal(b, &st) != nil {
		return storedSafety{}
	}
	// gohands' own analyzer (the rules of a --confirm run, whose
	// PatternSecurityAnalyzer has a work_dir the reference's has not) is
	// made again for each run, with this run's secrets.
	an := len(st.Analyzer) > 0 && string(st.Analyzer) != "null" && !bytes.Contains(st.Analyzer, []byte(`"work_dir"`))
	return storedSafety{analyzer: an, asks: st.Policy.Kind != "" && st.Policy.Kind != "NeverConfirm"}
}
