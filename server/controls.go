package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/title"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

// controlRoutes are the routes of the conversation controls:
// fork and navigate.
func (s *Server) controlRoutes() []*route {
	const conv = "/api/conversations/{conversation_id}"
	return []*route{
		{method: "POST", path: conv + "/fork", summary: "Fork a conversation (201), optionally from an event", tag: "Conversations", query: &includeSkillsQuery{}, body: forkRequest{}, resp: conversationInfo{}, status: 201, errors: []int{404, 409, 422}, h: handle(s, bodyOptional, s.handleFork)},
		{method: "POST", path: conv + "/navigate", summary: "Move the conversation's HEAD to an event (null: empty)", tag: "Conversations", query: &includeSkillsQuery{}, body: navigateRequest{}, resp: conversationInfo{}, errors: []int{404, 409, 422}, h: handle(s, bodyOptional, s.handleNavigate)},
		{method: "POST", path: conv + "/switch_llm", summary: "Switch the conversation's model", tag: "Conversations", body: switchLLMRequest{}, resp: successResponse{}, errors: []int{400, 404, 409, 422}, h: handle(s, nil, s.handleSwitchLLM)},
		{method: "POST", path: conv + "/switch_profile", summary: "Switch the conversation's model to a named LLM profile", tag: "Conversations", body: switchProfileRequest{}, resp: successResponse{}, errors: []int{400, 404, 409, 422}, h: handle(s, nil, s.handleSwitchProfile)},
		{method: "POST", path: conv + "/generate_title", summary: "Generate a title from the first user message", tag: "Conversations", body: generateTitleRequest{}, resp: generateTitleResponse{}, errors: []int{400, 404, 422}, h: handle(s, bodyOptional, s.handleGenerateTitle)},
	}
}

func (s *Server) handleFork(in *request[includeSkillsQuery, forkRequest]) (any, error) {
	req := &in.body
	if req.Title != nil && len([]rune(*req.Title)) > 200 {
		return nil, &invalidError{loc: []any{"body", "title"}, typ: "string_too_long", msg: "String should have at most 200 characters"}
	}
	for k, v := range req.Tags {
		if !tagKey(k) || len([]rune(v)) > 256 {
			return nil, invalid(fmt.Sprintf("tag %q: keys are lowercase letters and digits, values at most 256 characters", k), "body", "tags")
		}
	}
	id := uuid.NewString()
	if req.ID != nil {
		var err error
		if id, err = parseUUID(*req.ID); err != nil {
			return nil, &invalidError{loc: []any{"body", "id"}, typ: "uuid_parsing", msg: "Input should be a valid UUID"}
		}
	}
	src, lc, err := in.load()
	if err != nil {
		return nil, err
	}

	// Reserve the id, as create does.
	exists := statusErr(http.StatusConflict, "Conversation with id %s already exists", hexID(id))
	c := &conv{s: s, id: id, gone: true}
	s.mu.Lock()
	if other := s.convs[id]; other != nil {
		s.mu.Unlock()
		return nil, exists
	}
	s.convs[id] = c
	s.mu.Unlock()
	fail := func(err error) error {
		s.mu.Lock()
		delete(s.convs, id)
		s.mu.Unlock()
		switch {
		case errors.Is(err, conversation.ErrNotFound):
			return statusErr(http.StatusNotFound, "Unknown from_event_id: %s", deref(req.FromEventID))
		case errors.Is(err, conversation.ErrExists):
			return exists
		}
		return err
	}
	fo := &conversation.ForkOptions{
		ID: id, Tags: req.Tags, KeepMetrics: req.ResetMetrics != nil && !*req.ResetMetrics,
		FromEventID: deref(req.FromEventID),
	}
	if req.Title != nil {
		fo.Title = *req.Title
	}
	f, err := lc.Fork(in.r.Context(), fo)
	if err != nil {
		return nil, fail(err)
	}
	fork := f.(*conversation.LocalConversation) // a local conversation's fork is local

	// The fork keeps the source's request-level settings (meta.json), with
	// its own identity, as the reference's server does.
	src.mu.Lock()
	meta := src.meta
	src.mu.Unlock()
	now := utcNow()
	hexid, srcHex := hexID(id), hexID(src.id)
	meta.ID, meta.ConversationID = hexid, &hexid
	meta.Title = req.Title
	meta.CreatedAt, meta.UpdatedAt = now, now
	meta.ForkedFromConversationID, meta.ForkedFromEventID = &srcHex, req.FromEventID
	if req.ResetMetrics == nil || *req.ResetMetrics {
		meta.Metrics = nil
	}
	meta.Tags = orEmpty(fork.State().Fields().Tags)
	if err := c.install(meta, fork); err != nil {
		return nil, fail(err)
	}
	info, err := c.info(in.query.IncludeSkills)
	if err != nil {
		return nil, err
	}
	return reply{http.StatusCreated, info}, nil
}

func (s *Server) handleNavigate(in *request[includeSkillsQuery, navigateRequest]) (any, error) {
	c, lc, err := in.load()
	if err != nil {
		return nil, err
	}
	eventID := deref(in.body.EventID)
	if err := lc.NavigateTo(in.r.Context(), eventID); err != nil {
		switch {
		case errors.Is(err, conversation.ErrNotFound):
			return nil, statusErr(http.StatusNotFound, "Unknown event_id: %s", eventID)
		case errors.Is(err, conversation.ErrRunning):
			return nil, errAlreadyRunning
		}
		return nil, err
	}
	c.publishFullState(lc)
	return c.info(in.query.IncludeSkills)
}

