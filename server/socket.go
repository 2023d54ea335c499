package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/coder/websocket"

	"github.com/gohands/gohands/api/protocol"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/pubsub"
)

// Close codes of the event sockets.
const (
	closeAuthFailed websocket.StatusCode = 4001
	closeNotFound   websocket.StatusCode = 4004
	closeTryLater   websocket.StatusCode = 1013
)

// authTimeout is how long a socket may take to send its first-frame auth.
const authTimeout = 10 * time.Second

// socketQuery are the parameters of the event socket.
type socketQuery struct {
	ResendMode     string `query:"resend_mode" enum:"all,since"`
	AfterTimestamp string `query:"after_timestamp"`
	ResendAll      bool   `query:"resend_all"`
	SessionAPIKey  string `query:"session_api_key"`
}

// acceptSocket authenticates and accepts a socket: by the session_api_key
// query parameter or the X-Session-API-Key header when present, else by a
// first text frame {"type":"auth","session_api_key":...}. On failure the
// socket is closed with 4001 and nil is returned.
func (s *Server) acceptSocket(w http.ResponseWriter, r *http.Request, key string) *websocket.Conn {
	if key == "" {
		key = r.Header.Get("X-Session-API-Key")
	}
	// Without session keys sameOrigin has refused every foreign origin
	// already; with keys, a page of another origin (a web app of the
	// user's) may connect and must then authenticate. Without keys, a page
	// of an origin the operator allowed (cors.go) may connect too.
	origin := r.Header.Get("Origin")
	opts := &websocket.AcceptOptions{InsecureSkipVerify: len(s.opts.SessionAPIKeys) > 0 || origin != "" && s.corsAllowed(origin, r.URL.Path)}
	conn, err := websocket.Accept(w, r, opts)
	if err != nil {
		return nil
	}
	conn.SetReadLimit(s.opts.MaxRequestBytes)
	if len(s.opts.SessionAPIKeys) == 0 {
		return conn
	}
	if key != "" {
		if s.authorized(key) {
			return conn
		}
		conn.Close(closeAuthFailed, "Authentication failed")
		return nil
	}
	ctx, cancel := context.WithTimeout(r.Context(), authTimeout)
	defer cancel()
	typ, data, err := conn.Read(ctx)
	var frame protocol.SocketAuth
	if err != nil || typ != websocket.MessageText || json.Unmarshal(data, &frame) != nil || frame.Type != "auth" || !s.authorized(frame.SessionAPIKey) {
		conn.Close(closeAuthFailed, "Authentication failed")
		return nil
	}
	return conn
}

// refuseBadID answers a socket request whose conversation id is no UUID
// with 403 before the handshake, as the reference does (its validation of
// the path and query fails before the socket is accepted), and reports
// whether it did.
func refuseBadID(w http.ResponseWriter, r *http.Request) bool {
	if _, err := conversationID(r); err != nil {
		http.Error(w, "Forbidden", http.StatusForbidden)
		return true
	}
	return false
}

func (s *Server) handleEventSocket(w http.ResponseWriter, r *http.Request) {
	if refuseBadID(w, r) {
		return
	}
	var q socketQuery
	if err := decodeQuery(r, &q); err != nil {
		// The reference's query validation refuses the handshake.
		http.Error(w, "Forbidden", http.StatusForbidden)
		return
	}
	since := ""
	switch {
	case q.ResendMode == "since":
		t, err := parseTimestamp(q.AfterTimestamp, "after_timestamp")
		if err != nil || t == "" {
			writeErr(w, invalid("resend_mode=since needs after_timestamp", "query", "after_timestamp"))
			return
		}
		since = t
	case q.ResendMode == "all" || q.ResendAll:
		since = "0"
	case q.ResendMode != "":
		writeErr(w, &invalidError{loc: []any{"query", "resend_mode"}, typ: "enum", msg: "Input should be 'all' or 'since'"})
		return
	}
	conn := s.acceptSocket(w, r, q.SessionAPIKey)
	if conn == nil {
		return
	}
	defer conn.CloseNow()
	id, err := conversationID(r)
	var c *conv
	if err == nil {
		if c, err = s.lookupErr(id); err != nil {
			// The shared store cannot be read: not a 4004, which
			// clients take as final.
			conn.Close(closeTryLater, "The conversation store cannot be read; reconnect")
			return
		}
	}
	if c == nil || c.isGone() {
		conn.Close(closeNotFound, "Conversation not found")
		return
	}
	lc, err := c.hold(r.Context())
	if errors.Is(err, conversation.ErrLocked) {
		conn.Close(closeTryLater, "The conversation is held by another server; reconnect")
		return
	}
	if err != nil {
		conn.Close(closeNotFound, "Conversation not found")
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	sub, ok := c.subscribe(ctx, lc)
	if !ok {
		conn.Close(closeTryLater, "Too many subscribers")
		return
	}
	defer c.unsubscribe(sub)

	// The reader takes client frames until the client goes; the writer
	// sends the state snapshot, the history asked for, then the live
	// events (duplicates of the history are possible; clients dedupe by
	// id).
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer cancel()
		s.readSocket(ctx, conn, c, lc, sub)
	}()
	err = s.writeSocket(ctx, conn, c, lc, sub, since)
	if errors.Is(err, errDropped) {
		s.dropped.events.Add(1)
		conn.Close(closeTryLater, "subscriber fell behind; reconcile over REST")
	} else {
		conn.Close(websocket.StatusNormalClosure, "")
	}
	cancel()
	<-readDone
}

