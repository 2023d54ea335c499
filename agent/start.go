package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gohands/gohands/agent/invokeskill"
	"github.com/gohands/gohands/agent/switchllm"
	"github.com/gohands/gohands/agent/visioninspect"
	"github.com/gohands/gohands/condenser"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/mcp"
	"github.com/gohands/gohands/plugin"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/skill"
	"github.com/gohands/gohands/tool"
)

// Start implements conversation.Agent: it resolves the tools, makes the
// LLM and, unless the log already has one, emits the SystemPromptEvent.
// Its runner condenses on request when its condenser acts on
// CondensationRequests. When ambient plugins, registered marketplaces or
// the workspace's skills (load_project_skills) add to the agent, the agent
// with them is returned for the conversation to store (Started.Agent).
func (a *Agent) Start(ctx context.Context, sess *conversation.Session) (conversation.Started, error) {
	r, err := a.start(ctx, sess)
	if err != nil {
		return conversation.Started{}, err
	}
	s := conversation.Started{Runner: r, CondensesOnRequest: r.condRequests}
	if r.a != a { // withPlugins merged something in
		s.Agent = r.a
	}
	return s, nil
}

func (a *Agent) start(ctx context.Context, sess *conversation.Session) (*runner, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	a, plugins := a.withPlugins(sess)
	a = a.withProjectSkills(sess)
	r := &runner{a: a, sess: sess, limit: a.ToolConcurrencyLimit, locks: make(map[string]*sync.Mutex)}
	if plugins != nil {
		r.pluginHooks = plugins.Hooks
	}
	a.hideCredentials(sess)
	tools, err := a.resolveTools(sess, r)
	if err != nil {
		return nil, err
	}
	if err := r.connectMCP(ctx, tools); err != nil {
		tool.CloseAll(tools)
		return nil, err
	}
	if r.mcp != nil {
		tools = append(tools, r.mcp.Tools()...)
	}
	r.tools = tools
	r.byName = make(map[string]tool.Tool, len(tools))
	for _, t := range tools {
		r.byName[t.Name()] = t
		params, err := tool.ParametersJSON(t)
		if err != nil {
			r.closeTools()
			return nil, fmt.Errorf("agent: tool %s: %w", t.Name(), err)
		}
		r.specs = append(r.specs, llm.ToolSpec{Name: t.Name(), Description: t.Description(), Parameters: params})
	}
	r.model = a.opts.Model
	if r.model == nil {
		l, err := llm.New(a.LLM, &llm.Options{Logger: sess.Logger()})
		if err != nil {
			r.closeTools()
			return nil, fmt.Errorf("agent: %w", err)
		}
		if m, ok := sess.Fields().Stats.UsageToMetrics[l.UsageID()]; ok && m != nil {
			l.RestoreMetrics(*m)
		}
		r.model = l
	}
	if err := r.initCondenser(); err != nil {
		r.closeTools()
		return nil, err
	}
	if err := r.initHooks(); err != nil {
		r.closeTools()
		return nil, err
	}
	if err := r.initSkills(ctx); err != nil {
		r.closeTools()
		return nil, err
	}
	if err := r.attachInvokeSkill(); err != nil {
		r.closeTools()
		return nil, err
	}
	if err := r.initState(); err != nil {
		r.closeTools()
		return nil, err
	}
	if r.hooks != nil {
		// SessionStart hooks cannot block; their runs are recorded.
		if err := r.emitHookEvents(r.hooks.SessionStart(context.Background())); err != nil {
			r.closeTools()
			return nil, err
		}
	}
	return r, nil
}

// hideCredentials registers the credentials the agent's configuration
// holds with the conversation's masker, so that a command printing one (a
// key read from a file, an MCP header echoed back) never shows it to the
// model, the log or a person.
func (a *Agent) hideCredentials(sess *conversation.Session) {
	vals := []string{a.LLM.APIKey.Value(), a.criticSecret().Value()}
	if len(a.MCPConfig) > 0 {
		if raw, err := json.Marshal(a.MCPConfig); err == nil {
			if cfg, err := mcp.ParseConfig(raw); err == nil {
				_, _ = cfg.MapSecrets(func(s secret.String) (secret.String, error) {
					vals = append(vals, s.Value())
					return s, nil
				})
			}
		}
	}
	if s, ok := a.opts.Condenser.(*condenser.LLMSummarizing); ok {
		vals = append(vals, s.LLM.APIKey.Value())
	}
	sess.Secrets().Hide(vals...)
}

