package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gohands/gohands/cmd/gohands/internal/tui"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/conversation/open"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/security"
	"github.com/gohands/gohands/skill"
	"github.com/gohands/gohands/tool"
)

// session is the interactive mode's conversation: the tui.Backend of the
// full-screen interface and of the line-mode REPL. It opens a
// conversation on the first message, and can leave it for a new one or
// another stored one of the same workspace.
type session struct {
	a   *app
	f   runFlags
	p   *prepared // nil until the first-run setup is done
	ctx context.Context

	// onEvent and onOutput show the conversation's events and a running
	// command's output.
	onEvent  func(event.Event)
	onOutput func(string)

	mu    sync.Mutex
	conv  conversation.Conversation
	ws    io.Closer // the conversation's workspace (a sandbox's container), if it needs closing
	unsub func()
	// switchTo is a model chosen with /model before the conversation was
	// opened: it is switched to once it is.
	switchTo *llm.Config
	// allow holds the "always" answers: what runs unasked from then on.
	allow allowList
	// stop ends the exchange in progress (a Send or an Answer): Pause
	// calls it, so that a stop asked for before the run has begun (while
	// the message is still being stored, or the conversation opened)
	// keeps the run from starting, where the conversation's own Pause
	// would find nothing running and the run would start after it.
	stop context.CancelCauseFunc
}

// errStopped is the cause of an exchange's context when the user stopped it.
var errStopped = errors.New("stopped by the user")

// exchange begins a Send or an Answer: ctx is cancelled with errStopped
// when the user stops it. end must be called when the exchange is over.
func (s *session) exchange(ctx context.Context) (_ context.Context, end func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	s.mu.Lock()
	s.stop = cancel
	s.mu.Unlock()
	return ctx, func() {
		s.mu.Lock()
		s.stop = nil
		s.mu.Unlock()
		cancel(nil)
	}
}

var _ tui.Backend = (*session)(nil)

// open opens the current conversation if none is: the stored one of
// p.id, or a new one.
func (s *session) open() (conversation.Conversation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conv != nil {
		return s.conv, nil
	}
	if s.p == nil {
		return nil, errors.New("no model is configured")
	}
	p := s.p
	ws, _, err := s.a.conversationWorkspace(s.ctx, &s.f, p)
	if err != nil {
		return nil, err
	}
	// A sandbox's container goes with its conversation.
	wsCloser, _ := ws.(io.Closer)
	defer func() {
		if s.conv == nil && wsCloser != nil {
			wsCloser.Close()
		}
	}()
	conv, err := open.Conversation(s.ctx, p.agent, ws, &conversation.LocalOptions{
		ID:                 p.id,
		Backend:            filestore.NewBackend(p.base, nil),
		MaxIterations:      s.f.maxIterations,
		Secrets:            p.sources,
		Logger:             p.logger,
		SubscriberBuffer:   1 << 16,
		ConfirmationPolicy: p.policy,
		SecurityAnalyzer:   p.analyzer,
		Profiles:           p.profiles,
		HookConfig:         p.hookConfig,
		Plugins:            p.plugins,
	})
	if errors.Is(err, conversation.ErrLocked) {
		return nil, fmt.Errorf("conversation %s is in use by another process", p.id)
	}
	if err != nil {
		return nil, err
	}
	p.id = conv.ID()
	if p.model != nil {
		if m := conv.State().Fields().Stats.UsageToMetrics[p.model.UsageID()]; m != nil {
			p.model.RestoreMetrics(*m)
		}
	}
	if s.switchTo != nil {
		if err := conv.SwitchLLM(s.ctx, *s.switchTo); err != nil {
			conv.Close()
			return nil, err
		}
		s.switchTo = nil
	}
	if s.onEvent != nil {
		s.unsub = conv.Subscribe(s.onEvent)
	}
	s.conv, s.ws = conv, wsCloser
	return conv, nil
}

// close closes the current conversation.
func (s *session) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conv == nil {
		return nil
	}
	conv, unsub, ws := s.conv, s.unsub, s.ws
	s.conv, s.unsub, s.ws = nil, nil, nil
	s.mu.Unlock()
	if unsub != nil {
		unsub()
	}
	err := conv.Close()
	if ws != nil {
		err = errors.Join(err, ws.Close())
	}
	s.mu.Lock()
	return err
}

