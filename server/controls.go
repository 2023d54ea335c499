package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/google/uuid"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

// controlRoutes are the routes of the conversation controls:
// fork and navigate.
func (s *Server) controlRoutes() []*route {
	const conv = "/api/conversations/{conversation_id}"
	return []*route{
		{method: "POST", path: conv + "/fork", summary: "Fork a conversation (201), optionally from an event", tag: "Conversations", query: &includeSkillsQuery{}, body: forkRequest{}, resp: conversationInfo{}, status: 201, errors: []int{404, 409, 422}, h: s.handleFork},
		{method: "POST", path: conv + "/navigate", summary: "Move the conversation's HEAD to an event (null: empty)", tag: "Conversations", query: &includeSkillsQuery{}, body: navigateRequest{}, resp: conversationInfo{}, errors: []int{404, 409, 422}, h: s.handleNavigate},
		{method: "POST", path: conv + "/switch_llm", summary: "Switch the conversation's model", tag: "Conversations", body: switchLLMRequest{}, resp: successResponse{}, errors: []int{404, 409, 422}, h: s.handleSwitchLLM},
		{method: "POST", path: conv + "/switch_profile", summary: "Switch the conversation's model to a named LLM profile", tag: "Conversations", body: switchProfileRequest{}, resp: successResponse{}, errors: []int{400, 404, 409, 422}, h: s.handleSwitchProfile},
		{method: "POST", path: conv + "/generate_title", summary: "Generate a title from the first user message", tag: "Conversations", body: generateTitleRequest{}, resp: generateTitleResponse{}, errors: []int{404, 422}, h: s.handleGenerateTitle},
	}
}

func (s *Server) handleFork(w http.ResponseWriter, r *http.Request) {
	var q includeSkillsQuery
	var req forkRequest
	if !s.decodeRequest(w, r, &q, &req, true) {
		return
	}
	if req.Title != nil && len([]rune(*req.Title)) > 200 {
		writeErr(w, &invalidError{loc: []any{"body", "title"}, typ: "string_too_long", msg: "String should have at most 200 characters"})
		return
	}
	for k, v := range req.Tags {
		if !tagKey(k) || len([]rune(v)) > 256 {
			writeErr(w, invalid(fmt.Sprintf("tag %q: keys are lowercase letters and digits, values at most 256 characters", k), "body", "tags"))
			return
		}
	}
	id := uuid.NewString()
	if req.ID != nil {
		var err error
		if id, err = parseUUID(*req.ID); err != nil {
			writeErr(w, &invalidError{loc: []any{"body", "id"}, typ: "uuid_parsing", msg: "Input should be a valid UUID"})
			return
		}
	}
	src, lc := s.withLoaded(w, r, http.StatusNotFound)
	if src == nil {
		return
	}

	// Reserve the id, as create does.
	c := &conv{s: s, id: id, gone: true}
	s.mu.Lock()
	if other := s.convs[id]; other != nil {
		s.mu.Unlock()
		writeDetail(w, http.StatusConflict, "Conversation with id "+hexID(id)+" already exists")
		return
	}
	s.convs[id] = c
	s.mu.Unlock()
	fail := func(err error) {
		s.mu.Lock()
		delete(s.convs, id)
		s.mu.Unlock()
		switch {
		case errors.Is(err, conversation.ErrNotFound):
			writeDetail(w, http.StatusNotFound, "Unknown from_event_id: "+deref(req.FromEventID))
		case errors.Is(err, conversation.ErrExists):
			writeDetail(w, http.StatusConflict, "Conversation with id "+hexID(id)+" already exists")
		default:
			writeErr(w, err)
		}
	}
	fo := &conversation.ForkOptions{
		ID: id, Tags: req.Tags, KeepMetrics: req.ResetMetrics != nil && !*req.ResetMetrics,
		FromEventID: deref(req.FromEventID),
	}
	if req.Title != nil {
		fo.Title = *req.Title
	}
	fork, err := lc.Fork(r.Context(), fo)
	if err != nil {
		fail(err)
		return
	}

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
		fail(err)
		return
	}
	info, err := c.info(q.IncludeSkills)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, info)
}

func (s *Server) handleNavigate(w http.ResponseWriter, r *http.Request) {
	var q includeSkillsQuery
	var req navigateRequest
	if !s.decodeRequest(w, r, &q, &req, true) {
		return
	}
	c, lc := s.withLoaded(w, r, http.StatusNotFound)
	if c == nil {
		return
	}
	eventID := deref(req.EventID)
	if err := lc.NavigateTo(eventID); err != nil {
		switch {
		case errors.Is(err, conversation.ErrNotFound):
			writeDetail(w, http.StatusNotFound, "Unknown event_id: "+eventID)
		case errors.Is(err, conversation.ErrRunning):
			writeErr(w, errAlreadyRunning)
		default:
			writeErr(w, err)
		}
		return
	}
	c.publishFullState(lc)
	info, err := c.info(q.IncludeSkills)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, info)
}

