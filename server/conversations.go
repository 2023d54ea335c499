package server

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/agent/acp"
	"github.com/gohands/gohands/api/protocol"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/hook"
	"github.com/gohands/gohands/internal/wire"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/security"
	"github.com/gohands/gohands/tool"
)

// includeSkillsQuery is the include_skills parameter of the routes that
// answer ConversationInfo.
type includeSkillsQuery struct {
	IncludeSkills bool `query:"include_skills" description:"Include agent.agent_context.skills in the response (trimmed to [] by default)."`
}

// created is what the creation of a conversation decided.
type created struct {
	c       *conv
	isNew   bool
	lc      *conversation.LocalConversation
	initial *initialMessage
}

func (s *Server) handleStart(in *request[includeSkillsQuery, startRequest]) (any, error) {
	r, req := in.r, &in.body
	// A create that would be refused a run stores nothing: the slot is
	// taken before the conversation is made (a client retrying a 429 must
	// not leave a conversation behind per try).
	reserved := false
	if m := req.InitialMessage; m != nil && m.Run {
		if !s.reserveRun() {
			return nil, errTooManyRuns
		}
		reserved = true
		defer func() {
			if reserved {
				s.runs.Add(-1)
			}
		}()
	}
	obs, err := observabilityOf(req, r.Header)
	if err != nil {
		return nil, err
	}
	res, err := s.start(r.Context(), req, obs)
	if err != nil {
		return nil, err
	}
	status := http.StatusOK
	if res.isNew {
		status = http.StatusCreated
	}
	// A start repeated with the id of a conversation that has no message
	// yet sends its initial message: the first start may have been killed
	// between creating the conversation and storing the message, and its
	// client, never answered, tries again. (The reference ignores the
	// message of a repeated start.)
	lc, err := res.c.hold(r.Context())
	if err != nil {
		return nil, err
	}
	if m := res.initial; m != nil && (res.isNew || !lc.HasUserMessage()) {
		msg := event.Message{Role: event.RoleUser, Content: m.Content}
		if err := lc.SendMessage(r.Context(), msg); err != nil {
			return nil, err
		}
		if m.Run {
			reserved = false // startRun takes the slot, or releases it
			if err := res.c.startRun(r.Context(), true); err != nil {
				return nil, err
			}
		}
	}
	if res.isNew {
		res.c.awaitAnnounced(r.Context(), announceWait)
	}
	info, err := res.c.info(in.query.IncludeSkills)
	if err != nil {
		return nil, err
	}
	return reply{status, info}, nil
}

// announceWait bounds how long a create waits for its webhook post.
const announceWait = 10 * time.Second

// start creates the conversation req describes, or returns the existing
// one with its id.
func (s *Server) start(ctx context.Context, req *startRequest, obs *observability) (*created, error) {
	return s.startAgent(ctx, req, obs, nil, nil)
}