func (s *session) current() conversation.Conversation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conv
}

// Send implements tui.Backend.
func (s *session) Send(ctx context.Context, text string) tui.Outcome {
	ctx, end := s.exchange(ctx)
	defer end()
	conv, err := s.open()
	if err != nil {
		return tui.Outcome{Err: err}
	}
	if conv.Status() == conversation.StatusWaitingForConfirmation && s.p.confirm != "never" {
		// Running would approve the waiting actions: ask first, and
		// have the message sent after the answer.
		o := s.outcome(ctx, conv, nil)
		o.NotSent = true
		return o
	}
	// A stop asked for from here on leaves the message stored and unanswered.
	if err := conv.SendMessage(context.WithoutCancel(ctx), event.UserMessage(text)); err != nil {
		return tui.Outcome{Err: err}
	}
	return s.run(ctx, conv)
}

// run runs the agent until it stops. ctx is the exchange's (see
// exchange): once the user has stopped it, nothing more runs, and the
// conversation is paused even when no run had begun.
func (s *session) run(ctx context.Context, conv conversation.Conversation) tui.Outcome {
	if s.onOutput != nil {
		ctx = tool.WithOutput(ctx, s.onOutput)
	}
	bg := context.WithoutCancel(ctx) // for what follows a stop
	for {
		var err error
		if ctx.Err() == nil {
			err = conv.Run(ctx)
		}
		if context.Cause(ctx) == errStopped {
			// Run returns the context's error when it was cut short;
			// a pause is what the user asked for, not an error.
			if errors.Is(err, context.Canceled) {
				err = nil
			}
			if err == nil {
				err = conv.Pause(bg) // pauses an idle conversation; a paused one is left as it is
			}
		} else if err == nil && conv.Status() == conversation.StatusWaitingForConfirmation && s.allowed(ctx, conv) {
			continue // running approves them
		}
		s.flush(conv)
		return s.outcome(bg, conv, err)
	}
}

// allowed reports whether the waiting actions are covered by earlier
// "always" answers.
func (s *session) allowed(ctx context.Context, conv conversation.Conversation) bool {
	actions, err := conv.State().PendingActions()
	if err != nil {
		return false
	}
	return s.allow.covers(actions, s.rate(ctx, actions))
}

// rate rates actions with the session's analyzer (the model's own rating
// without one).
func (s *session) rate(ctx context.Context, actions []*event.ActionEvent) []event.SecurityRisk {
	if an := s.p.analyzer; an != nil && len(actions) > 0 {
		return security.AnalyzeAll(ctx, an, actions)
	}
	risks := make([]event.SecurityRisk, len(actions))
	for i, a := range actions {
		risks[i] = a.SecurityRisk
	}
	return risks
}

// flush returns once every event of the run has been shown, so that the
// outcome comes after them.
// The lock is not held while waiting: showing an event may need it
// (the interface asks for Stats).
func (s *session) flush(conv conversation.Conversation) {
	s.mu.Lock()
	unsub := s.unsub
	if s.conv != conv || unsub == nil {
		s.mu.Unlock()
		return
	}
	s.unsub = nil
	s.mu.Unlock()
	unsub()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conv == conv && s.unsub == nil {
		s.unsub = conv.Subscribe(s.onEvent)
	}
}

func (s *session) outcome(ctx context.Context, conv conversation.Conversation, err error) tui.Outcome {
	o := tui.Outcome{Status: string(conv.Status())}
	if err != nil {
		msg := oneLine(err.Error())
		var re *conversation.RunError
		if errors.As(err, &re) {
			msg = fmt.Sprintf("%s: %s", re.Code, oneLine(re.Detail))
		}
		if h := s.p.hint(err); h != "" {
			msg += " — " + h
		}
		o.Err = errors.New(msg)
	}
	if conv.Status() != conversation.StatusWaitingForConfirmation {
		return o
	}
	actions, perr := conv.State().PendingActions()
	if perr != nil {
		o.Err = perr
		return o
	}
	risks := s.rate(ctx, actions)
	for i, a := range actions {
		o.Pending = append(o.Pending, tui.Pending{Tool: a.ToolName, Risk: risk(risks[i]), Line: actionLine(a), Detail: actionPreview(a, s.p.workDir)})
	}
	o.Always = scopeLabel(actions)
	return o
}

