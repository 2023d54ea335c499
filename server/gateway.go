package server

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/server/userstore"
)

// The OpenAI-compatible gateway (the reference's /v1 routes): each LLM
// profile is offered as a model named openhands_<profile>, and a chat
// completion or a response runs a whole agent conversation with the
// request's last user message, in the server's workspace, answering the
// agent's final response. Any OpenAI client can so use a gohands agent as
// a model. As in the reference 1.58.2, the agent is the active agent
// profile's (active_agent_profile_id of the settings; "default", made from
// the agent settings, when none is) launched with the model's LLM profile
// instead of its own, and without one the answer is 409; the system and
// developer messages are appended to the agent's system message suffix, a
// streamed chat completion sends the final answer as chunks once the run
// is over, and a response cannot be streamed or stored.

const (
	gatewayModelPrefix = "openhands_"
	// maxSystemAppend bounds the system text a request adds to the
	// agent's, as the reference's AgentLaunchAdditions does.
	maxSystemAppend = 32768
	// gatewayTimeout bounds one request's agent run, as the reference's.
	gatewayTimeout = 120 * time.Second
)

func (s *Server) gatewayRoutes() []*route {
	const tag = "OpenAI Compatibility"
	return []*route{
		{method: "GET", path: "/v1/models", summary: "The models: one per LLM profile, openhands_<profile>", tag: tag, public: true, resp: modelList{}, errors: []int{401}, h: s.gatewayAuth(s.handleModels)},
		{method: "POST", path: "/v1/chat/completions", summary: "Run an agent conversation on the last user message and answer its final response (streamed as server-sent events if asked)", tag: tag, public: true, body: chatRequest{}, resp: chatCompletion{}, errors: []int{400, 401, 404, 409, 422, 429, 500, 504}, h: s.gatewayAuth(s.handleChatCompletions)},
		{method: "POST", path: "/v1/responses", summary: "Run an agent conversation on the input and answer its final response", tag: tag, public: true, body: responseRequest{}, resp: responseObject{}, errors: []int{400, 401, 404, 409, 422, 429, 500, 504}, h: s.gatewayAuth(s.handleResponses)},
	}
}

// gatewayAuth takes the session key as X-Session-API-Key or, as OpenAI
// clients send their key, Authorization: Bearer.
func (s *Server) gatewayAuth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if len(s.opts.SessionAPIKeys) > 0 {
			bearer, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			okKey := s.authorized(r.Header.Get("X-Session-API-Key"))
			for _, k := range s.opts.SessionAPIKeys {
				okKey = okKey || (bearer != "" && subtle.ConstantTimeCompare([]byte(bearer), []byte(k)) == 1)
			}
			if !okKey {
				writeDetail(w, http.StatusUnauthorized, "Unauthorized")
				return
			}
		}
		h(w, r)
	}
}

type modelList struct {
	Object string      `json:"object"`
	Data   []modelInfo `json:"data"`
}

type modelInfo struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	l := modelList{Object: "list", Data: []modelInfo{}}
	names := s.llmProfiles().Names()
	slices.Sort(names)
	for _, n := range names {
		l.Data = append(l.Data, modelInfo{ID: gatewayModelPrefix + n, Object: "model", OwnedBy: "openhands"})
	}
	writeJSON(w, http.StatusOK, l)
}

type chatRequest struct {
	Model         *string        `json:"model" required:"true"`
	Messages      *[]chatMessage `json:"messages" required:"true"`
	Stream        bool           `json:"stream,omitempty"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options,omitempty"`
}

type chatMessage struct {
	Role    string          `json:"role" enum:"system,developer,user,assistant,tool"`
	Content json.RawMessage `json:"content,omitempty"`
}

// contentPart is a part of a message's content, of either API.
type contentPart struct {
	Type     string          `json:"type"`
	Text     *string         `json:"text"`
	ImageURL json.RawMessage `json:"image_url"`
}

type chatCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []chatChoice `json:"choices"`
	Usage   *chatUsage   `json:"usage,omitempty"`
}

