package server

import (
	"context"
	"net/http"
	"strings"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
)

// With a shared catalog, reads are served by whichever server a request
// reaches, straight from the database: a conversation's record, its base
// state and its events are there, written before anything is told of them.
// Only what changes a running conversation, and its live socket, goes to the
// server holding its lease (see forward). A server's death thus costs its
// conversations' reads nothing, and a read never takes a lease.

// eventLog is what the event reads need of a conversation's log: a loaded
// conversation's store, or a snapshot of a shared one.
type eventLog interface {
	Len() int
	Lookup(id string) (int, bool)
	Raw(i int) ([]byte, error)
	Event(i int) (event.Event, error)
	Search(q conversation.Query) (conversation.Page, error)
}

// readOnly reports whether r only reads a conversation's stored record,
// state or events, which any server answers from the shared store. A
// socket is not: its live events come from the holder.
func readOnly(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/api/conversations/")
	if !ok {
		return false
	}
	_, sub, _ := strings.Cut(rest, "/")
	return sub == "" || sub == "events" || strings.HasPrefix(sub, "events/")
}

// withEvents resolves r's conversation and returns its event log, and a
// function to call when done with it. The log is the loaded conversation's
// when this server holds it; with a shared catalog it is otherwise a
// snapshot of the database, whoever holds the conversation, so that no
// read waits for a lease. An unknown conversation is answered 404.
func (s *Server) withEvents(w http.ResponseWriter, r *http.Request) (eventLog, func()) {
	c := s.withConv(w, r, http.StatusNotFound)
	if c == nil {
		return nil, nil
	}
	if s.opts.Postgres != nil && !c.isLoaded() {
		snap, err := s.opts.Postgres.Snapshot(r.Context(), c.id)
		if err != nil {
			s.log.Warn("reading a conversation's events", "conversation", c.id, "err", err)
			writeDetail(w, http.StatusServiceUnavailable, "The conversation store cannot be read; retry later.")
			return nil, nil
		}
		return snap, func() { snap.Close() }
	}
	_, lc := s.withLoaded(w, r, http.StatusNotFound)
	if lc == nil {
		return nil, nil
	}
	return lc.State().Events(), func() {}
}

// refreshMeta replaces the record of a shared conversation this server
// does not hold with the database's: its holder may have changed it (a
// title, the end of a run).
func (s *Server) refreshMeta(ctx context.Context, c *conv) error {
	if !s.cat.shared() || c.isLoaded() {
		return nil
	}
	m, ok, err := s.cat.meta(ctx, c.id)
	if err != nil || !ok {
		return err
	}
	c.mu.Lock()
	if c.lc == nil && !c.gone {
		c.meta = m
	}
	c.mu.Unlock()
	return nil
}