// Answer implements tui.Backend.
func (s *session) Answer(ctx context.Context, ans tui.Answer) tui.Outcome {
	ctx, end := s.exchange(ctx)
	defer end()
	conv := s.current()
	if conv == nil {
		return tui.Outcome{Err: errors.New("no conversation")}
	}
	// A stop asked for while the answer is recorded stops what would run after it.
	bg := context.WithoutCancel(ctx)
	var err error
	switch ans {
	case tui.AnswerNo:
		err = conv.RejectPendingActions(bg, "")
	case tui.AnswerAlways:
		// Scoped to these tools and commands, HIGH risk excepted (see
		// allowList); /confirm never is the way to stop every question.
		var actions []*event.ActionEvent
		if actions, err = conv.State().PendingActions(); err == nil {
			s.allow.add(actions)
		}
	case tui.AnswerAuto:
		p := security.NewConfirmRisky()
		if err = conv.SetConfirmationPolicy(bg, p); err == nil {
			s.setConfirm("risky", p)
		}
	}
	if err != nil {
		return tui.Outcome{Status: string(conv.Status()), Err: err}
	}
	return s.run(ctx, conv)
}

func (s *session) setConfirm(mode string, p security.ConfirmationPolicy) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.p.confirm, s.p.policy = mode, p
}

// Pause implements tui.Backend. It is called on its own, off any request,
// so it bounds a remote conversation's call itself.
func (s *session) Pause() {
	s.mu.Lock()
	stop := s.stop
	s.mu.Unlock()
	if stop != nil {
		stop(errStopped)
	}
	if conv := s.current(); conv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = conv.Pause(ctx) // a conversation that is not running has nothing to pause
	}
}

// New implements tui.Backend.
func (s *session) New() error {
	err := s.close()
	if s.p != nil {
		s.p.id, s.p.resume = "", false
	}
	return err
}

// Conversations implements tui.Backend.
func (s *session) Conversations() ([]tui.Summary, error) {
	if s.p == nil {
		return nil, errors.New("no model is configured")
	}
	infos, err := listConversations(s.p.base, func(string, error) {})
	if err != nil {
		return nil, err
	}
	var out []tui.Summary
	for _, c := range infos {
		if c.Workspace == s.p.workDir {
			out = append(out, tui.Summary{ID: c.ID, Status: c.Status, Updated: shortTime(c.UpdatedAt), Title: c.FirstMessage})
		}
	}
	return out, nil
}

// Resume implements tui.Backend.
func (s *session) Resume(id string) ([]event.Event, error) {
	if s.p == nil {
		return nil, errors.New("no model is configured")
	}
	info, err := findConversation(s.p.base, id)
	if err != nil {
		return nil, err
	}
	if info.Workspace != "" && info.Workspace != s.p.workDir {
		return nil, fmt.Errorf("conversation %s works in %s: run gohands -r %s there", info.ID, info.Workspace, info.ID)
	}
	if err := s.close(); err != nil {
		return nil, err
	}
	s.p.id, s.p.resume = info.ID, true
	conv, err := s.open()
	if err != nil {
		return nil, err
	}
	return history(context.Background(), conv.State())
}