// initCondenser sets the condenser: Options.Condenser, or else the
// agent's kind-tagged condenser configuration decoded by package condenser.
func (r *runner) initCondenser() error {
	c := r.a.opts.Condenser
	if raw := bytes.TrimSpace(r.a.Condenser); c == nil && len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		// The configuration with its keys in clear: MapSecrets may hold
		// them decrypted beside a JSON that has them encrypted.
		raw, err := r.a.condenserJSON(secret.String.Expose)
		if err != nil {
			return err
		}
		if c, err = condenser.Decode(raw); err != nil {
			return fmt.Errorf("agent: condenser: %w", err)
		}
		if s, ok := c.(*condenser.LLMSummarizing); ok && s.LLM.APIKey.IsZero() &&
			s.LLM.Model == r.a.LLM.Model && s.LLM.BaseURL == r.a.LLM.BaseURL {
			// Only the agent's own key is kept with a stored conversation: a
			// condenser summarising with the agent's model uses it too.
			s.LLM.APIKey = r.a.LLM.APIKey
		}
	}
	if c != nil {
		r.cond, r.condRequests = c, c.HandlesRequests()
	}
	return nil
}

// initSkills decodes the agent's context and loads its skills (the
// workspace's and the user's, as the context asks), once per runner. It
// also recovers the keyword skills earlier user messages activated, so a
// resumed conversation does not inject them again.
func (r *runner) initSkills(ctx context.Context) error {
	raw := bytes.TrimSpace(r.a.AgentContext)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	var ac skill.AgentContext
	if err := json.Unmarshal(raw, &ac); err != nil {
		return fmt.Errorf("agent: agent_context: %w", err)
	}
	home, _ := os.UserHomeDir()
	if ac.LoadPublicSkills {
		// A repository that cannot be reached costs the public skills, not
		// the conversation, as in the reference.
		opts := &plugin.FetchOptions{CacheDir: plugin.CacheDir(skill.PersistenceDir(home))}
		public, err := plugin.LoadPublicSkills(ctx, ac.MarketplacePath, opts)
		if err != nil {
			r.sess.Logger().Warn("agent: public skills not loaded", "err", err)
		}
		ac.PublicSkills = public
	}
	for _, w := range ac.LoadSkills(r.sess.WorkingDir(), home) {
		r.sess.Logger().Warn("agent: skill not loaded", "path", w.Path, "err", w.Err)
	}
	if ac.LoadMemory {
		// A memory index that cannot be read is left out, as a missing one.
		text, warns := skill.LoadMemory(r.sess.WorkingDir(), skill.PersistenceDir(home), 0)
		for _, w := range warns {
			r.sess.Logger().Warn("agent: memory not loaded", "path", w.Path, "err", w.Err)
		}
		ac.MemoryContext = text
	}
	r.skills = &ac
	log := r.sess.State().Events()
	for i := range log.Len() {
		en, err := log.Entry(i)
		if err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		if en.Kind != event.KindMessage || en.Source != event.SourceUser {
			continue
		}
		e, err := log.Event(ctx, i)
		if err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		if m, ok := e.(*event.MessageEvent); ok {
			r.activated = append(r.activated, m.ActivatedSkills...)
		}
	}
	return nil
}