type chatChoice struct {
	Index        int      `json:"index"`
	FinishReason *string  `json:"finish_reason,omitempty"`
	Message      *chatOut `json:"message,omitempty"`
	Delta        *chatOut `json:"delta,omitempty"`
}

type chatOut struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

type chatUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// userContent turns a message's content into message content: a string,
// or parts of text and images.
func userContent(raw json.RawMessage, textTypes []string, imageType string) ([]event.Content, error) {
	if len(raw) == 0 || isNull(raw) {
		return nil, nil
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return []event.Content{{Type: "text", Text: str}}, nil
	}
	var parts []contentPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, invalid("content must be a string or a list of parts", "body", "content")
	}
	var out []event.Content
	for _, p := range parts {
		switch {
		case slices.Contains(textTypes, p.Type):
			if p.Text != nil && *p.Text != "" {
				out = append(out, event.Content{Type: "text", Text: *p.Text})
			}
		case p.Type == imageType:
			var u string
			if json.Unmarshal(p.ImageURL, &u) != nil {
				var obj struct {
					URL string `json:"url"`
				}
				json.Unmarshal(p.ImageURL, &obj)
				u = obj.URL
			}
			if u == "" {
				return nil, statusErr(http.StatusBadRequest, "%s content part is missing a%s url", imageType, map[bool]string{true: "n image_", false: ""}[imageType == "input_image"])
			}
			out = append(out, event.Content{Type: "image", ImageURLs: []string{u}})
		default:
			return nil, statusErr(http.StatusBadRequest, "Unsupported %scontent part type: %s", map[bool]string{true: "Responses ", false: ""}[imageType == "input_image"], p.Type)
		}
	}
	return out, nil
}