// history returns the events of a conversation, for showing.
func history(ctx context.Context, st *conversation.State) ([]event.Event, error) {
	var out []event.Event
	for e, err := range conversation.EventsFrom(ctx, st.Events(), 0) {
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
	return out, nil
}

// Stats implements tui.Backend.
func (s *session) Stats() tui.Stats {
	st := tui.Stats{Context: -1}
	if s.p == nil {
		return st
	}
	st.Model, st.Confirm = s.p.cfg.Model, s.p.confirm
	conv := s.current()
	if conv == nil {
		return st
	}
	st.ConversationID = conv.ID()
	// The model's metrics grow with each call; the state's at the end
	// of a run.
	stats := liveStats(conv.State().Fields().Stats, s.p.model)
	prompt, completion := stats.Tokens()
	st.Cost, st.Tokens = stats.TotalCost(), prompt+completion
	if s.p.model != nil {
		if m := stats.UsageToMetrics[s.p.model.UsageID()]; m != nil && len(m.TokenUsages) > 0 {
			u := m.TokenUsages[len(m.TokenUsages)-1]
			window := cmp.Or(u.ContextWindow, s.p.cfg.MaxInputTokens)
			if window > 0 {
				st.Context = float64(u.PromptTokens) / float64(window)
			}
		}
	}
	return st
}

// Setup implements tui.Backend: it saves the first settings and prepares
// the model with them.
func (s *session) Setup(model, key, baseURL string) error {
	st, path, err := s.a.loadSettings()
	if err != nil {
		return err
	}
	if path == "" {
		return errors.New("no settings file: neither $XDG_CONFIG_HOME nor $HOME is set")
	}
	st.Model, st.BaseURL = model, baseURL
	if key != "" {
		st.APIKey = key
	}
	if err := saveSettings(path, st); err != nil {
		return err
	}
	p, err := s.a.prepare(s.ctx, &s.f)
	if err != nil {
		return err
	}
	interactiveAnalyzer(p)
	s.p = p
	return nil
}

// interactiveAnalyzer rates every action with the model's rating and the
// rules, whatever the confirmation mode, so that the panel shows a risk
// and "auto" can ask about high risk only.
func interactiveAnalyzer(p *prepared) {
	if p.analyzer == nil && p.model != nil {
		_, p.analyzer, _ = confirmPolicy("risky", p.workDir, nil)
	}
}

// Command implements tui.Backend.
func (s *session) Command(ctx context.Context, name, arg string) (string, error) {
	if s.p == nil {
		return "", errors.New("no model is configured")
	}
	var out string
	var err error
	switch name {
	case "settings":
		return s.settingsCommand(ctx, arg)
	case "model":
		return s.modelCommand(ctx, arg)
	case "confirm":
		return s.confirmCommand(ctx, arg)
	case "condense":
		conv := s.current()
		if conv == nil {
			return "Nothing to condense yet.", nil
		}
		if err := conv.Condense(ctx); err != nil {
			return "", err
		}
		return "", nil // the Condensation event shows it
	case "skills":
		out = s.skillsCommand()
	case "mcp":
		out, err = s.mcpCommand()
	case "cost":
		out = s.costCommand()
	default:
		return "", fmt.Errorf("unknown command /%s", name)
	}
	return strings.TrimRight(out, "\n"), err
}

// modelCommand shows the model, or switches the conversation to another
// (asking for its provider's key when none is known).
func (s *session) modelCommand(ctx context.Context, arg string) (string, error) {
	if arg == "" {
		return s.modelList(), nil
	}
	cfg, source, ask, err := s.switchConfig(arg)
	if err != nil {
		return "", err
	}
	if !ask {
		return s.switchModel(ctx, cfg, source)
	}
	to := providerOf(arg)
	vars := "$" + strings.Join(providerKeyVars[to], " or $")
	return "", &tui.Question{
		Prompt: fmt.Sprintf("API key for %s (%s is not set; the key is saved in the settings file):", to, vars),
		Secret: true,
		Answer: func(ctx context.Context, key string) (string, error) {
			st, path, err := s.a.loadSettings()
			if err != nil {
				return "", err
			}
			if path == "" {
				return "", errors.New("no settings file: neither $XDG_CONFIG_HOME nor $HOME is set")
			}
			if st.APIKeys == nil {
				st.APIKeys = map[string]string{}
			}
			st.APIKeys[to] = key
			if err := saveSettings(path, st); err != nil {
				return "", err
			}
			cfg.APIKey = secret.New(key)
			return s.switchModel(ctx, cfg, "the settings file (api_keys)")
		},
	}
}

// modelList is /model without a name: the model in use, the settings'
// one, and the known models of each provider a key is set for.
func (s *session) modelList() string {
	cur := s.p.cfg.Model
	st, _, _ := s.a.loadSettings()
	var sb strings.Builder
	fmt.Fprintf(&sb, "Model: %s\n", cur)
	if st.Model != "" && st.Model != cur {
		fmt.Fprintf(&sb, "Settings' model: %s\n", st.Model)
	}
	keyed := func(provider string) bool {
		if provider == providerOf(cur) || st.APIKeys[provider] != "" {
			return true
		}
		for _, v := range providerKeyVars[provider] {
			if !s.p.keyEnv[v].IsZero() {
				return true
			}
		}
		return false
	}
	known := map[string][]string{}
	for _, name := range llm.PricedModels() {
		if p := modelFamily(name); p != "" && keyed(p) {
			known[p] = append(known[p], p+"/"+name)
		}
	}
	if len(known) > 0 {
		sb.WriteString("Known models of the providers with a key:\n")
		for _, p := range slices.Sorted(maps.Keys(known)) {
			fmt.Fprintf(&sb, "  %s\n", strings.Join(known[p], ", "))
		}
	}
	sb.WriteString("/model NAME switches this conversation to any model its provider serves; another provider's key comes from its variable ($ANTHROPIC_API_KEY, …) or the settings, or is asked for.")
	return sb.String()
}

// modelFamily is the provider of a known model's bare name.
func modelFamily(name string) string {
	if p := providerOf(name); p != "" {
		return p
	}
	for prefix, p := range map[string]string{"deepseek": "deepseek", "grok": "xai", "mistral": "mistral", "devstral": "mistral"} {
		if strings.HasPrefix(name, prefix) {
			return p
		}
	}
	return ""
}

// confirmCommand shows or sets when actions are confirmed.
func (s *session) confirmCommand(ctx context.Context, arg string) (string, error) {
	if arg == "" {
		return "Confirmation: " + s.p.confirm + " (/confirm always|risky|never)", nil
	}
	policy, _, err := confirmPolicy(arg, s.p.workDir, nil)
	if err != nil {
		return "", errors.New("/confirm: want always, risky or never")
	}
	if conv := s.current(); conv != nil {
		if err := conv.SetConfirmationPolicy(ctx, policy); err != nil {
			return "", err
		}
	}
	s.setConfirm(arg, policy)
	return "Confirmation: " + arg, nil
}

// skillsCommand lists the workspace's and the user's skills.
func (s *session) skillsCommand() string {
	project, _ := skill.LoadProject(s.p.workDir)
	user, _ := skill.LoadUser(s.a.getenv("HOME"))
	if len(project)+len(user) == 0 {
		return "No skills: add them under .openhands/skills in the workspace or ~/.openhands/skills."
	}
	var sb strings.Builder
	for _, set := range []struct {
		what string
		list []skill.Skill
	}{{"Workspace", project}, {"User", user}} {
		if len(set.list) == 0 {
			continue
		}
		fmt.Fprintf(&sb, "%s skills:\n", set.what)
		for _, k := range set.list {
			how := "always on"
			if k.Trigger != nil {
				how = "on trigger"
			}
			fmt.Fprintf(&sb, "  %s (%s) %s\n", k.Name, how, oneLine(k.Description))
		}
	}
	return sb.String()
}

// mcpCommand lists the settings' MCP servers and the tools connected.
func (s *session) mcpCommand() (string, error) {
	p := s.p
	st, _, err := s.a.loadSettings()
	if err != nil {
		return "", err
	}
	if len(st.MCPServers) == 0 && p.mcp == nil {
		return "No MCP servers: add one with gohands mcp add NAME -- COMMAND ARGS.", nil
	}
	var sb strings.Builder
	sb.WriteString("MCP servers (settings):\n")
	for _, n := range slices.Sorted(maps.Keys(st.MCPServers)) {
		fmt.Fprintf(&sb, "  %s\n", n)
	}
	if p.mcp != nil {
		var tools []string
		for _, t := range p.mcp.Tools() {
			tools = append(tools, t.Name())
		}
		fmt.Fprintf(&sb, "Tools: %s", strings.Join(tools, ", "))
	}
	return sb.String(), nil
}

// costCommand shows the conversation's cost and tokens per model.
func (s *session) costCommand() string {
	conv := s.current()
	if conv == nil {
		return "No conversation yet: $0."
	}
	var sb strings.Builder
	stats := conv.State().Fields().Stats
	for _, id := range slices.Sorted(maps.Keys(stats.UsageToMetrics)) {
		m := stats.UsageToMetrics[id]
		if m == nil {
			continue
		}
		fmt.Fprintf(&sb, "%s (%s): $%.4f", id, m.ModelName, m.AccumulatedCost)
		if u := m.AccumulatedTokenUsage; u != nil {
			fmt.Fprintf(&sb, " · %d prompt tokens (%d cached) · %d completion tokens · %d calls",
				u.PromptTokens, u.CacheReadTokens, u.CompletionTokens, len(m.TokenUsages))
		}
		sb.WriteString("\n")
	}
	prompt, completion := stats.Tokens()
	fmt.Fprintf(&sb, "Total: $%.4f · %s tokens", stats.TotalCost(), tui.TokenCount(prompt+completion))
	return sb.String()
}

// switchConfig is the configuration of the model name for /model.
// Within the provider (or server) in use, the key and base URL stay.
// Another provider is reached at its own API, or at the base URL the
// settings give for a model of it, with its key from its variable or
// the settings; ask is true when no key was found for its own API.
func (s *session) switchConfig(name string) (cfg llm.Config, source string, ask bool, err error) {
	p := s.p
	cfg, source = p.cfg, p.keySource
	cfg.Model = name
	cfg.Stream = true // as prepare gives the agent
	to := providerOf(name)
	if to == "" || to == providerOf(p.cfg.Model) {
		return cfg, source, false, nil
	}
	st, _, err := s.a.loadSettings()
	if err != nil {
		return cfg, "", false, err
	}
	cfg.BaseURL, cfg.APIKey, source = "", secret.String{}, ""
	same := providerOf(st.Model) == to
	if same {
		cfg.BaseURL = st.BaseURL
	}
	found := func(k secret.String, from string) {
		if source == "" && !k.IsZero() {
			cfg.APIKey, source = k, from
		}
	}
	for _, v := range providerKeyVars[to] {
		found(p.keyEnv[v], "$"+v)
	}
	found(secret.New(st.APIKeys[to]), "the settings file (api_keys)")
	if same {
		if st.APIKeyEnv != "" {
			found(p.keyEnv[st.APIKeyEnv], "$"+st.APIKeyEnv+" (named by the settings file)")
		}
		found(secret.New(st.APIKey), "the settings file")
	}
	return cfg, source, source == "" && cfg.BaseURL == "", nil
}

// switchModel makes cfg the conversation's model from its next step; with
// no conversation yet, the next one starts with it.
func (s *session) switchModel(ctx context.Context, cfg llm.Config, source string) (string, error) {
	conv := s.current()
	if conv != nil {
		if err := conv.SwitchLLM(ctx, cfg); err != nil {
			return "", err
		}
	}
	s.mu.Lock()
	s.p.cfg, s.p.keySource = cfg, source
	if conv == nil {
		s.switchTo = &cfg
	}
	s.mu.Unlock()
	msg := fmt.Sprintf("This conversation now uses %s from its next step", cfg.Model)
	if conv == nil {
		msg = fmt.Sprintf("The conversation will use %s", cfg.Model)
	}
	var how []string
	if source != "" {
		how = append(how, "key from "+source)
	}
	if cfg.BaseURL != "" {
		how = append(how, "at "+cfg.BaseURL)
	}
	if len(how) > 0 {
		msg += " (" + strings.Join(how, ", ") + ")"
	}
	return msg + ".", nil
}

// settingsCommand is /settings: it shows the settings, or changes one.
func (s *session) settingsCommand(ctx context.Context, arg string) (string, error) {
	p := s.p
	st, path, err := s.a.loadSettings()
	if err != nil {
		return "", err
	}
	field, value, _ := strings.Cut(arg, " ")
	value = strings.TrimSpace(value)
	if field == "" {
		var sb strings.Builder
		fmt.Fprintf(&sb, "In use: %s", p.cfg.Model)
		if p.cfg.BaseURL != "" {
			fmt.Fprintf(&sb, " at %s", p.cfg.BaseURL)
		}
		fmt.Fprintf(&sb, ", key from %s, confirm %s\n", cmpOr(p.keySource, "nowhere (none needed)"), p.confirm)
		fmt.Fprintf(&sb, "Workspace: %s · conversations: %s\n", p.workDir, p.base)
		fmt.Fprintf(&sb, "Settings file: %s\n", cmpOr(path, "(none)"))
		show := func(name, v string) {
			fmt.Fprintf(&sb, "  %-9s %s\n", name, cmpOr(v, "-"))
		}
		show("model", st.Model)
		show("base_url", st.BaseURL)
		key := ""
		if st.APIKey != "" {
			key = "(set)"
		}
		show("key", key)
		show("key_env", st.APIKeyEnv)
		var others []string
		for name := range st.APIKeys {
			others = append(others, name)
		}
		slices.Sort(others)
		show("api_keys", strings.Join(others, ", "))
		show("confirm", st.Confirm)
		show("mcp", fmt.Sprintf("%d servers (gohands mcp list)", len(st.MCPServers)))
		sb.WriteString("Change one with /settings model NAME · base_url URL|- · key (asked, hidden) · key_env VAR|- · confirm always|risky|never")
		return sb.String(), nil
	}
	if path == "" {
		return "", errors.New("no settings file: neither $XDG_CONFIG_HOME nor $HOME is set")
	}
	if value == "-" {
		value = ""
	}
	save := func(what string) (string, error) {
		if err := saveSettings(path, st); err != nil {
			return "", err
		}
		return fmt.Sprintf("Saved %s in %s.", what, path), nil
	}
	switch field {
	case "model":
		if value == "" {
			return "", errors.New("/settings model NAME: a model is needed")
		}
		st.Model = value
		return save("model " + value + " (used from the next start; /model switches this conversation)")
	case "base_url":
		st.BaseURL = value
		return save("base_url " + cmpOr(value, "(none)") + " (used from the next start)")
	case "key_env":
		st.APIKeyEnv = value
		return save("key_env " + cmpOr(value, "(none)") + " (used from the next start)")
	case "key":
		if value != "" {
			return "", errors.New("/settings key takes no value: it asks for the key, hidden")
		}
		return "", &tui.Question{
			Prompt: fmt.Sprintf("API key for %s (saved in the settings file, mode 0600):", cmpOr(st.Model, "the settings' model")),
			Secret: true,
			Answer: func(_ context.Context, key string) (string, error) {
				st, path, err := s.a.loadSettings()
				if err != nil {
					return "", err
				}
				st.APIKey = key
				if err := saveSettings(path, st); err != nil {
					return "", err
				}
				return fmt.Sprintf("Saved the key in %s (used from the next start).", path), nil
			},
		}
	case "confirm":
		policy, _, err := confirmPolicy(value, p.workDir, nil)
		if err != nil {
			return "", errors.New("/settings confirm: want always, risky or never")
		}
		st.Confirm = value
		out, err := save("confirm " + value + " (from now on)")
		if err != nil {
			return "", err
		}
		if conv := s.current(); conv != nil {
			if err := conv.SetConfirmationPolicy(ctx, policy); err != nil {
				return "", err
			}
		}
		s.setConfirm(value, policy)
		return out, nil
	}
	return "", fmt.Errorf("/settings %s: unknown; one of model, base_url, key, key_env, confirm", field)
}

// findConversation finds the stored conversation whose id is id or
// starts with it.
func findConversation(base, id string) (convInfo, error) {
	infos, err := listConversations(base, func(string, error) {})
	if err != nil {
		return convInfo{}, err
	}
	var found []convInfo
	for _, c := range infos {
		if c.ID == id {
			return c, nil
		}
		if len(id) >= 4 && strings.HasPrefix(c.ID, id) {
			found = append(found, c)
		}
	}
	switch len(found) {
	case 0:
		return convInfo{}, fmt.Errorf("no conversation %s in %s", id, base)
	case 1:
		return found[0], nil
	}
	return convInfo{}, fmt.Errorf("%d conversations start with %s: give more of the id", len(found), id)
}