// switchErr is the answer to a failed switch.
func switchErr(err error) error {
	switch {
	case errors.Is(err, conversation.ErrRunning):
		return errAlreadyRunning
	case errors.Is(err, llm.ErrNoProfile):
		return statusErr(http.StatusNotFound, "%s", err.Error())
	case errors.Is(err, conversation.ErrCannotSwitch):
		return statusErr(http.StatusBadRequest, "%s", err.Error())
	}
	return err
}

func (s *Server) handleSwitchLLM(in *request[none, switchLLMRequest]) (any, error) {
	if isNull(in.body.LLM) {
		return nil, &invalidError{loc: []any{"body", "llm"}, typ: "missing", msg: "Field required"}
	}
	var cfg llm.Config
	if err := json.Unmarshal(in.body.LLM, &cfg); err != nil {
		return nil, invalid("llm: "+err.Error(), "body", "llm")
	}
	_, lc, err := in.load()
	if err != nil {
		return nil, err
	}
	if err := lc.SwitchLLM(in.r.Context(), cfg); err != nil {
		return nil, switchErr(err)
	}
	return ok, nil
}

func (s *Server) handleSwitchProfile(in *request[none, switchProfileRequest]) (any, error) {
	name := in.body.ProfileName
	if name == "" {
		return nil, &invalidError{loc: []any{"body", "profile_name"}, typ: "missing", msg: "Field required"}
	}
	_, lc, err := in.load()
	if err != nil {
		return nil, err
	}
	cfg, err := s.llmProfiles().Profile(name)
	if err != nil {
		return nil, statusErr(http.StatusNotFound, "Profile '%s' not found", name)
	}
	if err := lc.SwitchLLM(in.r.Context(), cfg); err != nil {
		return nil, switchErr(err)
	}
	return ok, nil
}

func (s *Server) handleGenerateTitle(in *request[none, generateTitleRequest]) (any, error) {
	req := &in.body
	maxLen := title.DefaultLength
	if req.MaxLength != nil {
		if *req.MaxLength < 1 || *req.MaxLength > 200 {
			return nil, &invalidError{loc: []any{"body", "max_length"}, typ: "less_than_equal", msg: "Input should be between 1 and 200"}
		}
		maxLen = *req.MaxLength
	}
	var model llm.Model
	if !isNull(req.LLM) {
		var cfg llm.Config
		if err := json.Unmarshal(req.LLM, &cfg); err != nil {
			return nil, invalid("llm: "+err.Error(), "body", "llm")
		}
		l, err := llm.New(cfg, &llm.Options{Logger: s.log})
		if err != nil {
			return nil, invalid("llm: "+err.Error(), "body", "llm")
		}
		model = l
	}
	_, lc, err := in.load()
	if err != nil {
		return nil, err
	}
	t, err := titleOf(in.r.Context(), lc, model, maxLen)
	if errors.Is(err, title.ErrNoUserMessage) {
		return nil, statusErr(http.StatusBadRequest, "The conversation has no user message to make a title from")
	}
	if err != nil {
		return nil, err
	}
	return generateTitleResponse{Title: t}, nil
}

// autotitle returns unsub extended, when the server titles conversations
// and this one wants it and has no title yet, with a subscriber that
// titles it after its first user message: with its title_llm_profile,
// else the agent's model, else the message itself.
func (c *conv) autotitle(lc *conversation.LocalConversation, unsub func()) func() {
	if !c.s.opts.AutoTitle || !c.meta.Autotitle || c.meta.Title != nil {
		return unsub
	}
	var once sync.Once
	ctx, cancel := context.WithCancel(context.Background())
	stop := lc.Subscribe(func(e event.Event) {
		m, isMsg := e.(*event.MessageEvent)
		if !isMsg || m.Source != event.SourceUser {
			return
		}
		once.Do(func() { go c.makeTitle(ctx, lc) })
	})
	return func() {
		cancel()
		stop()
		unsub()
	}
}

func (c *conv) makeTitle(ctx context.Context, lc *conversation.LocalConversation) {
	c.mu.Lock()
	profile := c.meta.TitleLLMProfile
	c.holds++ // the idle evictor leaves the conversation loaded until titled
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.holds--
		c.lastUsed = time.Now()
		c.mu.Unlock()
	}()
	var model llm.Model
	if profile != nil && *profile != "" {
		cfg, err := c.s.llmProfiles().Profile(*profile)
		if err == nil {
			model, err = llm.New(cfg, &llm.Options{Logger: c.s.log})
		}
		if err != nil {
			c.s.log.Warn("title_llm_profile unusable; titling with the agent's model", "conversation", c.id, "err", err)
			model = nil
		}
	}
	t, err := titleOf(ctx, lc, model, title.DefaultLength)
	if err != nil {
		c.s.log.Warn("autotitle failed", "conversation", c.id, "err", err)
		return
	}
	c.mu.Lock()
	if c.meta.Title != nil || c.gone {
		c.mu.Unlock()
		return
	}
	c.meta.Title = &t
	c.meta.UpdatedAt = utcNow()
	c.mu.Unlock()
	if err := c.saveMeta(); err != nil {
		c.s.log.Warn("saving the title", "conversation", c.id, "err", err)
	}
}

// titleOf makes lc's title with model, or the agent's model if nil.
func titleOf(ctx context.Context, lc *conversation.LocalConversation, model llm.Model, maxLength int) (string, error) {
	if model == nil {
		return title.Generate(ctx, lc, maxLength)
	}
	return title.FromState(ctx, lc.State(), model, maxLength)
}