// startAgent is start with the agent given (nil: decoded from req), as a
// child conversation gets its parent's without a trip through JSON that
// would redact its keys, and what add adds to the agent profile of
// agent_profile_id (nil: nothing).
func (s *Server) startAgent(ctx context.Context, req *startRequest, obs *observability, given conversation.Agent, add *launchAdditions) (*created, error) {
	id := uuid.NewString()
	if req.ConversationID != nil {
		u, err := uuid.Parse(*req.ConversationID)
		if err != nil {
			return nil, &invalidError{loc: []any{"body", "conversation_id"}, typ: "uuid_parsing", msg: "Input should be a valid UUID"}
		}
		id = u.String()
		if c := s.lookup(id); c != nil {
			lc, err := c.load(ctx)
			if err != nil {
				return nil, err
			}
			return &created{c: c, lc: lc, initial: req.InitialMessage}, nil
		}
	}
	if s.closing.Load() {
		return nil, errShuttingDown
	}
	if err := s.checkUnimplemented(req); err != nil {
		return nil, err
	}
	if add == nil {
		var err error
		if add, err = decodeLaunchAdditions(req.AgentLaunchAdditions, req.AgentProfileID != nil); err != nil {
			return nil, err
		}
	}
	ag := given
	var launched *launchedProfile
	if ag == nil && req.AgentProfileID != nil && isNull(req.Agent) && (len(req.AgentSettings) == 0 || isNull(req.AgentSettings)) {
		a, l, err := s.profileLaunch(*req.AgentProfileID, add)
		if err != nil {
			return nil, err
		}
		ag, launched = a, l
		if l.SecretRefs != nil {
			// The profile's allow-list scopes the request's secrets.
			kept := map[string]json.RawMessage{}
			for k, v := range req.Secrets {
				if slices.Contains(l.SecretRefs, k) {
					kept[k] = v
				}
			}
			r := *req
			r.Secrets = kept
			req = &r
		}
	}
	if ag == nil {
		var err error
		if ag, err = decodeAgent(req); err != nil {
			return nil, err
		}
	}
	ag, err := withLaunchAdditions(ag, add)
	if err != nil {
		return nil, err
	}
	var ws struct {
		WorkingDir string `json:"working_dir"`
	}
	if len(req.Workspace) == 0 || isNull(req.Workspace) {
		return nil, &invalidError{loc: []any{"body", "workspace"}, typ: "missing", msg: "Field required"}
	}
	if err := json.Unmarshal(req.Workspace, &ws); err != nil {
		return nil, &invalidError{loc: []any{"body", "workspace"}, typ: "model_type", msg: "Input should be a LocalWorkspace object"}
	}
	if ws.WorkingDir == "" {
		ws.WorkingDir = s.opts.WorkspacePath
	}
	if !filepath.IsAbs(ws.WorkingDir) {
		// As the reference resolves it: against the server's working
		// directory (the OpenHands app sends "." and runs its git set-up
		// there).
		abs, err := filepath.Abs(ws.WorkingDir)
		if err != nil {
			return nil, invalid(err.Error(), "body", "workspace", "working_dir")
		}
		ws.WorkingDir = abs
	}
	clientTools, err := addClientTools(ag, req.ClientTools)
	if err != nil {
		return nil, err
	}
	agentDefs, storedDefs, err := decodeAgentDefinitions(req.AgentDefinitions)
	if err != nil {
		return nil, err
	}
	// The options are checked even when unused, as the reference's model
	// checks them.
	wtOpts, err := decodeWorktreeOptions(req.WorktreeOptions)
	if err != nil {
		return nil, err
	}
	if req.Worktree == nil || !*req.Worktree {
		wtOpts = nil
	}
	opts := &conversation.LocalOptions{
		ID:                   id,
		Backend:              s.cat.backend(),
		Cipher:               s.cipher,
		RecordStateChanges:   true,
		OmitSecurityAnalysis: !s.opts.SecurityAnalysisEvents,
		SubscriberBuffer:     s.opts.SubscriberBuffer,
		Logger:               s.log,
		Profiles:             s.llmProfiles(),
		MCPOAuthWriteBack:    s.writeBackMCPOAuth,
	}
	if req.MaxIterations != nil {
		if *req.MaxIterations < 1 {
			return nil, &invalidError{loc: []any{"body", "max_iterations"}, typ: "greater_than_equal", msg: "Input should be greater than or equal to 1"}
		}
		opts.MaxIterations = *req.MaxIterations
	}
	opts.DisableStuckDetection = req.StuckDetection != nil && !*req.StuckDetection
	if p, err := decodePolicy(req.ConfirmationPolicy, "confirmation_policy"); err != nil {
		return nil, err
	} else if p != nil {
		opts.ConfirmationPolicy = p
	}
	if a, err := decodeAnalyzer(req.SecurityAnalyzer, "security_analyzer"); err != nil {
		return nil, err
	} else if a != nil {
		opts.SecurityAnalyzer = a
	}
	if opts.Secrets, err = s.decodeSecrets(req.Secrets, req.SecretsEncrypted, true); err != nil {
		return nil, err
	}
	if len(req.HookConfig) > 0 && !isNull(req.HookConfig) {
		// Checked here so that a bad one is a 422 now, not a 500 when the
		// agent starts (and never stored, to be answered back as it came).
		if _, err := hook.Parse(req.HookConfig); err != nil {
			return nil, invalid(err.Error(), "body", "hook_config")
		}
		opts.HookConfig = req.HookConfig
	}
	plugins, err := s.startPlugins(req.Plugins, ag, opts)
	if err != nil {
		return nil, err
	}
	for k, v := range req.Tags {
		if !tagKey(k) || len([]rune(v)) > 256 {
			return nil, invalid(fmt.Sprintf("tag %q: keys are lowercase letters and digits, values at most 256 characters", k), "body", "tags")
		}
	}
	if req.InitialMessage != nil && req.InitialMessage.Role != "" && req.InitialMessage.Role != "user" {
		return nil, invalid("only user messages can be sent", "body", "initial_message", "role")
	}

	// Reserve the id so that two requests cannot create it twice; the
	// reservation reads as not found until the conversation is created.
	c := &conv{s: s, id: id, gone: true}
	s.mu.Lock()
	if other := s.convs[id]; other != nil {
		s.mu.Unlock()
		lc, err := other.load(ctx)
		if err != nil {
			return nil, err
		}
		return &created{c: other, lc: lc, initial: req.InitialMessage}, nil
	}
	s.convs[id] = c
	s.mu.Unlock()
	fail := func(err error) (*created, error) {
		s.mu.Lock()
		delete(s.convs, id)
		s.mu.Unlock()
		return nil, err
	}

	var wt *worktreePlan
	if wtOpts != nil {
		wt = planWorktree(ctx, s.opts.ConversationWorktreeRoot, id, ws.WorkingDir, wtOpts)
	}
	if wt != nil {
		if err := wt.create(ctx); err != nil {
			removeConversationWorktrees(context.WithoutCancel(ctx), filepath.Dir(wt.root))
			return fail(statusErr(http.StatusUnprocessableEntity, "Could not create the conversation's worktree: %v", err))
		}
		ag = withSystemSuffix(ag, wt.guidance())
		ws.WorkingDir = wt.workspace
		fail = func(err error) (*created, error) {
			removeConversationWorktrees(context.WithoutCancel(ctx), filepath.Dir(wt.root))
			s.mu.Lock()
			delete(s.convs, id)
			s.mu.Unlock()
			return nil, err
		}
	}
	registerAgentDefinitions(agentDefs, s.log)
	lc, err := conversation.New(ctx, ag, ws.WorkingDir, opts)
	if err != nil {
		if perr := pluginError(err); perr != nil {
			return fail(perr)
		}
		return fail(statusErr(http.StatusUnprocessableEntity, "Could not start the conversation: %v", err))
	}
	if len(req.Tags) > 0 {
		if err := lc.State().Update(func(f *conversation.Fields) error { f.Tags = req.Tags; return nil }); err != nil {
			lc.Close()
			return fail(err)
		}
	}
	now := utcNow()
	f := lc.State().Fields()
	wsJSON, _ := json.Marshal(map[string]string{"working_dir": ws.WorkingDir, "kind": "LocalWorkspace"})
	policy, _ := event.MarshalKinded(f.Policy())
	var analyzer json.RawMessage
	if f.SecurityAnalyzer != nil {
		analyzer, _ = event.MarshalKinded(f.SecurityAnalyzer)
	}
	hexid := hexID(id)
	meta := storedMeta{
		Workspace: wsJSON, Worktree: req.Worktree != nil && *req.Worktree, WorktreeOptions: wtOpts.stored(),
		ConversationID:       &hexid,
		ParentConversationID: req.ParentConversationID,
		ConfirmationPolicy:   policy, SecurityAnalyzer: analyzer,
		MaxIterations: f.MaxIterations, StuckDetection: f.StuckDetection,
		Secrets: map[string]json.RawMessage{}, ToolModuleQualnames: orEmpty(req.ToolModuleQualnames),
		ClientTools: clientTools, AgentDefinitions: storedDefs,
		HookConfig: f.HookConfig, Plugins: plugins, Tags: orEmpty(req.Tags), UserID: req.UserID,
		ObservabilitySpanName: "conversation", ObservabilityMetadata: json.RawMessage("{}"), ObservabilityTags: json.RawMessage("[]"),
		Autotitle:                         req.Autotitle == nil || *req.Autotitle,
		TitleLLMProfile:                   req.TitleLLMProfile,
		RequiredRuntimeCredentialBindings: []string{},
		ID:                                hexid, CreatedAt: now, UpdatedAt: now,
	}
	if launched != nil {
		meta.LaunchedAgentProfile, _ = json.Marshal(launched)
	}
	if o := obs; o != nil {
		meta.ObservabilitySpanName, meta.ObservabilityMetadata, meta.ObservabilityParentSpanContext = o.spanName, o.metadata, o.parent
		meta.ObservabilityTags, _ = json.Marshal(orEmptySlice(o.tags))
	}
	if req.InitialMessage != nil {
		meta.InitialMessage, _ = json.Marshal(req.InitialMessage)
	}
	if err := c.install(meta, lc); err != nil {
		return fail(err)
	}
	return &created{c: c, isNew: true, lc: lc, initial: req.InitialMessage}, nil
}

