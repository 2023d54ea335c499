package server

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gohands/gohands/telemetry"
	"github.com/gohands/gohands/telemetry/prom"
)

// observe wraps the routes with a telemetry span per request, named by
// the route's template ("POST /api/conversations/{conversation_id}/run"),
// never the raw path: ids stay out of span names and metric labels. A
// W3C traceparent header makes the span a child of the caller's.
func (s *Server) observe(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !telemetry.Enabled() {
			mux.ServeHTTP(w, r)
			return
		}
		// The pattern as the mux will match it, before it runs: the span
		// is named at its start.
		_, pattern := mux.Handler(r)
		route := routeOf(pattern)
		ctx := r.Context()
		if tp := r.Header.Get("Traceparent"); tp != "" {
			if sc, err := telemetry.ParseSpanContext(tp); err == nil {
				ctx = telemetry.WithRemoteParent(ctx, sc)
			}
		}
		name := r.Method
		if route != "" {
			name += " " + route
		}
		ctx, span := telemetry.Start(ctx, telemetry.KindRequest, name)
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			span.SetString(telemetry.AttrHTTPMethod, r.Method)
			if route != "" {
				span.SetString(telemetry.AttrHTTPRoute, route)
			}
			span.SetInt(telemetry.AttrHTTPStatus, int64(sw.code()))
			span.End(nil)
		}()
		mux.ServeHTTP(sw, r.WithContext(ctx))
	})
}

// routeOf is a mux pattern's path: the method dropped, and "" for the
// catch-all, which stands for every path no route matched.
func routeOf(pattern string) string {
	if _, p, ok := strings.Cut(pattern, " "); ok {
		pattern = p
	}
	if pattern == "/" {
		return ""
	}
	return pattern
}

// statusWriter remembers the status a handler wrote. It passes through
// the flushes and hijacks of the event streams and sockets.
type statusWriter struct {
	http.ResponseWriter
	status   int
	hijacked bool
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil {
		w.hijacked = true
	}
	return conn, rw, err
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) code() int {
	switch {
	case w.hijacked:
		return http.StatusSwitchingProtocols
	case w.status == 0:
		return http.StatusOK
	}
	return w.status
}

// droppedSockets counts the sockets closed because their client fell
// behind: the broker dropped its subscription (pubsub.ErrSlow) or its
// queue of frames overflowed. Counted where the socket is closed, so a
// client counts once whichever queue overflowed.
type droppedSockets struct {
	events, session atomic.Int64
}

// handleMetrics writes Options.Metrics and the server's own gauges in
// the Prometheus text format.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", prom.ContentType)
	if _, err := s.opts.Metrics.WriteTo(w); err != nil {
		return
	}
	byStatus := map[string]float64{}
	sockets := 0.0
	s.mu.RLock()
	convs := make([]*conv, 0, len(s.convs))
	for _, c := range s.convs {
		convs = append(convs, c)
	}
	s.mu.RUnlock()
	for _, c := range convs {
		c.mu.Lock()
		lc, gone := c.lc, c.gone
		c.mu.Unlock()
		switch {
		case gone:
			continue
		case lc == nil:
			byStatus["unloaded"]++
		default:
			byStatus[string(lc.Status())]++
		}
		if p := c.subs.Load(); p != nil {
			sockets += float64(len(*p))
		}
	}
	prom.WriteGauge(w, "gohands_conversations", "Conversations this server knows, by execution status (unloaded: stored, not in memory).", "status", byStatus)
	prom.WriteGauge(w, "gohands_socket_clients", "Event sockets connected.", "", map[string]float64{"": sockets})
	prom.WriteCounter(w, "gohands_socket_dropped_total", "Sockets closed because their client fell behind the events (slow consumers), by socket (events: /sockets/events, session: /sockets/session).", "socket",
		map[string]float64{"events": float64(s.dropped.events.Load()), "session": float64(s.dropped.session.Load())})
	if pg := s.opts.Postgres; pg != nil {
		// The database's count, as the other nodes see it. A database
		// that does not answer leaves the series out rather than
		// claiming none.
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		held, err := pg.Held(ctx)
		cancel()
		if err != nil {
			s.log.Warn("metrics: counting the leases held", "err", err)
		} else {
			prom.WriteGauge(w, "gohands_cluster_leases_held", "Conversations whose lease this node holds in the shared PostgreSQL catalog, by node id.", "node", map[string]float64{pg.Node(): float64(held)})
		}
	}
	prom.WriteGauge(w, "gohands_server_runs", "Conversation runs holding one of the server's MaxConcurrentRuns slots.", "", map[string]float64{"": float64(s.runs.Load())})
}