// resolveTools materialises the configured tools, the extra tools and the
// built-ins. Tools consult LLM profiles through r.
func (a *Agent) resolveTools(sess *conversation.Session, r *runner) ([]tool.Tool, error) {
	// Tools live as long as the conversation, not as Start's ctx.
	env, mask := sess.Secrets().TerminalHooks(context.Background())
	tctx := tool.Context{
		WorkingDir:      sess.WorkingDir(),
		ConversationID:  sess.ID(),
		ConversationDir: sess.Dir(),
		Secrets:         sess.Secrets().Lookup(context.Background()),
		SecretEnv:       env,
		Mask:            mask,
		Partial:         sess.Secrets().PartialSuffix,
		PartialStart:    sess.Secrets().PartialPrefix,
		Conversation:    toolHost{r},
		SubAgentFiles:   a.subAgentFiles,
	}
	specs := a.Tools
	tools, err := tool.ResolveAll(tctx, specs)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	if a.FilterToolsRegex != nil {
		re, err := regexp.Compile(`^(?:` + *a.FilterToolsRegex + `)`)
		if err != nil {
			tool.CloseAll(tools)
			return nil, fmt.Errorf("agent: filter_tools_regex: %w", err)
		}
		var kept, dropped []tool.Tool
		for _, t := range tools {
			if re.MatchString(t.Name()) {
				kept = append(kept, t)
			} else {
				dropped = append(dropped, t)
			}
		}
		tool.CloseAll(dropped)
		tools = kept
	}
	tools = append(tools, a.opts.ExtraTools...)
	specs = nil
	var builtins []tool.Tool
	defaults := a.IncludeDefaultTools
	// As the reference: a model that cannot see images gets the vision
	// tool when a saved profile can.
	if !slices.Contains(defaults, visioninspect.KindName) && !llm.FeaturesOf(&a.LLM).Vision &&
		len(visioninspect.Profiles(toolHost{r})) > 0 {
		defaults = append(slices.Clip(defaults), visioninspect.KindName)
	}
	for _, c := range defaults {
		if c == invokeskill.KindName {
			continue // it needs the loaded skills: attachInvokeSkill adds it
		}
		if c == switchllm.KindName {
			builtins = append(builtins, switchllm.New(sess.ProfileNames(), sess.SwitchProfile))
			continue
		}
		specs = append(specs, tool.Spec{Name: defaultToolNames[c]})
	}
	resolved, err := tool.ResolveAll(tctx, specs)
	builtins = append(builtins, resolved...)
	if err != nil {
		tool.CloseAll(tools)
		return nil, fmt.Errorf("agent: %w", err)
	}
	tools = append(tools, builtins...)
	if err := tool.CheckNames(tools); err != nil {
		tool.CloseAll(tools)
		return nil, fmt.Errorf("agent: %w", err)
	}
	return tools, nil
}

// initState emits the SystemPromptEvent of a new conversation.
func (r *runner) initState() error {
	log := r.sess.State().Events()
	for i := range min(log.Len(), 3) {
		en, err := log.Entry(i)
		if err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		switch {
		case en.Kind == event.KindSystemPrompt:
			return nil // resumed
		case en.Kind == event.KindMessage && en.Source == event.SourceUser:
			return errors.New("agent: the log has a user message before the system prompt")
		}
	}
	prompt := r.a.SystemPrompt
	if prompt == "" {
		prompt, _ = templatePrompt(r.a.SystemPromptFilename)
	}
	if prompt == "" {
		prompt = systemPrompt
		if p := strings.TrimSpace(r.a.Persona); p != "" {
			prompt = p + "\n\n" + workPrompt
		}
		for _, t := range r.tools {
			if !tool.ReadOnly(t) {
				prompt += riskPrompt
				break
			}
		}
		if r.skills != nil && r.skills.LoadMemory {
			prompt += memoryPrompt
		}
	}
	defs := make([]event.ToolDefinition, 0, len(r.tools))
	for _, t := range r.tools {
		defs = append(defs, t.Definition())
	}
	dynText := dynamicContext(r.sess.WorkingDir(), time.Now(), r.sess.Secrets().Names())
	if suffix := r.skills.SystemSuffix(&skill.PromptOptions{Model: r.a.LLM.Model}); suffix != "" {
		dynText += "\n\n" + suffix
	}
	dyn := event.Text(dynText)
	return r.sess.Emit(&event.SystemPromptEvent{
		Base:           event.NewBase(event.SourceAgent),
		SystemPrompt:   event.Text(prompt),
		Tools:          defs,
		DynamicContext: &dyn,
	})
}

// Close implements conversation.Runner: it saves the LLM metrics and
// closes the tools.
func (r *runner) Close() error {
	var hookErr error
	if r.hooks != nil {
		// SessionEnd also stops the background hooks still running.
		hookErr = r.emitHookEvents(r.hooks.SessionEnd(context.Background()))
	}
	return errors.Join(r.saveStats(), r.closeTools(), hookErr)
}

// closeTools closes the tools and stops the MCP servers behind them.
func (r *runner) closeTools() error {
	err := tool.CloseAll(r.tools)
	if r.mcp != nil {
		err = errors.Join(err, r.mcp.Close())
	}
	return err
}

