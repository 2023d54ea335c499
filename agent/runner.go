package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gohands/gohands/condenser"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/hook"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/mcp"
	"github.com/gohands/gohands/security"
	"github.com/gohands/gohands/skill"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/invokeskill"
)

// AskUsageID is the usage id of the LLM answering AskAgent questions, as in
// the reference.
const AskUsageID = "ask-agent-llm"

// nudgeText is sent to the model, as an environment message, when it
// replied with neither text nor a tool call.
const nudgeText = "Your last reply had no message and no tool call. Continue the task with a tool call, or reply with a message if you are done or need the user."

// Messages the model sees when its tool calls could not run.
const (
	interruptedText = "Tool call interrupted: the conversation was paused before it completed."
	cancelledText   = "Tool call not run: the conversation was paused."
)

// statsEvery is how many LLM calls may pass between two saves of the
// conversation's LLM metrics (they are also saved when a run stops).
const statsEvery = 16

// runner is an Agent bound to one conversation.
type runner struct {
	a      *Agent
	sess   *conversation.Session
	model  llm.Model
	tools  []tool.Tool
	byName map[string]tool.Tool
	specs  []llm.ToolSpec
	limit  int

	askOnce  sync.Once
	askMu    sync.Mutex // guards askModel for saveStats
	askModel llm.Model
	askErr   error

	lockMu sync.Mutex
	locks  map[string]*sync.Mutex

	calls int // LLM calls since metrics were last saved; Step is never concurrent
	msgs  msgCache

	// cond condenses the view before each LLM call (nil: never);
	// condRequests is true when it acts on CondensationRequests, so the
	// agent may ask for one when the model's context overflows.
	cond         Condenser
	condRequests bool

	// mcp holds the MCP servers connected from mcp_config (nil: none).
	mcp *mcp.Set

	// skills is the agent's context with its skills loaded; nil when the
	// agent has none. activated names the keyword skills already injected
	// in this conversation (guarded by skillMu: SendMessage may run during
	// a step).
	skills    *skill.AgentContext
	skillMu   sync.Mutex
	activated []string

	// hooks runs the workspace's hooks (.openhands/hooks.json); nil when
	// none are configured.
	hooks *hook.Manager
}

// msgCache keeps the messages of a prefix of the view, so that a step
// projects only the events added since the previous one. Only Step uses
// it (Ask projects on its own, as it may run concurrently).
type msgCache struct {
	events []event.Event   // the prefix projected
	msgs   []event.Message // its messages
}

// messages returns the model's input for view, reusing the projection of
// the part of view seen by the previous step.
func (r *runner) messages(view []event.Event) []event.Message {
	c := &r.msgs
	if len(c.events) > len(view) || !slices.Equal(c.events, view[:len(c.events)]) {
		c.events, c.msgs = nil, nil // the view was condensed
	}
	// Only a prefix ending where no later event can join the last message
	// is cached: later actions of one response join their batch, and
	// consecutive user messages are merged.
	k := len(view)
	for k > len(c.events) && !closesMessage(view[k-1]) {
		k--
	}
	if k > len(c.events) {
		c.msgs = append(c.msgs, event.LLMMessages(view[len(c.events):k])...)
		c.events = view[:k:k]
	}
	return append(slices.Clip(c.msgs), event.LLMMessages(view[k:])...)
}

// closesMessage reports whether no event after e can be joined to the
// message e ends.
func closesMessage(e event.Event) bool {
	switch e := e.(type) {
	case *event.ObservationEvent, *event.AgentErrorEvent, *event.UserRejectObservation, *event.SystemPromptEvent:
		return true
	case *event.MessageEvent:
		return e.LLMMessage.Role != event.RoleUser
	}
	return false
}

var _ conversation.Agent = (*Agent)(nil)
var _ conversation.Verifier = (*Agent)(nil)

