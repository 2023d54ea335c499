package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gohands/gohands/api/protocol"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
)

// eventSearchQuery are the filters of the event search and count.
type eventSearchQuery struct {
	PageID       string  `query:"page_id" description:"Id of the first event of the page, from next_page_id."`
	Limit        *int    `query:"limit" minimum:"1" maximum:"100" description:"Page size (default 100)."`
	Kind         string  `query:"kind" description:"Event kind: a class name such as MessageEvent, or the reference's fully qualified name (openhands.sdk.event....MessageEvent)."`
	Source       string  `query:"source" description:"Event source: agent, user or environment."`
	Body         string  `query:"body" description:"Case-insensitive text the message must contain."`
	SortOrder    *string `query:"sort_order" enum:"TIMESTAMP,TIMESTAMP_DESC" description:"Log order (default) or the reverse."`
	TimestampGTE string  `query:"timestamp__gte" format:"date-time" description:"Only events at or after this ISO time."`
	TimestampLT  string  `query:"timestamp__lt" format:"date-time" description:"Only events before this ISO time."`
}

type eventCountQuery struct {
	Kind         string `query:"kind"`
	Source       string `query:"source"`
	Body         string `query:"body"`
	TimestampGTE string `query:"timestamp__gte" format:"date-time"`
	TimestampLT  string `query:"timestamp__lt" format:"date-time"`
}

// parseTimestamp reads an ISO time filter as the reference does: an aware
// time is converted to server-local time, then compared with the (naive,
// local) event timestamps as a string.
func parseTimestamp(s, name string) (string, error) {
	if s == "" {
		return "", nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return event.FormatTime(t.In(time.Local)), nil
		}
	}
	return "", &invalidError{loc: []any{"query", name}, typ: "datetime_parsing", msg: "Input should be a valid datetime"}
}

// storeQuery turns the filters into a store query.
func storeQuery(kind, source, gte, lt string) (conversation.Query, error) {
	var q conversation.Query
	if i := strings.LastIndexByte(kind, '.'); i >= 0 {
		kind = kind[i+1:]
	}
	q.Kind = kind
	switch source {
	case "", "agent", "user", "environment", "hook":
		q.Source = event.Source(source)
	default:
		return q, &invalidError{loc: []any{"query", "source"}, typ: "literal_error", msg: "Input should be 'agent', 'user', 'environment' or 'hook'"}
	}
	var err error
	if q.TimestampGTE, err = parseTimestamp(gte, "timestamp__gte"); err != nil {
		return q, err
	}
	if q.TimestampLT, err = parseTimestamp(lt, "timestamp__lt"); err != nil {
		return q, err
	}
	return q, nil
}

// matchesBody reports whether the event at i is a message containing
// body (lowercased), in its text, extended content or reasoning.
func matchesBody(ctx context.Context, st eventLog, i int, body string) bool {
	e, err := st.Event(ctx, i)
	if err != nil {
		return false
	}
	m, ok := e.(*event.MessageEvent)
	if !ok {
		return false
	}
	var b strings.Builder
	b.WriteString(event.TextOf(m.LLMMessage.Content))
	b.WriteString(event.TextOf(m.ExtendedContent))
	b.WriteString(m.LLMMessage.ReasoningContent)
	return strings.Contains(strings.ToLower(b.String()), body)
}

// searchEvents returns a page of the entries matching q and body.
func searchEvents(ctx context.Context, st eventLog, q conversation.Query, body string) (conversation.Page, error) {
	if body == "" {
		return st.Search(q)
	}
	body = strings.ToLower(body)
	limit := q.Limit
	var out conversation.Page
	q.Limit = 100
	for {
		p, err := st.Search(q)
		if err != nil {
			return out, err
		}
		for _, ent := range p.Entries {
			if !matchesBody(ctx, st, ent.Index, body) {
				continue
			}
			if len(out.Entries) == limit {
				out.NextPageID = ent.ID
				return out, nil
			}
			out.Entries = append(out.Entries, ent)
		}
		if p.NextPageID == "" {
			return out, nil
		}
		q.PageID = p.NextPageID
	}
}

func (s *Server) handleEventSearch(in *request[eventSearchQuery, none]) (any, error) {
	q := &in.query
	limit, err := limitParam(q.Limit, 100)
	if err != nil {
		return nil, err
	}
	sq, err := storeQuery(q.Kind, q.Source, q.TimestampGTE, q.TimestampLT)
	if err != nil {
		return nil, err
	}
	switch deref(q.SortOrder) {
	case "", "TIMESTAMP":
	case "TIMESTAMP_DESC":
		sq.Descending = true
	default:
		return nil, &invalidError{loc: []any{"query", "sort_order"}, typ: "enum", msg: "Input should be 'TIMESTAMP' or 'TIMESTAMP_DESC'"}
	}
	sq.PageID, sq.Limit = q.PageID, limit
	st, done, err := in.events()
	if err != nil {
		return nil, err
	}
	defer done()
	if sq.PageID != "" {
		if _, ok := st.Lookup(sq.PageID); !ok {
			return []byte(`{"items":[],"next_page_id":null}`), nil
		}
	}
	page, err := searchEvents(in.r.Context(), st, sq, q.Body)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.WriteString(`{"items":[`)
	for i, ent := range page.Entries {
		raw, err := st.Raw(in.r.Context(), ent.Index)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(raw)
	}
	buf.WriteString(`],"next_page_id":`)
	if page.NextPageID != "" {
		fmt.Fprintf(&buf, "%q}", page.NextPageID)
	} else {
		buf.WriteString("null}")
	}
	return buf.Bytes(), nil
}

