package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gohands/gohands/conversation"
)

// With a shared catalog (Options.Postgres) several servers answer for the
// same conversations. A conversation runs on the server holding its lease;
// a request that changes it, or its socket, reaching another server is
// forwarded to the holder (reads are not: see reads.go), and a
// conversation whose holder died is taken
// over by the first server that needs it, or by the sweeper, once the
// lease expires: its interrupted action is answered as after any crash,
// never re-run, and a run that was in progress is resumed.

// forwardedHeader marks a forwarded request, so that it is never forwarded
// again: the receiving server serves it or fails.
const forwardedHeader = "X-Gohands-Forwarded-By"

// conversationPath returns the dashed conversation id a request path
// names, or "".
func conversationPath(p string) string {
	var rest string
	switch {
	case strings.HasPrefix(p, "/api/conversations/"):
		rest = p[len("/api/conversations/"):]
	case strings.HasPrefix(p, "/sockets/events/"):
		rest = p[len("/sockets/events/"):]
	default:
		return ""
	}
	seg, _, _ := strings.Cut(rest, "/")
	id, err := parseUUID(seg)
	if err != nil {
		return ""
	}
	return id
}

// owner returns the URL of the live server holding conversation id, when it
// is another one.
func (s *Server) owner(ctx context.Context, id string) string {
	pg := s.opts.Postgres
	s.mu.RLock()
	c := s.convs[id]
	s.mu.RUnlock()
	if c != nil && c.isLoaded() {
		return "" // held here
	}
	node, _, err := pg.Owner(ctx, id)
	if err != nil {
		s.log.Warn("finding a conversation's server", "conversation", id, "err", err)
		return ""
	}
	if node == pg.Node() {
		return ""
	}
	return node
}

// forward serves r through the server at target.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, target string) {
	u, err := url.Parse(target)
	if err != nil || u.Scheme == "" {
		// The caller may hold no key: the node's internal address is
		// logged, never answered.
		s.log.Warn("a conversation's server has no usable address", "target", target)
		writeDetail(w, http.StatusServiceUnavailable, "The conversation's server has no usable address; retry.")
		return
	}
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.Host = pr.In.Host
			pr.Out.Header.Set(forwardedHeader, s.opts.Postgres.Node())
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			s.log.Warn("forwarding to a conversation's server", "target", target, "err", err)
			retry := max(1, int(s.opts.Postgres.Lease().Seconds()))
			w.Header().Set("Retry-After", strconv.Itoa(retry))
			writeDetail(w, http.StatusServiceUnavailable, "The conversation's server does not answer; retry once its lease expires.")
		},
	}
	p.ServeHTTP(w, r)
}

// errHeldElsewhere is a conversation another live server holds, met by a
// forwarded request (which is not forwarded again).
var errHeldElsewhere = &httpError{status: http.StatusServiceUnavailable, detail: "The conversation is held by another server; retry."}

// sweepLoop takes over the conversations whose server died, and resumes
// those that were running.
func (s *Server) sweepLoop() {
	defer s.janitor.Done()
	every := max(s.opts.Postgres.Lease()/2, 100*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.sweep()
	}
}

func (s *Server) sweep() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	orphans, err := s.opts.Postgres.Orphans(ctx)
	if err != nil {
		s.log.Warn("looking for orphaned conversations", "err", err)
		return
	}
	for _, id := range orphans {
		if s.closing.Load() {
			return
		}
		s.takeOver(ctx, id)
	}
}

// takeOver loads an orphaned conversation here: the crash-recovery rules
// settle what its dead server left, and a run in progress resumes (see
// conv.load).
func (s *Server) takeOver(ctx context.Context, id string) {
	c := s.lookup(id)
	if c == nil {
		return
	}
	if _, err := c.load(ctx); err != nil && !errors.Is(err, conversation.ErrLocked) { // ErrLocked: another server was quicker
		s.log.Warn("taking an orphaned conversation over", "conversation", id, "err", err)
		return
	}
}