// Start implements conversation.Agent: it resolves the tools, makes the
// LLM and, unless the log already has one, emits the SystemPromptEvent.
func (a *Agent) Start(ctx context.Context, sess *conversation.Session) (conversation.Runner, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	r := &runner{a: a, sess: sess, limit: a.ToolConcurrencyLimit, locks: make(map[string]*sync.Mutex)}
	tools, err := a.resolveTools(sess)
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
	r.model = a.Model
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
	if err := r.initSkills(); err != nil {
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

// initCondenser sets the condenser: CondenserImpl, or else the agent's
// kind-tagged condenser configuration decoded by package condenser.
func (r *runner) initCondenser() error {
	if c := r.a.CondenserImpl; c != nil {
		r.cond = c
		if e, ok := c.(condenser.Events); ok {
			r.condRequests = e.Condenser != nil && e.Condenser.HandlesRequests()
		} else if h, ok := c.(interface{ HandlesRequests() bool }); ok {
			r.condRequests = h.HandlesRequests()
		}
		return nil
	}
	raw := bytes.TrimSpace(r.a.Condenser)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	c, err := condenser.Decode(raw)
	if err != nil {
		return fmt.Errorf("agent: condenser: %w", err)
	}
	if s, ok := c.(*condenser.LLMSummarizing); ok && s.LLM.APIKey.IsZero() &&
		s.LLM.Model == r.a.LLM.Model && s.LLM.BaseURL == r.a.LLM.BaseURL {
		// Only the agent's own key is kept with a stored conversation: a
		// condenser summarising with the agent's model uses it too.
		s.LLM.APIKey = r.a.LLM.APIKey
	}
	r.cond = condenser.Events{Condenser: c, AgentLLM: r.model}
	r.condRequests = c.HandlesRequests()
	return nil
}

// initSkills decodes the agent's context and loads its skills (the
// workspace's and the user's, as the context asks), once per runner. It
// also recovers the keyword skills earlier user messages activated, so a
// resumed conversation does not inject them again.
func (r *runner) initSkills() error {
	raw := bytes.TrimSpace(r.a.AgentContext)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	var ac skill.AgentContext
	if err := json.Unmarshal(raw, &ac); err != nil {
		return fmt.Errorf("agent: agent_context: %w", err)
	}
	home, _ := os.UserHomeDir()
	for _, w := range ac.LoadSkills(r.sess.WorkingDir(), home) {
		r.sess.Logger().Warn("agent: skill not loaded", "path", w.Path, "err", w.Err)
	}
	r.skills = &ac
	log := r.sess.State().Events()
	for i := range log.Len() {
		en, err := log.Entry(i)
		if err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		if en.Kind != "MessageEvent" || en.Source != event.SourceUser {
			continue
		}
		e, err := log.Event(i)
		if err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		if m, ok := e.(*event.MessageEvent); ok {
			r.activated = append(r.activated, m.ActivatedSkills...)
		}
	}
	return nil
}

// PrepareMessage implements conversation.MessagePreparer. The
// UserPromptSubmit hooks run first: one that blocks keeps the message out
// of the conversation (the error gives its reason), and the context they
// add goes into the message's extended content. Then the keyword skills
// the message triggers (each once per conversation) and the context's user
// message suffix are added, and the skills recorded in activated_skills.
func (r *runner) PrepareMessage(ctx context.Context, m *event.MessageEvent) error {
	text := event.TextOf(m.LLMMessage.Content)
	if r.hooks != nil {
		out := r.hooks.UserPromptSubmit(ctx, text, m.ID)
		if err := r.emitHookEvents(out); err != nil {
			return err
		}
		if out.Blocked {
			return fmt.Errorf("%w: %s", ErrMessageBlocked, out.Reason)
		}
		if out.AdditionalContext != "" {
			m.ExtendedContent = append(m.ExtendedContent, event.Text(out.AdditionalContext))
		}
	}
	if r.skills == nil {
		return nil
	}
	r.skillMu.Lock()
	defer r.skillMu.Unlock()
	extra, names := r.skills.UserMessageExtra(text, r.activated)
	if extra != "" {
		m.ExtendedContent = append(m.ExtendedContent, event.Text(extra))
	}
	m.ActivatedSkills = append(m.ActivatedSkills, names...)
	r.activated = append(r.activated, names...)
	return nil
}

// ErrMessageBlocked means a UserPromptSubmit hook kept a user message out
// of the conversation.
var ErrMessageBlocked = errors.New("agent: message blocked by a hook")

// emitHookEvents records the hook runs of out.
func (r *runner) emitHookEvents(out hook.Outcome) error {
	for _, e := range out.Events {
		if err := r.sess.Emit(e); err != nil {
			return err
		}
	}
	return nil
}

// initHooks loads the hooks of the workspace (or of the user's home). An
// invalid hooks file is an error: silently running without the user's
// guards would be worse.
//
// The conversation's hook_config, when set, is used instead of the files.
func (r *runner) initHooks() error {
	var (
		cfg  *hook.Config
		path = "hook_config"
		err  error
	)
	if raw := bytes.TrimSpace(r.sess.Fields().HookConfig); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		cfg, err = hook.Parse(raw)
	} else {
		cfg, path, err = hook.Load(r.sess.WorkingDir())
	}
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	if cfg == nil || cfg.IsEmpty() {
		return nil
	}
	r.sess.Logger().Debug("agent: hooks loaded", "path", path)
	r.hooks = hook.NewManager(cfg, &hook.Runner{
		WorkDir:   r.sess.WorkingDir(),
		SessionID: r.sess.ID(),
		Model:     r.model,
		Logger:    r.sess.Logger(),
	})
	return nil
}

// preToolUse runs the PreToolUse hooks of a, recording their runs, and
// returns the rejection to answer a with when a hook blocks it (nil: run
// it).
func (r *runner) preToolUse(ctx context.Context, a *event.ActionEvent) (*event.UserRejectObservation, error) {
	if r.hooks == nil {
		return nil, nil
	}
	out := r.hooks.PreToolUse(ctx, a.ToolName, json.RawMessage(a.ToolCall.Arguments), a.ID)
	if err := r.emitHookEvents(out); err != nil {
		return nil, err
	}
	if !out.Blocked {
		return nil, nil
	}
	return &event.UserRejectObservation{
		Base:            event.NewBase(event.SourceEnvironment),
		ToolName:        a.ToolName,
		ToolCallID:      a.ToolCallID,
		RejectionReason: out.Reason,
		RejectionSource: event.RejectedByHook,
		ActionID:        a.ID,
	}, nil
}

// postToolUse runs the PostToolUse hooks of an action that ran, giving
// them its observation, and records their runs. They cannot block.
func (r *runner) postToolUse(ctx context.Context, a *event.ActionEvent, ev event.Event) error {
	o, ok := ev.(*event.ObservationEvent)
	if r.hooks == nil || !ok || o.Observation == nil {
		return nil
	}
	resp, err := event.MarshalKinded(o.Observation)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	return r.emitHookEvents(r.hooks.PostToolUse(ctx, a.ToolName, json.RawMessage(a.ToolCall.Arguments), resp, a.ID))
}

// unhandledRequest reports whether a CondensationRequest of the active
// branch came after its last Condensation. It reads the entries only, not
// the events.
func (r *runner) unhandledRequest() (bool, error) {
	branch, err := r.sess.State().ActiveBranch()
	if err != nil {
		return false, err
	}
	for i := len(branch) - 1; i >= 0; i-- {
		switch branch[i].Kind {
		case "Condensation":
			return false, nil
		case "CondensationRequest":
			return true, nil
		}
	}
	return false, nil
}

// resolveTools materialises the configured tools, the extra tools and the
// built-ins.
func (a *Agent) resolveTools(sess *conversation.Session) ([]tool.Tool, error) {
	// Tools live as long as the conversation, not as Start's ctx.
	env, mask := sess.Secrets().TerminalHooks(context.Background())
	tctx := tool.Context{
		WorkingDir:      sess.WorkingDir(),
		ConversationDir: sess.Dir(),
		Secrets:         sess.Secrets().Lookup(context.Background()),
		SecretEnv:       env,
		Mask:            mask,
	}
	tools, err := tool.ResolveAll(tctx, a.Tools)
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
	tools = append(tools, a.ExtraTools...)
	var specs []tool.Spec
	for _, c := range a.IncludeDefaultTools {
		if c == invokeskill.KindName {
			continue // it needs the loaded skills: attachInvokeSkill adds it
		}
		specs = append(specs, tool.Spec{Name: defaultToolNames[c]})
	}
	builtins, err := tool.ResolveAll(tctx, specs)
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
		case en.Kind == "SystemPromptEvent":
			return nil // resumed
		case en.Kind == "MessageEvent" && en.Source == event.SourceUser:
			return errors.New("agent: the log has a user message before the system prompt")
		}
	}
	prompt := r.a.SystemPrompt
	if prompt == "" {
		prompt = systemPrompt
		for _, t := range r.tools {
			if !tool.ReadOnly(t) {
				prompt += riskPrompt
				break
			}
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

// connectMCP connects the servers of the agent's mcp_config (unless the
// caller did) and keeps the set in r.mcp, whose tools Start offers. A
// server that fails to start is logged and left out; the others load.
func (r *runner) connectMCP(ctx context.Context, resolved []tool.Tool) error {
	a := r.a
	if a.MCPConnected || len(a.MCPConfig) == 0 {
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
	reserved := make([]string, 0, len(resolved))
	for _, t := range resolved {
		reserved = append(reserved, t.Name())
	}
	secrets := r.sess.Secrets()
	set, err := mcp.Connect(ctx, cfg, &mcp.Options{
		Reserved: reserved,
		Logger:   r.sess.Logger(),
		Secrets:  secrets.Lookup(context.Background()),
		Mask:     secrets.Mask,
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

// saveStats copies the LLMs' metrics into the conversation's stats.
func (r *runner) saveStats() error {
	r.calls = 0
	var ls []*llm.LLM
	if l, ok := r.model.(*llm.LLM); ok {
		ls = append(ls, l)
	}
	r.askMu.Lock()
	ask := r.askModel
	r.askMu.Unlock()
	if l, ok := ask.(*llm.LLM); ok && l != r.model {
		ls = append(ls, l)
	}
	if len(ls) == 0 {
		return nil
	}
	return r.sess.State().Update(func(f *conversation.Fields) error {
		m := make(event.Map[string, *llm.Metrics], len(f.Stats.UsageToMetrics)+len(ls))
		for k, v := range f.Stats.UsageToMetrics {
			m[k] = v
		}
		for _, l := range ls {
			lm := l.Metrics()
			m[l.UsageID()] = &lm
		}
		f.Stats.UsageToMetrics = m
		return nil
	})
}

// Step implements conversation.Runner (reference-behaviors §1.5).
func (r *runner) Step(ctx context.Context) error {
	pending, err := r.sess.Pending()
	if err != nil {
		return err
	}
	if len(pending) > 0 {
		return r.execute(ctx, pending, nil)
	}
	view, err := r.sess.View()
	if err != nil {
		return err
	}
	if r.cond != nil {
		cview := view
		if r.condRequests {
			req, err := r.unhandledRequest()
			if err != nil {
				return err
			}
			if req {
				// The session's view has condensations applied but drops
				// requests: a trailing one tells the condenser it must act.
				cview = append(slices.Clip(view), &event.CondensationRequest{})
			}
		}
		cond, err := r.cond.Condense(ctx, cview)
		if err != nil {
			return fmt.Errorf("agent: condense: %w", err)
		}
		if cond != nil {
			return r.sess.Emit(cond)
		}
	}
	opts := &llm.CallOptions{ConversationID: r.sess.ID()}
	if r.a.LLM.Stream {
		// Token deltas reach live subscribers (a terminal, a WebSocket)
		// as they arrive; the reply is stored whole when it is complete.
		opts.OnDelta = r.publishDelta
	}
	resp, err := r.model.Completion(ctx, r.messages(view), r.specs, opts)
	if err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		switch {
		case r.condRequests && (errors.Is(err, llm.ErrContextWindowExceeded) || errors.Is(err, llm.ErrMalformedHistory)):
			// The condenser shortens the view at the next step.
			r.sess.Logger().Warn("agent: asking for a condensation", "err", err)
			return r.sess.Emit(&event.CondensationRequest{Base: event.NewBase(event.SourceEnvironment)})
		case errors.Is(err, llm.ErrFunctionCall):
			// The model wrote a tool call we could not parse: tell it.
			return r.sess.Emit(&event.MessageEvent{Base: event.NewBase(event.SourceUser), LLMMessage: event.UserMessage(err.Error())})
		case errors.Is(err, llm.ErrContentPolicy):
			return r.sess.Emit(&event.MessageEvent{Base: event.NewBase(event.SourceUser), LLMMessage: event.UserMessage(
				"Your last reply was blocked by the provider's content policy. Rephrase it and continue.")})
		}
		return fmt.Errorf("agent: %w", err) // err says "llm: …" itself
	}
	if r.calls++; r.calls >= statsEvery {
		if err := r.saveStats(); err != nil {
			return err
		}
	}
	msg := resp.Message
	switch {
	case len(msg.ToolCalls) > 0:
		return r.toolCalls(ctx, resp)
	case strings.TrimSpace(event.TextOf(msg.Content)) != "":
		err := r.sess.Emit(&event.MessageEvent{Base: event.NewBase(event.SourceAgent), LLMMessage: msg, LLMResponseID: resp.ID})
		if err != nil {
			return err
		}
		return r.finish(ctx)
	default:
		// Reasoning only, or nothing: keep what there is and nudge.
		return r.sess.EmitAll(
			&event.MessageEvent{Base: event.NewBase(event.SourceAgent), LLMMessage: msg, LLMResponseID: resp.ID},
			&event.MessageEvent{Base: event.NewBase(event.SourceEnvironment), LLMMessage: event.UserMessage(nudgeText)},
		)
	}
}

// finish ends the run: status finished, metrics saved.
//
// Stop hooks run first: one that blocks keeps the agent running, told why
// in a user message.
func (r *runner) finish(ctx context.Context) error {
	if r.hooks != nil {
		out := r.hooks.Stop(ctx, "agent_finished")
		if err := r.emitHookEvents(out); err != nil {
			return err
		}
		if out.Blocked {
			return r.sess.Emit(&event.MessageEvent{Base: event.NewBase(event.SourceUser), LLMMessage: event.UserMessage(out.StopFeedback())})
		}
	}
	return errors.Join(r.sess.SetStatus(conversation.StatusFinished), r.saveStats())
}

// toolCalls turns a reply's tool calls into ActionEvents, then asks for
// confirmation or executes them (reference-behaviors §1.6–1.8).
//
// Unlike the reference, every ActionEvent of the reply is emitted first,
// and the errors of invalid calls are emitted with the results, in call
// order: the model's reply stays one assistant message followed by its
// results. Calls after a valid finish call are dropped before any event
// is written (the reference writes them and leaves them pending).
func (r *runner) toolCalls(ctx context.Context, resp *llm.Response) error {
	msg := resp.Message
	honourRisk := r.analyzer() != nil
	var (
		actions []event.Event
		valid   []*event.ActionEvent
		errs    = make(map[string]*event.AgentErrorEvent)
	)
	for i, tc := range msg.ToolCalls {
		ae := &event.ActionEvent{
			Base:          event.NewBase(event.SourceAgent),
			ToolName:      tc.Name,
			ToolCallID:    tc.ID,
			ToolCall:      tc,
			LLMResponseID: resp.ID,
			SecurityRisk:  event.RiskUnknown,
			Thought:       event.List[event.Content]{},
		}
		if i == 0 {
			for _, c := range msg.Content {
				if c.Type == event.ContentText {
					ae.Thought = append(ae.Thought, c)
				}
			}
			ae.ReasoningContent = msg.ReasoningContent
			ae.ThinkingBlocks = msg.ThinkingBlocks
			ae.ResponsesItem = msg.ResponsesItem
		}
		call, err := tool.PrepareCall(r.tools, tc.Name, tc.Arguments, honourRisk)
		if err != nil {
			var ce *tool.CallError
			name := tc.Name
			if errors.As(err, &ce) {
				name = ce.ToolName
				if ce.Unparseable {
					b, _ := event.MarshalJSON(map[string]any{"_openhands_malformed_tool_call": true, "error": ce.Err.Error()})
					ae.ToolCall.Arguments = string(b)
				}
			}
			ae.ToolName = name
			actions = append(actions, ae)
			errs[ae.ID] = &event.AgentErrorEvent{
				Base:     event.NewBase(event.SourceAgent),
				ToolName: name, ToolCallID: tc.ID, Error: err.Error(),
				Classification: event.AgentActionError,
			}
			continue
		}
		ae.ToolName, ae.Action = call.Name, call.Action
		ae.ToolCall.Name, ae.ToolCall.Arguments = call.Name, call.Arguments
		ae.SecurityRisk, ae.Summary = call.SecurityRisk, call.Summary
		actions = append(actions, ae)
		valid = append(valid, ae)
		if call.Name == FinishToolName {
			if n := len(msg.ToolCalls) - i - 1; n > 0 {
				r.sess.Logger().Info("dropped tool calls after finish", "count", n)
			}
			break
		}
	}
	if err := r.sess.EmitAll(actions...); err != nil {
		return err
	}
	if r.needsConfirmation(ctx, valid) {
		// The invalid calls are answered now; the valid ones wait.
		var out []event.Event
		for _, a := range actions {
			if e, ok := errs[a.EventBase().ID]; ok {
				out = append(out, e)
			}
		}
		if len(out) > 0 {
			if err := r.sess.EmitAll(out...); err != nil {
				return err
			}
		}
		return r.sess.SetStatus(conversation.StatusWaitingForConfirmation)
	}
	batch := make([]*event.ActionEvent, 0, len(actions))
	for _, a := range actions {
		batch = append(batch, a.(*event.ActionEvent))
	}
	return r.execute(ctx, batch, errs)
}

// analyzer returns the conversation's security analyzer, if it is one this
// package can use.
// A RuleAnalyzer (alone or in an Ensemble) that does not name its
// workspace or secrets gets the conversation's, so that writes outside the
// workspace and sending a secret's variable are rated.
func (r *runner) analyzer() Analyzer {
	an, _ := r.bindAnalyzer(r.sess.Fields().SecurityAnalyzer).(Analyzer)
	return an
}

// bindAnalyzer returns an with the conversation's workspace and secret
// names filled in where it leaves them empty; an itself, shared by the
// persisted state, is not changed.
func (r *runner) bindAnalyzer(an any) any {
	switch a := an.(type) {
	case *security.RuleAnalyzer:
		if a == nil {
			return an
		}
		b := *a
		if b.WorkDir == "" {
			b.WorkDir = r.sess.WorkingDir()
		}
		if len(b.SecretNames) == 0 && r.sess.Secrets() != nil {
			b.SecretNames = r.sess.Secrets().Names()
		}
		return &b
	case *security.Ensemble:
		if a == nil {
			return an
		}
		b := *a
		b.Analyzers = make([]security.Analyzer, len(a.Analyzers))
		for i, x := range a.Analyzers {
			if bx, ok := r.bindAnalyzer(x).(security.Analyzer); ok {
				b.Analyzers[i] = bx
			} else {
				b.Analyzers[i] = x
			}
		}
		return &b
	}
	return an
}

// needsConfirmation applies the confirmation policy to the valid actions
// of a reply (reference-behaviors §1.7).
func (r *runner) needsConfirmation(ctx context.Context, valid []*event.ActionEvent) bool {
	if len(valid) == 0 {
		return false
	}
	if len(valid) == 1 && (valid[0].ToolName == FinishToolName || valid[0].ToolName == "think") {
		return false
	}
	policy := r.sess.Fields().Policy()
	risks := make([]event.SecurityRisk, len(valid))
	for i := range risks {
		risks[i] = event.RiskUnknown
	}
	if an := r.analyzer(); an != nil {
		got, err := an.AnalyzeActions(ctx, valid)
		if err != nil || len(got) != len(valid) {
			r.sess.Logger().Warn("security analyzer failed; treating actions as high risk", "err", err)
			for i := range risks {
				risks[i] = event.RiskHigh
			}
		} else {
			copy(risks, got)
		}
	}
	return slices.ContainsFunc(risks, policy.ShouldConfirm)
}

// result is the outcome of one action of a batch.
type result struct {
	ev   event.Event
	done chan struct{}
}

// execute runs a batch of actions and emits their results in the batch's
// order, each as soon as it and all before it are done. Actions in errs
// already failed; they get that error as their result. If the batch
// finished (a finish action ran), the status becomes finished.
func (r *runner) execute(ctx context.Context, batch []*event.ActionEvent, errs map[string]*event.AgentErrorEvent) error {
	results := make([]result, len(batch))
	finished := false
	var wg sync.WaitGroup
	var sem chan struct{}
	parallel := r.limit > 1 && len(batch) > 1
	if parallel {
		sem = make(chan struct{}, r.limit)
	}
	for i, a := range batch {
		if e, ok := errs[a.ID]; ok {
			results[i].ev = e
			continue
		}
		if a.Action == nil {
			// A pending action always has one; be safe with odd logs.
			results[i].ev = r.errorEvent(a, "Action could not be parsed.", event.AgentActionError)
			continue
		}
		rej, err := r.preToolUse(ctx, a)
		if err != nil {
			wg.Wait()
			return err
		}
		if rej != nil {
			results[i].ev = rej
			continue
		}
		if a.ToolName == FinishToolName {
			finished = true
		}
		if !parallel {
			results[i].ev = r.run(ctx, a)
			continue
		}
		results[i].done = make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(results[i].done)
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i].ev = r.run(ctx, a)
		}()
	}
	var emitErr error
	for i := range results {
		if results[i].done != nil {
			<-results[i].done
		}
		if emitErr == nil {
			emitErr = r.sess.Emit(results[i].ev)
		}
		if emitErr == nil {
			emitErr = r.postToolUse(ctx, batch[i], results[i].ev)
		}
	}
	wg.Wait()
	if emitErr != nil {
		return emitErr
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if finished {
		return r.finish(ctx)
	}
	return nil
}

// run executes one action under its resource locks and returns its result
// event. It never fails: failures are AgentErrorEvents.
func (r *runner) run(ctx context.Context, a *event.ActionEvent) (ev event.Event) {
	t, ok := r.byName[a.ToolName]
	if !ok {
		return r.errorEvent(a, fmt.Sprintf("Tool '%s' not found.", a.ToolName), event.AgentActionError)
	}
	if ctx.Err() != nil {
		return r.errorEvent(a, cancelledText, event.AgentActionError)
	}
	unlock := r.lock(t, a.Action)
	defer unlock()
	if ctx.Err() != nil {
		return r.errorEvent(a, cancelledText, event.AgentActionError)
	}
	defer func() {
		if p := recover(); p != nil {
			r.sess.Logger().Error("tool panicked", "tool", a.ToolName, "panic", p)
			ev = r.errorEvent(a, fmt.Sprintf("Error executing tool '%s': %v", a.ToolName, p), internalError)
		}
	}()
	obs, err := t.Execute(WithCaller(ctx, &Caller{Session: r.sess, Agent: r.a, Model: r.model}), a.Action)
	switch {
	case err != nil && ctx.Err() != nil:
		return r.errorEvent(a, interruptedText, event.AgentActionError)
	case err != nil:
		return r.errorEvent(a, fmt.Sprintf("Error executing tool '%s': %v", a.ToolName, err), event.AgentActionError)
	case obs == nil:
		return r.errorEvent(a, fmt.Sprintf("Error executing tool '%s': no result", a.ToolName), internalError)
	}
	return &event.ObservationEvent{
		Base:        event.NewBase(event.SourceEnvironment),
		ToolName:    a.ToolName,
		ToolCallID:  a.ToolCallID,
		Observation: obs,
		ActionID:    a.ID,
	}
}

// internalError classifies failures of tools themselves.
var internalError = event.ErrorClassification{Kind: event.ErrorKindInternal, UserAction: event.UserActionNone}

func (r *runner) errorEvent(a *event.ActionEvent, msg string, cls event.ErrorClassification) *event.AgentErrorEvent {
	return &event.AgentErrorEvent{
		Base:     event.NewBase(event.SourceAgent),
		ToolName: a.ToolName, ToolCallID: a.ToolCallID, Error: msg, Classification: cls,
	}
}

// lock takes the locks of the resources action uses, in sorted order so
// that two batches never deadlock, and returns their release.
func (r *runner) lock(t tool.Tool, action event.Action) (unlock func()) {
	var keys []string
	if d, ok := t.(ResourceDeclarer); ok {
		keys = slices.Compact(slices.Sorted(slices.Values(d.Resources(action))))
	} else {
		keys = []string{"tool:" + t.Name()}
	}
	if len(keys) == 0 || r.limit == 1 {
		return func() {}
	}
	ms := make([]*sync.Mutex, len(keys))
	r.lockMu.Lock()
	for i, k := range keys {
		m, ok := r.locks[k]
		if !ok {
			m = new(sync.Mutex)
			r.locks[k] = m
		}
		ms[i] = m
	}
	r.lockMu.Unlock()
	for _, m := range ms {
		m.Lock()
	}
	return func() {
		for i := len(ms) - 1; i >= 0; i-- {
			ms[i].Unlock()
		}
	}
}

// askTemplate wraps a side question (reference-behaviors §11, in our own
// words).
const askTemplate = `Answer this question about the work so far, in plain text. Do not call any tool: this is a side question, not a new task.

<QUESTION>
%s
</QUESTION>`

// Ask implements conversation.Runner: it asks the model a side question
// about view, with a separate usage id, and emits nothing.
func (r *runner) Ask(ctx context.Context, view []event.Event, question string) (string, error) {
	r.askOnce.Do(func() {
		m := r.a.Model
		if m == nil {
			cfg := r.a.LLM
			cfg.UsageID, cfg.Stream = AskUsageID, false
			m, r.askErr = llm.New(cfg, &llm.Options{Logger: r.sess.Logger()})
		}
		r.askMu.Lock()
		r.askModel = m
		r.askMu.Unlock()
	})
	if r.askErr != nil {
		return "", fmt.Errorf("agent: ask: %w", r.askErr)
	}
	// Actions may be running or waiting for confirmation: leave out the
	// calls that have no result yet.
	msgs := append(event.LLMMessages(conversation.Paired(view)), event.UserMessage(fmt.Sprintf(askTemplate, question)))
	resp, err := r.askModel.Completion(ctx, msgs, r.specs, &llm.CallOptions{ConversationID: r.sess.ID(), NoStream: true})
	if err != nil {
		return "", fmt.Errorf("agent: ask: %w", err)
	}
	for _, c := range resp.Message.Content {
		if c.Type == event.ContentText && strings.TrimSpace(c.Text) != "" {
			return c.Text, nil
		}
	}
	return "", errors.New("agent: ask: the model gave no text answer")
}

// publishDelta publishes the text and reasoning of a streamed fragment as
// a StreamingDeltaEvent; tool call fragments are not published.
func (r *runner) publishDelta(d llm.Delta) error {
	if d.Text == "" && d.Reasoning == "" {
		return nil
	}
	e := &event.StreamingDeltaEvent{Base: event.NewBase(event.SourceAgent)}
	if d.Text != "" {
		e.Content = &d.Text
	}
	if d.Reasoning != "" {
		e.ReasoningContent = &d.Reasoning
	}
	r.sess.Publish(e)
	return nil
}