func contentText(c []event.Content) string {
	var parts []string
	for _, p := range c {
		if p.Type == "text" {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// gatewayRun is one agent conversation of the gateway.
type gatewayRun struct {
	id    string
	final string
	usage conversation.Stats
}

// runGateway runs the user content on the active agent profile with the
// LLM profile model names, as the reference 1.58.2's gateway does: in a
// new conversation, or in the conversation reuse names if it exists (a
// new one of that id if not), waits for the run to end and returns its
// final response.
func (s *Server) runGateway(ctx context.Context, model, system string, content []event.Content, reuse string) (*gatewayRun, error) {
	req, add, err := s.gatewayStart(model, system, reuse)
	if err != nil {
		return nil, err
	}
	var c *conv
	if reuse != "" {
		c = s.lookup(reuse)
	}
	if c == nil {
		res, err := s.startAgent(ctx, req, nil, nil, add)
		if err != nil {
			return nil, err
		}
		c = res.c
	}
	lc, err := c.hold(ctx)
	if err != nil {
		return nil, err
	}
	if !s.reserveRun() {
		return nil, errTooManyRuns
	}
	if err := lc.SendMessage(ctx, event.Message{Role: event.RoleUser, Content: content}); err != nil {
		s.runs.Add(-1)
		return nil, err
	}
	if err := c.startRun(ctx, true); err != nil {
		return nil, err
	}
	c.mu.Lock()
	done := c.runDone
	c.mu.Unlock()
	timer := time.NewTimer(gatewayTimeout)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		return nil, statusErr(http.StatusGatewayTimeout, "Agent run timed out")
	case <-ctx.Done():
		// The client left: the run is not wanted any more.
		_ = lc.Pause(context.WithoutCancel(ctx))
		return nil, ctx.Err()
	}
	switch st := lc.Status(); st {
	case conversation.StatusFinished:
	case conversation.StatusError, conversation.StatusStuck:
		return nil, statusErr(http.StatusInternalServerError, "Agent run ended with status: %s", st)
	case conversation.StatusPaused, conversation.StatusWaitingForConfirmation:
		return nil, statusErr(http.StatusConflict, "Agent run ended with status: %s", st)
	default:
		return nil, statusErr(http.StatusInternalServerError, "Agent run ended with unexpected status: %s", st)
	}
	final, err := agent.FinalResponse(ctx, lc.State())
	if err != nil {
		return nil, err
	}
	return &gatewayRun{id: c.id, final: final, usage: lc.State().Fields().Stats}, nil
}

// gatewayStart is the start request of a gateway conversation, checked
// as the reference checks it whether or not a conversation is reused:
// model names an LLM profile (404 otherwise), and an agent profile is
// active (409 otherwise; one is made from the settings when none is).
// The conversation settings give its confirmation policy, security
// analyzer and iteration limit, as they give the reference's.
func (s *Server) gatewayStart(model, system, reuse string) (*startRequest, *launchAdditions, error) {
	name, found := strings.CutPrefix(model, gatewayModelPrefix)
	if !found || name == "" {
		return nil, nil, statusErr(http.StatusNotFound, "Unknown OpenHands model '%s'. Use GET /v1/models.", model)
	}
	if _, err := s.llmProfiles().Profile(name); err != nil {
		return nil, nil, statusErr(http.StatusNotFound, "Profile '%s' not found", name)
	}
	if err := s.ensureActiveAgentProfile(); err != nil {
		return nil, nil, err
	}
	d, err := s.settings.Load()
	if err != nil {
		return nil, nil, err
	}
	noProfile := statusErr(http.StatusConflict, "No active Agent Profile; activate one to use the gateway")
	if d.ActiveAgentProfileID == nil {
		return nil, nil, noProfile
	}
	id := *d.ActiveAgentProfileID
	profile, err := s.agentProfiles.NameForID(id)
	if err != nil {
		return nil, nil, err
	}
	if profile == "" {
		return nil, nil, noProfile
	}
	p, err := s.agentProfiles.Load(profile)
	if errors.Is(err, userstore.ErrNoProfile) {
		return nil, nil, noProfile
	}
	if err != nil {
		return nil, nil, err
	}
	if utf8.RuneCountInString(system) > maxSystemAppend {
		return nil, nil, statusErr(http.StatusBadRequest, "System instructions are too long")
	}
	add := &launchAdditions{SystemSuffix: system}
	if p["agent_kind"] != "acp" {
		// An ACP agent runs its own model.
		add.LLMProfileRef = name
	}
	ws, _ := json.Marshal(map[string]string{"kind": "LocalWorkspace", "working_dir": s.opts.WorkspacePath})
	no := false
	req := &startRequest{AgentProfileID: &id, Workspace: ws, Autotitle: &no}
	if reuse != "" {
		req.ConversationID = &reuse
	}
	cs := d.ConversationSettings
	if n, ok := cs["max_iterations"].(json.Number); ok {
		if mi, err := n.Int64(); err == nil && mi > 0 {
			m := int(mi)
			req.MaxIterations = &m
		}
	}
	analyzer, _ := cs["security_analyzer"].(string)
	analyzer = strings.ToLower(analyzer)
	policy := "NeverConfirm"
	if confirm, _ := cs["confirmation_mode"].(bool); confirm {
		policy = map[bool]string{true: "ConfirmRisky", false: "AlwaysConfirm"}[analyzer == "llm"]
	}
	req.ConfirmationPolicy, _ = json.Marshal(map[string]string{"kind": policy})
	if analyzer == "llm" {
		req.SecurityAnalyzer, _ = json.Marshal(map[string]string{"kind": "LLMSecurityAnalyzer"})
	}
	return req, add, nil
}

func (s *Server) handleChatCompletions(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := s.readBody(w, r, &req, false); err != nil {
		writeErr(w, err)
		return
	}
	switch {
	case req.Model == nil:
		writeInvalid(w, "missing", "Field required", "body", "model")
		return
	case req.Messages == nil:
		writeInvalid(w, "missing", "Field required", "body", "messages")
		return
	}
	reuse := ""
	if h := r.Header.Get("X-OpenHands-ServerConversation-ID"); h != "" {
		id, err := parseUUID(h)
		if err != nil {
			writeInvalid(w, "uuid_parsing", "Input should be a valid UUID", "header", "X-OpenHands-ServerConversation-ID")
			return
		}
		reuse = id
	}
	var system []string
	var last []event.Content
	hasUser := false
	for i, m := range *req.Messages {
		if !slices.Contains([]string{"system", "developer", "user", "assistant", "tool"}, m.Role) {
			writeInvalid(w, "enum", "Input should be 'system', 'developer', 'user', 'assistant' or 'tool'", "body", "messages", i, "role")
			return
		}
		c, err := userContent(m.Content, []string{"text"}, "image_url")
		if err != nil {
			writeErr(w, err)
			return
		}
		switch m.Role {
		case "system", "developer":
			if t := contentText(c); t != "" {
				system = append(system, t)
			}
		case "user":
			last, hasUser = c, true
		}
	}
	if !hasUser {
		writeDetail(w, http.StatusBadRequest, "At least one user message is required")
		return
	}
	run, err := s.runGateway(r.Context(), *req.Model, strings.Join(system, "\n\n"), last, reuse)
	if err != nil {
		if r.Context().Err() == nil {
			writeErr(w, err)
		}
		return
	}
	prompt, completion := run.usage.Tokens()
	stop := "stop"
	resp := chatCompletion{
		ID: "chatcmpl-" + strings.ReplaceAll(uuid.NewString(), "-", ""), Object: "chat.completion",
		Created: time.Now().Unix(), Model: *req.Model,
		Choices: []chatChoice{{FinishReason: &stop, Message: &chatOut{Role: "assistant", Content: &run.final}}},
		Usage:   &chatUsage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion},
	}
	w.Header().Set("X-OpenHands-ServerConversation-ID", run.id)
	if !req.Stream {
		writeJSON(w, http.StatusOK, resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	chunk := func(c chatCompletion) {
		c.Object = "chat.completion.chunk"
		b, _ := json.Marshal(c)
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	base := resp
	base.Usage = nil
	for _, ch := range []chatChoice{{Delta: &chatOut{Role: "assistant"}}, {Delta: &chatOut{Content: &run.final}}, {Delta: &chatOut{}, FinishReason: &stop}} {
		base.Choices = []chatChoice{ch}
		chunk(base)
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		base.Choices, base.Usage = []chatChoice{}, resp.Usage
		chunk(base)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

type responseRequest struct {
	Model              *string           `json:"model" required:"true"`
	Input              json.RawMessage   `json:"input" required:"true"`
	Instructions       *string           `json:"instructions,omitempty"`
	PreviousResponseID *string           `json:"previous_response_id,omitempty"`
	Store              bool              `json:"store,omitempty"`
	Stream             bool              `json:"stream,omitempty"`
	Metadata           map[string]string `json:"metadata,omitempty"`
}

type responseObject struct {
	ID                 string            `json:"id"`
	CreatedAt          float64           `json:"created_at"`
	CompletedAt        float64           `json:"completed_at"`
	Instructions       *string           `json:"instructions,omitempty"`
	Metadata           map[string]string `json:"metadata,omitempty"`
	Model              string            `json:"model"`
	Object             string            `json:"object"`
	Output             []responseOutput  `json:"output"`
	ParallelToolCalls  bool              `json:"parallel_tool_calls"`
	PreviousResponseID *string           `json:"previous_response_id,omitempty"`
	Status             string            `json:"status"`
	ToolChoice         string            `json:"tool_choice"`
	Tools              []any             `json:"tools"`
	Usage              responseUsage     `json:"usage"`
}

type responseOutput struct {
	ID      string         `json:"id"`
	Content []responseText `json:"content"`
	Role    string         `json:"role"`
	Status  string         `json:"status"`
	Type    string         `json:"type"`
}

type responseText struct {
	Annotations []any  `json:"annotations"`
	Text        string `json:"text"`
	Type        string `json:"type"`
}

type responseUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

func (s *Server) handleResponses(w http.ResponseWriter, r *http.Request) {
	var req responseRequest
	if err := s.readBody(w, r, &req, false); err != nil {
		writeErr(w, err)
		return
	}
	switch {
	case req.Model == nil:
		writeInvalid(w, "missing", "Field required", "body", "model")
		return
	case len(req.Input) == 0:
		writeInvalid(w, "missing", "Field required", "body", "input")
		return
	case req.Stream:
		writeDetail(w, http.StatusBadRequest, "Streaming responses are not supported yet")
		return
	case req.Store:
		writeDetail(w, http.StatusBadRequest, "Persistent response storage (store=True) is not supported yet")
		return
	case req.PreviousResponseID != nil && *req.PreviousResponseID != "":
		writeDetail(w, http.StatusBadRequest, "previous_response_id is not supported; replay input items instead")
		return
	}
	var system []string
	if req.Instructions != nil && strings.TrimSpace(*req.Instructions) != "" {
		system = append(system, strings.TrimSpace(*req.Instructions))
	}
	var content []event.Content
	var str string
	if json.Unmarshal(req.Input, &str) == nil {
		if str == "" {
			writeDetail(w, http.StatusBadRequest, "Responses input must not be empty")
			return
		}
		content = []event.Content{{Type: "text", Text: str}}
	} else {
		var msgs []chatMessage
		if err := json.Unmarshal(req.Input, &msgs); err != nil {
			writeInvalid(w, "list_type", "Input should be a valid string or a list of messages", "body", "input")
			return
		}
		type part struct {
			role string
			c    []event.Content
		}
		var convo []part
		for i, m := range msgs {
			if !slices.Contains([]string{"system", "developer", "user", "assistant"}, m.Role) {
				writeInvalid(w, "enum", "Input should be 'system', 'developer', 'user' or 'assistant'", "body", "input", i, "role")
				return
			}
			c, err := userContent(m.Content, []string{"input_text", "output_text"}, "input_image")
			if err != nil {
				writeErr(w, err)
				return
			}
			if m.Role == "system" || m.Role == "developer" {
				if t := contentText(c); t != "" {
					system = append(system, t)
				}
				continue
			}
			convo = append(convo, part{m.Role, c})
		}
		if !slices.ContainsFunc(convo, func(p part) bool { return p.role == "user" }) {
			writeDetail(w, http.StatusBadRequest, "Responses input must include a user message")
			return
		}
		if len(convo) == 1 {
			content = convo[0].c
		} else {
			// Several turns go to the agent as one message, each marked
			// with its role.
			for _, p := range convo {
				content = append(content, event.Content{Type: "text", Text: `<message role="` + p.role + `">`})
				content = append(content, p.c...)
				content = append(content, event.Content{Type: "text", Text: "</message>"})
			}
		}
	}
	created := float64(time.Now().UnixNano()) / 1e9
	run, err := s.runGateway(r.Context(), *req.Model, strings.Join(system, "\n\n"), content, "")
	if err != nil {
		if r.Context().Err() == nil {
			writeErr(w, err)
		}
		return
	}
	hex := func() string { return strings.ReplaceAll(uuid.NewString(), "-", "") }
	resp := responseObject{
		ID: "resp_" + hex(), CreatedAt: created, CompletedAt: float64(time.Now().UnixNano()) / 1e9,
		Instructions: req.Instructions, Metadata: req.Metadata, Model: *req.Model, Object: "response",
		Output: []responseOutput{{ID: "msg_" + hex(), Role: "assistant", Status: "completed", Type: "message",
			Content: []responseText{{Annotations: []any{}, Text: run.final, Type: "output_text"}}}},
		Status: "completed", ToolChoice: "none", Tools: []any{},
	}
	for _, m := range run.usage.UsageToMetrics {
		if m == nil || m.AccumulatedTokenUsage == nil {
			continue
		}
		u := m.AccumulatedTokenUsage
		resp.Usage.InputTokens += u.PromptTokens
		resp.Usage.OutputTokens += u.CompletionTokens
		resp.Usage.InputTokensDetails.CachedTokens += u.CacheReadTokens
		resp.Usage.OutputTokensDetails.ReasoningTokens += u.ReasoningTokens
	}
	resp.Usage.TotalTokens = resp.Usage.InputTokens + resp.Usage.OutputTokens
	w.Header().Set("X-OpenHands-ServerConversation-ID", run.id)
	writeJSON(w, http.StatusOK, resp)
}
