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
	Raw(ctx context.Context, i int) ([]byte, error)
	Event(ctx context.Context, i int) (event.Event, error)
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

// events resolves the request's conversation and returns its event log,
// and a function to call when done with it. The log is the loaded
// conversation's when this server holds it; with a shared catalog it is
// otherwise a snapshot of the database, whoever holds the conversation, so
// that no read waits for a lease.
func (in *request[Q, B]) events() (eventLog, func(), error) {
	c, err := in.find()
	if err != nil {
		return nil, nil, err
	}
	s := in.s
	if s.opts.Postgres != nil && !c.isLoaded() {
		snap, err := s.opts.Postgres.Snapshot(in.r.Context(), c.id)
		if err != nil {
			s.log.Warn("reading a conversation's events", "conversation", c.id, "err", err)
			return nil, nil, statusErr(http.StatusServiceUnavailable, "The conversation store cannot be read; retry later.")
		}
		return snap, func() { snap.Close() }, nil
	}
	_, lc, err := in.load()
	if err != nil {
		return nil, nil, err
	}
	return lc.State().Events(), func() {}, nil
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
		c.setMeta(m)
	}
	c.mu.Unlock()
	return nil
}