// orEmpty and orEmptySlice make nil encode as {} and [].
func orEmpty[M ~map[K]V, K comparable, V any](m M) M {
	if m == nil {
		return M{}
	}
	return m
}

func orEmptySlice[S ~[]E, E any](s S) S {
	if s == nil {
		return S{}
	}
	return s
}

func isNull(raw json.RawMessage) bool {
	b := bytes.TrimSpace(raw)
	return len(b) == 0 || string(b) == "null"
}

func tagKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// decodeAgent decodes and checks the agent of a start request: kind Agent
// (assumed when absent and llm is present), tools registered by name.
func decodeAgent(req *startRequest) (conversation.Agent, error) {
	hasSettings := len(req.AgentSettings) > 0 && !isNull(req.AgentSettings)
	switch {
	case req.AgentProfileID != nil && (hasSettings || !isNull(req.Agent)):
		return nil, invalid("`agent_profile_id` is mutually exclusive with `agent` and `agent_settings`", "body")
	case len(req.Agent) > 0 && !isNull(req.Agent):
	case hasSettings:
		// The reference builds the agent from the settings only when no
		// agent is given.
		var kind struct {
			AgentKind string `json:"agent_kind"`
		}
		if json.Unmarshal(req.AgentSettings, &kind) == nil && kind.AgentKind == "acp" {
			return acpSettingsAgent(req.AgentSettings)
		}
		a, err := agentFromSettings(req.AgentSettings)
		if err != nil {
			return nil, err
		}
		return a, checkAgent(a, "agent_settings")
	default:
		return nil, &invalidError{loc: []any{"body", "agent"}, typ: "missing", msg: "Field required: one of agent, agent_settings, agent_profile_id"}
	}
	raw := req.Agent
	var probe struct {
		Kind *string         `json:"kind"`
		LLM  json.RawMessage `json:"llm"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, &invalidError{loc: []any{"body", "agent"}, typ: "model_type", msg: "Input should be an agent object"}
	}
	if probe.Kind == nil {
		if len(probe.LLM) == 0 {
			return nil, invalid("agent has neither kind nor llm", "body", "agent")
		}
		b := bytes.TrimSpace(raw)
		raw = append(append([]byte(nil), b[:len(b)-1]...), []byte(`,"kind":"Agent"}`)...)
		if len(b) == 2 { // "{}" cannot have llm
			raw = []byte(`{"kind":"Agent"}`)
		}
	}
	v, err := event.DecodeKinded[any](raw)
	if err != nil {
		return nil, invalid(err.Error(), "body", "agent")
	}
	ag, ok := v.(conversation.Agent)
	if !ok {
		return nil, invalid(fmt.Sprintf("agent kind %q cannot run on this server", deref(probe.Kind)), "body", "agent")
	}
	if a, ok := ag.(*agent.Agent); ok {
		if err := checkAgent(a, "agent"); err != nil {
			return nil, err
		}
	}
	return ag, nil
}

// checkAgent checks what the agent loop would refuse only when it starts:
// the configuration, the model's name, tools the registry lacks.
func checkAgent(a *agent.Agent, field string) error {
	if err := a.Validate(); err != nil {
		return invalid(err.Error(), "body", field)
	}
	if strings.TrimSpace(a.LLM.Model) == "" {
		return invalid("llm.model must not be empty", "body", field, "llm", "model")
	}
	// The agent makes its LLM when it starts, which the first message
	// does: a model no provider answers (no provider/ prefix, no
	// base_url) would be a 500 on a conversation already stored.
	if _, err := llm.New(a.LLM, nil); err != nil {
		return invalid(err.Error(), "body", field, "llm")
	}
	known := tool.Registered()
	for _, sp := range a.Tools {
		if !slices.Contains(known, sp.Name) && tool.ClientSpecOf(sp) == nil {
			return invalid(fmt.Sprintf("ToolDefinition '%s' is not registered. Available: %v", sp.Name, known), "body", field, "tools")
		}
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func decodePolicy(raw json.RawMessage, field string) (security.ConfirmationPolicy, error) {
	if isNull(raw) {
		return nil, nil
	}
	p, err := event.DecodeKinded[security.ConfirmationPolicy](raw)
	if err == nil && event.IsUnknownKind(p) {
		// Kept when read from a store; a request must name a known kind.
		err = fmt.Errorf("%w %q", event.ErrUnknownKind, p.(event.Kinded).Kind())
	}
	if err != nil {
		return nil, invalid(err.Error(), "body", field)
	}
	return p, nil
}

func decodeAnalyzer(raw json.RawMessage, field string) (security.Analyzer, error) {
	if isNull(raw) {
		return nil, nil
	}
	a, err := event.DecodeKinded[security.Analyzer](raw)
	if err == nil && event.IsUnknownKind(a) {
		// Kept when read from a store; a request must name a known kind.
		err = fmt.Errorf("%w %q", event.ErrUnknownKind, a.(event.Kinded).Kind())
	}
	if err != nil {
		return nil, invalid(err.Error(), "body", field)
	}
	return a, nil
}

// decodeSecrets reads secret sources: kind-tagged SecretSources, and (for
// the secrets route, when plain is false... and always for that route)
// plain strings and {"value": ...} objects. Fernet tokens are decrypted
// when encrypted is set.
func (s *Server) decodeSecrets(in map[string]json.RawMessage, encrypted, kindOnly bool) (map[string]secret.Source, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make(map[string]secret.Source, len(in))
	for name, raw := range in {
		loc := []any{"body", "secrets", name}
		raw = bytes.TrimSpace(raw)
		var src secret.Source
		switch {
		case len(raw) > 0 && raw[0] == '"':
			if kindOnly {
				return nil, invalid("a secret must be a SecretSource object with a kind", loc...)
			}
			var v string
			json.Unmarshal(raw, &v)
			src = &secret.StaticSecret{Value: secret.New(v)}
		case len(raw) > 0 && raw[0] == '{':
			var probe struct {
				Kind  *string `json:"kind"`
				Value *string `json:"value"`
			}
			if err := json.Unmarshal(raw, &probe); err != nil {
				return nil, invalid(err.Error(), loc...)
			}
			if probe.Kind == nil {
				if probe.Value == nil {
					return nil, invalid("a secret needs a kind or a value", loc...)
				}
				src = &secret.StaticSecret{Value: secret.New(*probe.Value)}
				break
			}
			v, err := event.DecodeKinded[secret.Source](raw)
			if err != nil {
				return nil, invalid(err.Error(), loc...)
			}
			src = v
		default:
			return nil, invalid("a secret must be a string or a SecretSource object", loc...)
		}
		if st, ok := src.(*secret.StaticSecret); ok && encrypted && s.cipher != nil && st.Value.IsToken() {
			v, err := s.cipher.Decrypt(st.Value)
			if err != nil {
				return nil, invalid("the secret does not decrypt with this server's key", loc...)
			}
			st.Value = v
		}
		out[name] = src
	}
	return out, nil
}

// infoNullable are the ConversationInfo members written as null when the
// state omits them.
var infoNullable = []string{"persistence_dir", "security_analyzer", "last_user_message_id", "leaf_event_id", "hook_config"}

// fields returns the conversation's state fields, from memory when loaded
// and from base_state.json otherwise (without loading the conversation).
func (c *conv) fields() (*conversation.Fields, error) {
	c.mu.Lock()
	lc := c.lc
	c.mu.Unlock()
	if lc != nil {
		return lc.State().Fields(), nil
	}
	data, err := c.s.cat.readBase(context.Background(), c.id)
	if err == nil && data == nil {
		err = errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading the state of %s: %w", c.id, err)
	}
	f, err := conversation.DecodeFields(data, nil)
	if err == nil && f.ExecutionStatus == conversation.StatusRunning && !c.s.cat.shared() {
		// Nothing runs it: a run keeps its conversation loaded. It was
		// left running by a server that died, and loading it recovers it
		// (status error, the action the death cut short answered), as
		// the reference recovers such conversations when it starts: the
		// caller sees its true state, not "running" until a /run. (A
		// shared catalog's conversation may be running on another
		// server.)
		lc, lerr := c.load(context.Background())
		if lerr == nil {
			return lc.State().Fields(), nil
		}
		c.s.log.Warn("recovering a conversation left running", "conversation", c.id, "err", lerr)
	}
	return f, err
}

// info encodes the conversation's ConversationInfo.
func (c *conv) info(includeSkills bool) (json.RawMessage, error) {
	f, err := c.fields()
	if err != nil {
		return nil, err
	}
	state, err := f.MarshalJSON()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	m := c.meta
	c.mu.Unlock()
	var b bytes.Buffer
	b.Grow(len(state) + 512)
	b.WriteByte('{')
	n := 0
	member := func(key string, val []byte) {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		kb, _ := json.Marshal(key)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(val)
	}
	seen := map[string]bool{}
	err = wire.ScanObject(state, func(key, val []byte) error {
		k := string(key)
		seen[k] = true
		switch k {
		case "activated_path_rules", "head_is_empty":
			return nil
		case "agent":
			if !includeSkills {
				val = trimSkills(val)
			}
		}
		member(k, val)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, k := range infoNullable {
		if !seen[k] {
			member(k, []byte("null"))
		}
	}
	js := func(v any) []byte {
		out, _ := json.Marshal(v)
		return out
	}
	raw := func(r json.RawMessage) []byte {
		if isNull(r) {
			return []byte("null")
		}
		return r
	}
	var fork *string
	if m.ForkedFromConversationID != nil {
		if u, err := uuid.Parse(*m.ForkedFromConversationID); err == nil {
			s := u.String()
			fork = &s
		}
	}
	member("title", js(m.Title))
	member("metrics", raw(m.Metrics))
	member("created_at", js(m.CreatedAt))
	member("updated_at", js(m.UpdatedAt))
	member("forked_from_conversation_id", js(fork))
	member("forked_from_event_id", js(m.ForkedFromEventID))
	member("parent_conversation_id", js(m.ParentConversationID))
	member("sub_conversation_ids", js(orEmptySlice(c.s.childrenOf(c.id))))
	var model *string
	if a, ok := f.Agent.(*agent.Agent); ok && a.LLM.Model != "" {
		model = &a.LLM.Model
	}
	switchable, available := false, any([]any{})
	if a, ok := f.Agent.(*acp.Agent); ok {
		model, available, switchable = acpModelState(a, f.AgentState)
	}
	member("current_model_id", js(model))
	member("available_models", js(available))
	member("supports_runtime_model_switch", js(switchable))
	member("launched_agent_profile", raw(m.LaunchedAgentProfile))
	member("client_tools", js(orEmptySlice(m.ClientTools)))
	member("tool_module_qualnames", js(orEmpty(m.ToolModuleQualnames)))
	member("runtime_info", []byte(availableRuntimeJSON))
	b.WriteByte('}')
	return b.Bytes(), nil
}

// trimSkills returns agent JSON whose agent_context.skills is [], as the
// reference answers unless include_skills is set.
func trimSkills(agentJSON []byte) []byte {
	if !bytes.Contains(agentJSON, []byte(`"skills"`)) {
		return agentJSON
	}
	var a map[string]json.RawMessage
	if json.Unmarshal(agentJSON, &a) != nil || isNull(a["agent_context"]) {
		return agentJSON
	}
	var ctx map[string]json.RawMessage
	if json.Unmarshal(a["agent_context"], &ctx) != nil {
		return agentJSON
	}
	if _, ok := ctx["skills"]; !ok {
		return agentJSON
	}
	ctx["skills"] = json.RawMessage("[]")
	a["agent_context"], _ = json.Marshal(ctx)
	out, err := json.Marshal(a)
	if err != nil {
		return agentJSON
	}
	return out
}

// searchQuery are the parameters of the conversation search.
type searchQuery struct {
	PageID        string  `query:"page_id" description:"Id (hex) of the first conversation of the page, from next_page_id."`
	Limit         *int    `query:"limit" minimum:"1" maximum:"100" description:"Page size (default 100)."`
	Status        *string `query:"status" enum:"idle,running,paused,waiting_for_confirmation,finished,error,stuck,deleting" description:"Only conversations with this execution status."`
	SortOrder     *string `query:"sort_order" enum:"CREATED_AT,UPDATED_AT,CREATED_AT_DESC,UPDATED_AT_DESC" description:"Order of the results (default CREATED_AT_DESC)."`
	IncludeSkills bool    `query:"include_skills"`
}

type countQuery struct {
	Status *string `query:"status" enum:"idle,running,paused,waiting_for_confirmation,finished,error,stuck,deleting"`
}

// matching returns the conversations with the given status (all when nil),
// sorted.
func (s *Server) matching(status *string, order string) ([]*conv, error) {
	if err := s.refreshShared(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	all := make([]*conv, 0, len(s.convs))
	for _, c := range s.convs {
		if !c.isGone() {
			all = append(all, c)
		}
	}
	s.mu.RUnlock()
	if status != nil {
		all = slices.DeleteFunc(all, func(c *conv) bool {
			f, err := c.fields()
			return err != nil || string(f.ExecutionStatus) != *status
		})
	}
	// The keys first: one lock per conversation, not two per comparison.
	keys := make(map[*conv]string, len(all))
	for _, c := range all {
		c.mu.Lock()
		keys[c] = c.meta.CreatedAt
		if strings.HasPrefix(order, "UPDATED_AT") {
			keys[c] = c.meta.UpdatedAt
		}
		c.mu.Unlock()
	}
	desc := order == "" || strings.HasSuffix(order, "_DESC")
	slices.SortFunc(all, func(a, b *conv) int {
		r := cmp.Or(cmp.Compare(keys[a], keys[b]), cmp.Compare(a.id, b.id))
		if desc {
			return -r
		}
		return r
	})
	return all, nil
}

func (s *Server) handleSearch(in *request[searchQuery, none]) (any, error) {
	q := &in.query
	limit, err := limitParam(q.Limit, 100)
	if err != nil {
		return nil, err
	}
	order := deref(q.SortOrder)
	switch order {
	case "", "CREATED_AT", "UPDATED_AT", "CREATED_AT_DESC", "UPDATED_AT_DESC":
	default:
		return nil, &invalidError{loc: []any{"query", "sort_order"}, typ: "enum", msg: "Input should be 'CREATED_AT', 'UPDATED_AT', 'CREATED_AT_DESC' or 'UPDATED_AT_DESC'"}
	}
	page, next, err := s.searchPage(q.Status, order, q.PageID, limit)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.WriteString(`{"items":[`)
	n := 0
	for _, c := range page {
		info, err := c.info(q.IncludeSkills)
		if err != nil {
			s.log.Warn("skipping a conversation in search", "conversation", c.id, "err", err)
			continue
		}
		if n > 0 {
			buf.WriteByte(',')
		}
		n++
		buf.Write(info)
	}
	buf.WriteString(`],"next_page_id":`)
	if next != nil {
		fmt.Fprintf(&buf, "%q}", hexID(next.id))
	} else {
		buf.WriteString("null}")
	}
	return buf.Bytes(), nil
}

// searchPage returns the page of limit conversations from pageID (hex or
// dashed; "" for the first) with the given status (any when nil) in the
// given order, and the first of the next page. In creation order without
// a status, the default, it costs O(log n + page); otherwise every
// conversation is looked at.
func (s *Server) searchPage(status *string, order, pageID string, limit int) (page []*conv, next *conv, err error) {
	if status != nil || strings.HasPrefix(order, "UPDATED_AT") {
		all, err := s.matching(status, order)
		if err != nil {
			return nil, nil, err
		}
		start := 0
		if pageID != "" {
			start = slices.IndexFunc(all, func(c *conv) bool { return hexID(c.id) == strings.ReplaceAll(pageID, "-", "") })
			if start < 0 {
				start = len(all)
			}
		}
		end := min(start+limit, len(all))
		if end < len(all) {
			next = all[end]
		}
		return all[start:end], next, nil
	}
	if err := s.refreshShared(); err != nil {
		return nil, nil, err
	}
	var from *conv
	if pageID != "" {
		id, err := parseUUID(pageID)
		if err != nil {
			return nil, nil, nil // an unknown page: empty
		}
		s.mu.RLock()
		from = s.convs[id]
		s.mu.RUnlock()
		if from == nil {
			return nil, nil, nil
		}
	}
	page, next = s.order.page(from, limit, order != "CREATED_AT")
	return page, next, nil
}

// refreshShared learns, with a shared catalog, of the conversations other
// servers created or deleted.
func (s *Server) refreshShared() error {
	if !s.cat.shared() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return s.loadStored(ctx)
}

func (s *Server) handleCount(in *request[countQuery, none]) (any, error) {
	if in.query.Status == nil {
		if err := s.refreshShared(); err != nil {
			return nil, err
		}
		return s.order.len(), nil
	}
	all, err := s.matching(in.query.Status, "")
	if err != nil {
		return nil, err
	}
	return len(all), nil
}

type batchQuery struct {
	IDs           []string `query:"ids" required:"true" description:"Conversation ids (at most 99)."`
	IncludeSkills bool     `query:"include_skills"`
}

func (s *Server) handleBatchGet(in *request[batchQuery, none]) (any, error) {
	q := &in.query
	if len(q.IDs) >= 100 {
		return nil, invalid("at most 99 ids", "query", "ids")
	}
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, raw := range q.IDs {
		if i > 0 {
			buf.WriteByte(',')
		}
		u, err := uuid.Parse(raw)
		if err != nil {
			return nil, &invalidError{loc: []any{"query", "ids", i}, typ: "uuid_parsing", msg: "Input should be a valid UUID"}
		}
		c := s.lookup(u.String())
		var info json.RawMessage
		if c != nil && !c.isGone() {
			info, err = c.info(q.IncludeSkills)
		}
		if c == nil || err != nil || info == nil {
			buf.WriteString("null")
			continue
		}
		buf.Write(info)
	}
	buf.WriteByte(']')
	return buf.Bytes(), nil
}

func (s *Server) handleGet(in *request[includeSkillsQuery, none]) (any, error) {
	c, err := in.find()
	if err != nil {
		return nil, err
	}
	if err := s.refreshMeta(in.r.Context(), c); err != nil {
		s.log.Warn("reading a conversation's record", "conversation", c.id, "err", err)
		return nil, statusErr(http.StatusServiceUnavailable, "The conversation store cannot be read; retry later.")
	}
	info, err := c.info(in.query.IncludeSkills)
	if err != nil {
		return nil, err
	}
	c.publishEndedRun()
	return info, nil
}

func (s *Server) handleUpdate(in *request[none, updateRequest]) (any, error) {
	req := &in.body
	if req.Title != nil {
		t := strings.TrimSpace(*req.Title)
		if n := len([]rune(t)); n < 1 || n > 200 {
			return nil, invalid("title must be 1 to 200 characters", "body", "title")
		}
		req.Title = &t
	}
	for k, v := range req.Tags {
		if !tagKey(k) || len([]rune(v)) > 256 {
			return nil, invalid(fmt.Sprintf("tag %q: keys are lowercase letters and digits, values at most 256 characters", k), "body", "tags")
		}
	}
	c, lc, err := in.load()
	if err != nil {
		return nil, err
	}
	if req.Tags != nil {
		if err := lc.State().Update(func(f *conversation.Fields) error { f.Tags = req.Tags; return nil }); err != nil {
			return nil, err
		}
	}
	c.mu.Lock()
	if req.Title != nil {
		c.meta.Title = req.Title
	}
	if req.Tags != nil {
		c.meta.Tags = req.Tags
	}
	c.meta.UpdatedAt = utcNow()
	c.mu.Unlock()
	if err := c.saveMeta(); err != nil {
		return nil, err
	}
	return ok, nil
}

func (s *Server) handleDelete(in *request[none, none]) (any, error) {
	c, err := in.find()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.gone {
		c.mu.Unlock()
		return nil, &missingError{status: http.StatusBadRequest, id: c.id}
	}
	c.mu.Unlock()
	c.pauseForShutdown()
	// Wait for the run to pause, then release and remove.
	for c.isRunning() {
		time.Sleep(5 * time.Millisecond)
	}
	if err := c.unload(true); err != nil {
		s.log.Warn("closing a deleted conversation", "conversation", c.id, "err", err)
	}
	c.mu.Lock()
	c.gone = true
	c.mu.Unlock()
	if p := c.subs.Load(); p != nil {
		for _, sub := range *p {
			sub.close()
		}
	}
	s.mu.Lock()
	delete(s.convs, c.id)
	s.mu.Unlock()
	s.order.remove(c)
	s.forgetChild(c)
	if err := s.cat.remove(in.r.Context(), c.id); err != nil {
		return nil, err
	}
	s.removeWorktree(in.r.Context(), c)
	return ok, nil
}

// removeWorktree removes the worktree a deleted conversation worked in,
// unless another conversation (a fork) works in it too.
func (s *Server) removeWorktree(ctx context.Context, c *conv) {
	c.mu.Lock()
	dir := conversationWorktreeDir(s.opts.ConversationWorktreeRoot, c.meta.workingDir())
	c.mu.Unlock()
	if dir == "" {
		return
	}
	s.mu.RLock()
	others := make([]*conv, 0, len(s.convs))
	for _, o := range s.convs {
		others = append(others, o)
	}
	s.mu.RUnlock()
	for _, o := range others {
		o.mu.Lock()
		shared := !o.gone && conversationWorktreeDir(s.opts.ConversationWorktreeRoot, o.meta.workingDir()) == dir
		o.mu.Unlock()
		if shared {
			return
		}
	}
	if err := removeConversationWorktrees(context.WithoutCancel(ctx), dir); err != nil {
		s.log.Warn("removing a deleted conversation's worktree", "conversation", c.id, "dir", dir, "err", err)
	}
}

func (s *Server) handleRun(in *request[none, none]) (any, error) {
	c, err := in.find()
	if err != nil {
		return nil, err
	}
	if err := c.run(in.r.Context()); err != nil {
		return nil, err
	}
	return ok, nil
}

// handlePause pauses a conversation once the step in progress is done.
func (s *Server) handlePause(in *request[none, none]) (any, error) {
	return pause(in, (*conversation.LocalConversation).PauseAfterStep)
}

// handleInterrupt pauses a conversation at once, cancelling the step in
// progress (its LLM call or tools), and records an InterruptEvent.
func (s *Server) handleInterrupt(in *request[none, none]) (any, error) {
	return pause(in, (*conversation.LocalConversation).Interrupt)
}

func pause(in *request[none, none], pause func(*conversation.LocalConversation, context.Context) error) (any, error) {
	c, lc, err := in.load()
	if err != nil {
		return nil, err
	}
	if err := pause(lc, in.r.Context()); err != nil {
		return nil, err
	}
	if !c.isRunning() {
		c.publishFullState(lc)
	}
	return ok, nil
}

func (s *Server) handleSecrets(in *request[none, secretsRequest]) (any, error) {
	if in.body.Secrets == nil {
		return nil, &invalidError{loc: []any{"body", "secrets"}, typ: "missing", msg: "Field required"}
	}
	sources, err := s.decodeSecrets(in.body.Secrets, false, false)
	if err != nil {
		return nil, err
	}
	_, lc, err := in.load()
	if err != nil {
		return nil, err
	}
	if err := lc.UpdateSecrets(in.r.Context(), sources); err != nil {
		return nil, invalid(err.Error(), "body", "secrets")
	}
	return ok, nil
}

func (s *Server) handlePolicy(in *request[none, policyRequest]) (any, error) {
	if isNull(in.body.Policy) {
		return nil, &invalidError{loc: []any{"body", "policy"}, typ: "missing", msg: "Field required"}
	}
	p, err := decodePolicy(in.body.Policy, "policy")
	if err != nil {
		return nil, err
	}
	c, lc, err := in.load()
	if err != nil {
		return nil, err
	}
	if err := lc.SetConfirmationPolicy(in.r.Context(), p); err != nil {
		return nil, invalid(err.Error(), "body", "policy")
	}
	c.mu.Lock()
	c.meta.ConfirmationPolicy = in.body.Policy
	c.mu.Unlock()
	c.saveMeta()
	return ok, nil
}

func (s *Server) handleAnalyzer(in *request[none, analyzerRequest]) (any, error) {
	a, err := decodeAnalyzer(in.body.SecurityAnalyzer, "security_analyzer")
	if err != nil {
		return nil, err
	}
	c, lc, err := in.load()
	if err != nil {
		return nil, err
	}
	if err := lc.State().Update(func(f *conversation.Fields) error { f.SecurityAnalyzer = a; return nil }); err != nil {
		return nil, invalid(err.Error(), "body", "security_analyzer")
	}
	c.mu.Lock()
	c.meta.SecurityAnalyzer = in.body.SecurityAnalyzer
	c.mu.Unlock()
	c.saveMeta()
	return ok, nil
}

// askRequest is protocol.AskRequest, with the server's own decoding.
type askRequest protocol.AskRequest

// decode reads the request, refusing a missing or blank question with
// 422 before any model is called (the reference answers 422 to a missing
// one and asks the model an empty question).
func (q *askRequest) decode(body []byte) error {
	var raw struct {
		Question *string `json:"question"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return jsonInvalid(err)
	}
	if raw.Question == nil {
		return &invalidError{loc: []any{"body", "question"}, typ: "missing", msg: "Field required"}
	}
	if strings.TrimSpace(*raw.Question) == "" {
		return &invalidError{loc: []any{"body", "question"}, typ: "string_too_short", msg: "The question is empty"}
	}
	q.Question = *raw.Question
	return nil
}