var errDropped = errors.New("subscriber dropped")

func (s *Server) writeSocket(ctx context.Context, conn *websocket.Conn, c *conv, lc *conversation.LocalConversation, sub *subscriber, since string) error {
	snap, err := fullState(lc)
	if err != nil {
		return err
	}
	if err := conn.Write(ctx, websocket.MessageText, snap); err != nil {
		return err
	}
	if since != "" {
		st := lc.State().Events()
		n := st.Len()
		for i := range n {
			ent, err := st.Entry(i)
			if err != nil {
				return err
			}
			if since != "0" && ent.Timestamp < since {
				continue
			}
			raw, err := st.Raw(ctx, i)
			if err != nil {
				return err
			}
			if err := conn.Write(ctx, websocket.MessageText, raw); err != nil {
				return err
			}
		}
	}
	write := func(e event.Event) error {
		b, err := c.encode(e)
		if err != nil {
			return err
		}
		return conn.Write(ctx, websocket.MessageText, b)
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-sub.events.C():
			if !ok {
				if errors.Is(sub.events.Err(), pubsub.ErrSlow) {
					return errDropped
				}
				return nil
			}
			if err := write(e); err != nil {
				return err
			}
		case b := <-sub.ch:
			if err := sub.drain(write); err != nil {
				return err
			}
			if err := conn.Write(ctx, websocket.MessageText, b); err != nil {
				return err
			}
		case <-sub.done:
			if sub.dropped.Load() > 0 {
				return errDropped
			}
			return nil
		}
	}
}

// socketMessage decodes a message a client sends on a socket. Unlike the
// REST body (the reference's SendMessageRequest, whose role defaults to
// user), a socket frame is the reference's Message, whose role is
// required: a frame without one is refused, not run as an empty message.
func socketMessage(data []byte) (*sendMessageRequest, error) {
	var probe struct {
		Role *string `json:"role"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, jsonInvalid(err)
	}
	if probe.Role == nil {
		return nil, &invalidError{loc: []any{"role"}, typ: "missing", msg: "Field required"}
	}
	var req sendMessageRequest
	if err := req.decode(data); err != nil {
		return nil, err
	}
	return &req, nil
}

// readSocket reads client frames: messages, sent with run=true. Errors
// are answered with a ServerErrorEvent frame; the socket stays open.
func (s *Server) readSocket(ctx context.Context, conn *websocket.Conn, c *conv, lc *conversation.LocalConversation, sub *subscriber) {
	for {
		typ, data, err := conn.Read(ctx)
		if err != nil {
			return
		}
		if typ != websocket.MessageText {
			continue
		}
		var probe struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(data, &probe) == nil && probe.Type == "auth" {
			continue
		}
		req, err := socketMessage(data)
		if err == nil {
			req.Run = true
			r := (&http.Request{}).WithContext(ctx)
			err = s.sendMessage(r, c, lc, req)
		}
		if err != nil {
			code := "ValueError"
			var ie *invalidError
			if !errors.As(err, &ie) {
				code = "RuntimeError"
			}
			b, _ := event.Marshal(&event.ServerErrorEvent{Base: event.NewBase(event.SourceEnvironment), Code: code, Detail: err.Error()})
			sub.send(b)
		}
	}
}

// drain writes the events already queued for sub, without waiting for
// more, so that a snapshot taken after them is sent after them (select
// picks among ready channels at random). A closed channel is left to the
// caller's loop.
func (sub *subscriber) drain(write func(event.Event) error) error {
	for {
		select {
		case e, ok := <-sub.events.C():
			if !ok {
				return nil
			}
			if err := write(e); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}