func (s *Server) handleEventCount(in *request[eventCountQuery, none]) (any, error) {
	q := &in.query
	sq, err := storeQuery(q.Kind, q.Source, q.TimestampGTE, q.TimestampLT)
	if err != nil {
		return nil, err
	}
	st, done, err := in.events()
	if err != nil {
		return nil, err
	}
	defer done()
	n := 0
	sq.Limit = 1 << 20
	for {
		p, err := searchEvents(in.r.Context(), st, sq, q.Body)
		if err != nil {
			return nil, err
		}
		n += len(p.Entries)
		if p.NextPageID == "" {
			break
		}
		sq.PageID = p.NextPageID
	}
	return n, nil
}

func (s *Server) handleEventGet(in *request[none, none]) (any, error) {
	st, done, err := in.events()
	if err != nil {
		return nil, err
	}
	defer done()
	id := in.r.PathValue("event_id")
	i, ok := st.Lookup(id)
	if !ok {
		// The reference fails with a KeyError (500); a 404 says what
		// happened.
		return nil, statusErr(http.StatusNotFound, "Event not found: %s", id)
	}
	e, err := st.Event(in.r.Context(), i)
	if err != nil {
		return nil, err
	}
	return event.Marshal(e)
}

// batchEventsRequest documents the body of the batch event lookup.
type batchEventsRequest []string

func (s *Server) handleEventBatch(in *request[none, batchEventsRequest]) (any, error) {
	ids := in.body
	st, done, err := in.events()
	if err != nil {
		return nil, err
	}
	defer done()
	var buf bytes.Buffer
	buf.WriteByte('[')
	for n, id := range ids {
		if n > 0 {
			buf.WriteByte(',')
		}
		i, ok := st.Lookup(id)
		if !ok {
			buf.WriteString("null")
			continue
		}
		raw, err := st.Raw(in.r.Context(), i)
		if err != nil {
			return nil, err
		}
		buf.Write(raw)
	}
	buf.WriteByte(']')
	return buf.Bytes(), nil
}

// sendMessageRequest is protocol.SendMessageRequest, with the server's own decoding.
type sendMessageRequest protocol.SendMessageRequest

func (r *sendMessageRequest) decode(body []byte) error {
	type plain sendMessageRequest
	var p plain
	if err := json.Unmarshal(body, &p); err != nil {
		return jsonInvalid(err)
	}
	*r = sendMessageRequest(p)
	if r.Role == "" {
		r.Role = "user"
	}
	if r.Role != "user" {
		return &invalidError{loc: []any{"body", "role"}, typ: "value_error", msg: "only user messages can be sent to a conversation"}
	}
	return nil
}

func (s *Server) handleSendMessage(in *request[none, sendMessageRequest]) (any, error) {
	c, lc, err := in.load()
	if err != nil {
		return nil, err
	}
	if err := s.sendMessage(in.r, c, lc, &in.body); err != nil {
		return nil, err
	}
	return ok, nil
}

// sendMessage appends a user message and, if asked, starts a run unless
// one is in progress (the running loop will see the message).
func (s *Server) sendMessage(r *http.Request, c *conv, lc *conversation.LocalConversation, req *sendMessageRequest) error {
	// A person's message takes over from a goal loop, as in the reference.
	c.stopGoal()
	msg := event.Message{Role: event.RoleUser, Content: req.Content}
	if err := lc.SendMessage(r.Context(), msg); err != nil {
		return err
	}
	if !req.Run {
		return nil
	}
	if err := c.run(r.Context()); err != nil && !errors.Is(err, errAlreadyRunning) {
		return err
	}
	return nil
}

func (s *Server) handleConfirmation(in *request[none, confirmationRequest]) (any, error) {
	c, lc, err := in.load()
	if err != nil {
		return nil, err
	}
	if in.body.Accept {
		if err := c.run(in.r.Context()); err != nil && !errors.Is(err, errAlreadyRunning) {
			return nil, err
		}
	} else {
		if err := lc.RejectPendingActions(in.r.Context(), in.body.Reason); err != nil {
			return nil, statusErr(http.StatusConflict, "%v", err)
		}
		// No snapshot here, as the reference sends none: its client takes
		// any non-running snapshot that reaches it during run() as that
		// run's end, and one sent now can reach it after the next POST
		// /run (TestGohandsServer's run-after-reject returned "idle").
		// The change of status goes out as its own state update.
	}
	return ok, nil
}
