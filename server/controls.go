package server

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
)

// controlRoutes are the routes of the conversation controls (issue 21):
// fork and navigate.
func (s *Server) controlRoutes() []*route {
	const conv = "/api/conversations/{conversation_id}"
	return []*route{
		{method: "POST", path: conv + "/fork", summary: "Fork a conversation (201), optionally from an event", tag: "Conversations", query: &includeSkillsQuery{}, body: forkRequest{}, resp: conversationInfo{}, status: 201, errors: []int{404, 409, 422}, h: s.handleFork},
		{method: "POST", path: conv + "/navigate", summary: "Move the conversation's HEAD to an event (null: empty)", tag: "Conversations", query: &includeSkillsQuery{}, body: navigateRequest{}, resp: conversationInfo{}, errors: []int{404, 409, 422}, h: s.handleNavigate},
	}
}

// forkRequest is the body of the fork route (the reference's
// ForkConversationRequest).
type forkRequest struct {
	ID           *string           `json:"id,omitempty"`
	Title        *string           `json:"title,omitempty" maxLength:"200"`
	Tags         map[string]string `json:"tags,omitempty"`
	ResetMetrics *bool             `json:"reset_metrics,omitempty"`
	FromEventID  *string           `json:"from_event_id,omitempty"`
}

// navigateRequest is the body of the navigate route.
type navigateRequest struct {
	EventID *string `json:"event_id,omitempty"`
}

func (s *Server) handleFork(w http.ResponseWriter, r *http.Request) {
	var q includeSkillsQuery
	if err := decodeQuery(r, &q); err != nil {
		writeErr(w, err)
		return
	}
	var req forkRequest
	if err := s.readBody(w, r, &req, true); err != nil {
		writeErr(w, err)
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
	c := &conv{s: s, id: id, dir: filestore.Dir(s.opts.ConversationsPath, id), gone: true}
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
	c.mu.Lock()
	c.meta = meta
	c.gone = false
	c.attach(fork)
	c.lastUsed = time.Now()
	c.mu.Unlock()
	if err := c.saveMeta(); err != nil {
		c.mu.Lock()
		c.gone = true
		c.mu.Unlock()
		fork.Close()
		fail(err)
		return
	}
	for _, h := range s.hooks {
		h.addConversation(c)
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
	if err := decodeQuery(r, &q); err != nil {
		writeErr(w, err)
		return
	}
	var req navigateRequest
	if err := s.readBody(w, r, &req, true); err != nil {
		writeErr(w, err)
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