// switchErr answers a failed switch.
func switchErr(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, conversation.ErrRunning):
		writeErr(w, errAlreadyRunning)
	case errors.Is(err, llm.ErrNoProfile):
		writeDetail(w, http.StatusNotFound, err.Error())
	case errors.Is(err, conversation.ErrCannotSwitch):
		writeDetail(w, http.StatusBadRequest, err.Error())
	default:
		writeErr(w, err)
	}
}

func (s *Server) handleSwitchLLM(w http.ResponseWriter, r *http.Request) {
	var req switchLLMRequest
	if err := s.readBody(w, r, &req, false); err != nil {
		writeErr(w, err)
		return
	}
	if isNull(req.LLM) {
		writeErr(w, &invalidError{loc: []any{"body", "llm"}, typ: "missing", msg: "Field required"})
		return
	}
	var cfg llm.Config
	if err := json.Unmarshal(req.LLM, &cfg); err != nil {
		writeErr(w, invalid("llm: "+err.Error(), "body", "llm"))
		return
	}
	_, lc := s.withLoaded(w, r, http.StatusNotFound)
	if lc == nil {
		return
	}
	if err := lc.SwitchLLM(r.Context(), cfg); err != nil {
		switchErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, ok)
}

func (s *Server) handleSwitchProfile(w http.ResponseWriter, r *http.Request) {
	var req switchProfileRequest
	if err := s.readBody(w, r, &req, false); err != nil {
		writeErr(w, err)
		return
	}
	if req.ProfileName == "" {
		writeErr(w, &invalidError{loc: []any{"body", "profile_name"}, typ: "missing", msg: "Field required"})
		return
	}
	_, lc := s.withLoaded(w, r, http.StatusNotFound)
	if lc == nil {
		return
	}
	cfg, err := s.opts.Profiles.Profile(req.ProfileName)
	if err != nil {
		writeDetail(w, http.StatusNotFound, fmt.Sprintf("Profile '%s' not found", req.ProfileName))
		return
	}
	if err := lc.SwitchLLM(r.Context(), cfg); err != nil {
		switchErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, ok)
}

func (s *Server) handleGenerateTitle(w http.ResponseWriter, r *http.Request) {
	var req generateTitleRequest
	if err := s.readBody(w, r, &req, true); err != nil {
		writeErr(w, err)
		return
	}
	maxLen := conversation.DefaultTitleLength
	if req.MaxLength != nil {
		if *req.MaxLength < 1 || *req.MaxLength > 200 {
			writeErr(w, &invalidError{loc: []any{"body", "max_length"}, typ: "less_than_equal", msg: "Input should be between 1 and 200"})
			return
		}
		maxLen = *req.MaxLength
	}
	var model llm.Model
	if !isNull(req.LLM) {
		var cfg llm.Config
		if err := json.Unmarshal(req.LLM, &cfg); err != nil {
			writeErr(w, invalid("llm: "+err.Error(), "body", "llm"))
			return
		}
		l, err := llm.New(cfg, &llm.Options{Logger: s.log})
		if err != nil {
			writeErr(w, invalid("llm: "+err.Error(), "body", "llm"))
			return
		}
		model = l
	}
	_, lc := s.withLoaded(w, r, http.StatusNotFound)
	if lc == nil {
		return
	}
	title, err := lc.GenerateTitle(r.Context(), model, maxLen)
	if errors.Is(err, conversation.ErrNoUserMessage) {
		writeDetail(w, http.StatusBadRequest, "The conversation has no user message to make a title from")
		return
	}
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, generateTitleResponse{Title: title})
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
	c.mu.Unlock()
	var model llm.Model
	if profile != nil && *profile != "" {
		cfg, err := c.s.opts.Profiles.Profile(*profile)
		if err == nil {
			model, err = llm.New(cfg, &llm.Options{Logger: c.s.log})
		}
		if err != nil {
			c.s.log.Warn("title_llm_profile unusable; titling with the agent's model", "conversation", c.id, "err", err)
			model = nil
		}
	}
	title, err := lc.GenerateTitle(ctx, model, conversation.DefaultTitleLength)
	if err != nil {
		c.s.log.Warn("autotitle failed", "conversation", c.id, "err", err)
		return
	}
	c.mu.Lock()
	if c.meta.Title != nil || c.gone {
		c.mu.Unlock()
		return
	}
	c.meta.Title = &title
	c.meta.UpdatedAt = utcNow()
	c.mu.Unlock()
	if err := c.saveMeta(); err != nil {
		c.s.log.Warn("saving the title", "conversation", c.id, "err", err)
	}
}