// connectMCP connects the servers of the agent's mcp_config (but those
// the caller did, Options.MCPConnected) and keeps the set in r.mcp, whose
// tools Start offers. A server that fails to start is logged and left
// out; the others load.
func (r *runner) connectMCP(ctx context.Context, resolved []tool.Tool) error {
	a := r.a
	if len(a.MCPConfig) == 0 {
		return nil
	}
	raw, err := json.Marshal(a.MCPConfig)
	if err != nil {
		return fmt.Errorf("agent: mcp_config: %w", err)
	}
	cfg, err := mcp.ParseConfig(raw)
	if err != nil {
		return fmt.Errorf("agent: mcp_config: %w", err)
	}
	if a.opts.MCPConnected {
		for _, name := range a.callerMCP {
			delete(cfg, name)
		}
		if len(cfg) == 0 {
			return nil
		}
	}
	if c := r.sess.Cipher(); c != nil {
		// Secrets the server handed out encrypted with its key (an MCP
		// server's OAuth state from its sign-in routes) are opened here,
		// in memory: the stored mcp_config keeps them encrypted.
		open, err := cfg.MapSecrets(c.Decrypt)
		if err != nil {
			return fmt.Errorf("agent: mcp_config: a secret does not decrypt with the conversation's key: %w", err)
		}
		cfg = open.(mcp.Config)
	}
	reserved := make([]string, 0, len(resolved))
	for _, t := range resolved {
		reserved = append(reserved, t.Name())
	}
	secrets := r.sess.Secrets()
	var oauth *mcp.OAuthOptions
	c, writeBack := r.sess.Cipher(), r.sess.MCPOAuthWriteBack()
	if c != nil || writeBack != nil {
		oauth = &mcp.OAuthOptions{Save: func(server string, st *mcp.OAuthState) error {
			var err error
			if c != nil {
				err = r.saveOAuthState(c, server, st)
			}
			if wb, ok := mcp.NewOAuthWriteBack(cfg[server], st); ok && writeBack != nil {
				body, merr := json.Marshal(wb)
				if merr != nil {
					return errors.Join(err, merr)
				}
				writeBack(wb.ServerURL, body)
			}
			return err
		}}
	}
	set, err := mcp.Connect(ctx, cfg, &mcp.Options{
		Reserved: reserved,
		Logger:   r.sess.Logger(),
		Secrets:  secrets.Lookup(context.Background()),
		Mask:     secrets.Mask,
		OAuth:    oauth,
	})
	for _, se := range set.Errors() {
		r.sess.Logger().Warn("MCP server did not start", "server", se.Server, "err", se.Err)
	}
	if err != nil && len(set.Errors()) == 0 {
		set.Close()
		return fmt.Errorf("agent: mcp: %w", err)
	}
	r.mcp = set
	return nil
}

// saveOAuthState writes a server's new OAuth state (after a refresh) into
// the stored agent's mcp_config, its secrets encrypted with the
// conversation's key as the sign-in routes hand them out, so that a
// server that rotates its refresh tokens still works after a restart.
// Without a key nothing is saved: the stored config would hold them
// redacted.
func (r *runner) saveOAuthState(c *secret.Cipher, server string, st *mcp.OAuthState) error {
	return r.sess.State().Update(func(f *conversation.Fields) error {
		a, ok := f.Agent.(*Agent)
		if !ok {
			return fmt.Errorf("agent: saving the OAuth state of MCP server %q: the stored agent is a %T", server, f.Agent)
		}
		servers := map[string]json.RawMessage(a.MCPConfig)
		inner, nested := servers["mcpServers"]
		if nested {
			servers = nil
			if err := json.Unmarshal(inner, &servers); err != nil {
				return fmt.Errorf("agent: mcp_config: %w", err)
			}
		}
		spec, ok := servers[server]
		if !ok {
			return nil // a plugin's server: not in the stored config
		}
		b, err := mcp.WithOAuthState(spec, st, c.Encrypt)
		if err != nil {
			return fmt.Errorf("agent: saving the OAuth state of MCP server %q: %w", server, err)
		}
		servers = maps.Clone(servers)
		servers[server] = b
		cfg := event.Map[string, json.RawMessage](servers)
		if nested {
			raw, err := json.Marshal(servers)
			if err != nil {
				return err
			}
			cfg = maps.Clone(a.MCPConfig)
			cfg["mcpServers"] = raw
		}
		na := *a
		na.MCPConfig = cfg
		f.Agent = &na
		return nil
	})
}