func (s *Server) handleAsk(in *request[none, askRequest]) (any, error) {
	// The reference answers an unknown conversation with 500; a 404 says
	// what happened.
	_, lc, err := in.load()
	if err != nil {
		return nil, err
	}
	ans, err := lc.AskAgent(in.r.Context(), in.body.Question)
	var apiErr *llm.APIError
	if errors.As(err, &apiErr) {
		// The model failed, not the server (the reference answers 500).
		return nil, &httpError{status: http.StatusBadGateway, detail: "ask_agent: the agent's model failed: " + err.Error()}
	}
	if err != nil {
		return nil, &internalError{err}
	}
	return askResponse{Response: ans}, nil
}

func (s *Server) handleFinalResponse(in *request[none, none]) (any, error) {
	_, lc, err := in.load()
	if err != nil {
		return nil, err
	}
	resp, err := agent.FinalResponse(in.r.Context(), lc.State())
	if err != nil {
		return nil, err
	}
	return askResponse{Response: resp}, nil
}

// handleCondense forces a condensation of the history (the reference's
// condense). While a run is in progress, its next step condenses;
// otherwise one step condenses now, before the answer. A conversation
// whose agent has no condenser acting on requests answers 409, as the
// reference 1.58 does.
func (s *Server) handleCondense(in *request[none, none]) (any, error) {
	c, lc, err := in.load()
	if err != nil {
		return nil, err
	}
	// A run started here must not start while the condensing step runs
	// (LocalConversation would refuse it after /run answered).
	c.mu.Lock()
	busy := c.running
	c.running = true
	c.mu.Unlock()
	if !busy {
		defer func() {
			c.mu.Lock()
			c.running = false
			c.lastUsed = time.Now()
			c.mu.Unlock()
		}()
	}
	err = lc.Condense(in.r.Context())
	switch {
	case errors.Is(err, conversation.ErrCannotCondense):
		return nil, statusErr(http.StatusConflict, "%s", err.Error())
	case errors.Is(err, conversation.ErrWaitingForConfirmation):
		return nil, statusErr(http.StatusConflict, "Cannot condense while actions wait for confirmation")
	case err != nil:
		return nil, &internalError{err}
	}
	return ok, nil
}

// checkUnimplemented refuses a start request that sets a field of the
// reference 1.58.2 this server does not implement to anything but its
// default (the OpenHands app sends them all, with their defaults).
func (s *Server) checkUnimplemented(req *startRequest) error {
	set := func(raw json.RawMessage) bool {
		t := bytes.TrimSpace(raw)
		return len(t) > 0 && !bytes.Equal(t, []byte("null")) && !bytes.Equal(t, []byte("[]")) && !bytes.Equal(t, []byte("{}"))
	}
	refuse := func(field, why string) error {
		return &invalidError{loc: []any{"body", field}, typ: "value_error", msg: field + ": " + why}
	}
	switch {
	case req.Prompt != nil:
		return refuse("prompt", "not supported by this server; send initial_message")
	case set(req.Container):
		return refuse("container", "per-conversation container options are not supported by this server")
	case req.ConversationRuntime != nil && *req.ConversationRuntime != "local":
		return refuse("conversation_runtime", fmt.Sprintf("%q: this server runs each conversation where it runs (\"local\"); gohands serve --runtime docker gives each its own container", *req.ConversationRuntime))
	}
	return nil
}
