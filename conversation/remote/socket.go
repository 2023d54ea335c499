package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/gohands/gohands/api/protocol"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
)

// readyTimeout is how long a new socket may take to send its first frame
// (the reference's OPENHANDS_REMOTE_WS_READY_TIMEOUT default).
const readyTimeout = 30 * time.Second

// Close codes of the event socket that are not retried.
const (
	closeAuth     websocket.StatusCode = 4001
	closeNotFound websocket.StatusCode = 4004
)

// fatalError is a socket refusal that reconnecting cannot cure.
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

// socket is one connection of the event socket and its reader.
type socket struct {
	conn   *websocket.Conn
	frames chan []byte // closed when the reader stops
	err    error       // why it stopped, once frames is closed
}

// classify turns a socket failure into a fatalError when the server
// closed it for good.
func classify(err error) error {
	switch websocket.CloseStatus(err) {
	case closeAuth:
		return &fatalError{fmt.Errorf("remote: the agent server refused the session key (socket closed with 4001): %w", ErrUnauthorized)}
	case closeNotFound:
		return &fatalError{fmt.Errorf("remote: the agent server has no such conversation (socket closed with 4004): %w", ErrNotFound)}
	}
	return err
}

// dial connects the event socket, authenticates with the first frame as
// the reference's client does, and returns it with its first frame (the
// server's state snapshot).
func (c *Conversation) dial(ctx context.Context) (*socket, []byte, error) {
	u, err := url.Parse(c.ws.BaseURL() + "/sockets/events/" + c.id)
	if err != nil {
		return nil, nil, &fatalError{fmt.Errorf("remote: socket URL: %w", err)}
	}
	switch u.Scheme {
	case "https":
		u.Scheme = "wss"
	default:
		u.Scheme = "ws"
	}
	dctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	conn, resp, err := websocket.Dial(dctx, u.String(), &websocket.DialOptions{HTTPClient: c.ws.Client()})
	if err != nil {
		if resp != nil {
			switch resp.StatusCode {
			case http.StatusUnauthorized, http.StatusForbidden:
				return nil, nil, &fatalError{fmt.Errorf("remote: socket: %d: %w", resp.StatusCode, ErrUnauthorized)}
			case http.StatusNotFound:
				return nil, nil, &fatalError{fmt.Errorf("remote: socket: %d: %w", resp.StatusCode, ErrNotFound)}
			}
		}
		return nil, nil, fmt.Errorf("remote: socket: %w", err)
	}
	conn.SetReadLimit(-1)
	if c.ws.APIKey != "" {
		auth, _ := json.Marshal(protocol.SocketAuth{Type: "auth", SessionAPIKey: c.ws.APIKey})
		if err := conn.Write(dctx, websocket.MessageText, auth); err != nil {
			conn.CloseNow()
			return nil, nil, classify(fmt.Errorf("remote: socket auth: %w", err))
		}
	}
	_, first, err := conn.Read(dctx)
	if err != nil {
		conn.CloseNow()
		return nil, nil, classify(fmt.Errorf("remote: socket: no first frame: %w", err))
	}
	s := &socket{conn: conn, frames: make(chan []byte, 256)}
	go func() {
		defer close(s.frames)
		for {
			_, data, err := conn.Read(ctx)
			if err != nil {
				s.err = classify(err)
				return
			}
			select {
			case s.frames <- data:
			case <-ctx.Done():
				s.err = ctx.Err()
				return
			}
		}
	}()
	return s, first, nil
}

// receive keeps the socket connected until Close, delivering what it
// carries; ready gets the outcome of the first connection.
func (c *Conversation) receive(ready chan<- error) {
	defer close(c.done)
	ctx := c.ctx
	backoff := c.opt.MinBackoff
	first := true
	fail := func(err error) {
		c.mu.Lock()
		if c.fatal == nil {
			c.fatal = err
		}
		c.notifyLocked()
		c.mu.Unlock()
		if first {
			ready <- err
		}
	}
	for {
		s, snap, err := c.dial(ctx)
		if err == nil {
			c.deliverMu.Lock()
			c.handle(snap)
			c.deliverMu.Unlock()
			if err = c.reconcile(ctx); err != nil {
				s.conn.CloseNow()
			}
		}
		if err != nil {
			var fe *fatalError
			switch {
			case ctx.Err() != nil:
				fail(conversation.ErrConversationClosed)
				return
			case errors.As(err, &fe), first:
				fail(err)
				return
			}
			c.log.Warn("agent server socket: reconnecting", "in", backoff, "err", err)
			if !c.idle(ctx, backoff) {
				fail(conversation.ErrConversationClosed)
				return
			}
			backoff = min(2*backoff, c.opt.MaxBackoff)
			continue
		}
		c.mu.Lock()
		c.connects++
		c.mu.Unlock()
		if first {
			first = false
			ready <- nil
		}
		backoff = c.opt.MinBackoff
		err = c.serve(ctx, s)
		s.conn.CloseNow()
		var fe *fatalError
		switch {
		case ctx.Err() != nil:
			fail(conversation.ErrConversationClosed)
			return
		case errors.As(err, &fe):
			fail(err)
			return
		}
		// A connection that was up is retried at once; failures to
		// reconnect back off.
		c.log.Debug("agent server socket dropped", "err", err)
	}
}

// idle waits d; false if ctx ended first.
func (c *Conversation) idle(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// serve delivers a connected socket's frames until it stops.
func (c *Conversation) serve(ctx context.Context, s *socket) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case data, ok := <-s.frames:
			if !ok {
				return s.err
			}
			c.deliverMu.Lock()
			c.handle(data)
			c.deliverMu.Unlock()
		}
	}
}

// reconcile delivers the events the server logged after the last one
// delivered, read from events/search in log order. Socket frames and
// reconciles are delivered one at a time (deliverMu) and deduplicated by
// id; a socket's frames follow the reconcile made when it connected, so
// they never skip an event.
func (c *Conversation) reconcile(ctx context.Context) error {
	c.deliverMu.Lock()
	defer c.deliverMu.Unlock()
	c.mu.Lock()
	page := c.lastID
	c.mu.Unlock()
	for {
		q := url.Values{"limit": {"100"}}
		if page != "" {
			q.Set("page_id", page)
		}
		var res struct {
			Items      []json.RawMessage `json:"items"`
			NextPageID *string           `json:"next_page_id"`
		}
		if err := c.ws.Request(ctx, http.MethodGet, c.path("/events/search"), q, nil, &res); err != nil {
			if errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrNotFound) {
				return &fatalError{fmt.Errorf("remote: reading events: %w", err)}
			}
			return fmt.Errorf("remote: reading events: %w", err)
		}
		for _, raw := range res.Items {
			c.handle(raw)
		}
		if res.NextPageID == nil || *res.NextPageID == "" || *res.NextPageID == page {
			return nil
		}
		page = *res.NextPageID
	}
}

// handle takes one event from the socket or REST (deliverMu held): a state snapshot
// updates the mirror, a transient event goes to the subscribers, and a
// logged event not delivered yet is appended to the mirror and delivered.
func (c *Conversation) handle(data []byte) {
	e, err := event.Unmarshal(data)
	if err != nil {
		c.log.Warn("agent server sent an event this client cannot decode", "err", err, "event", cut(data))
		return
	}
	switch e := e.(type) {
	case *event.ConversationStateUpdateEvent:
		if e.Key == "full_state" {
			if c.applySnapshot(e.Value) {
				// A status the log did not bring (a client that attached
				// or reconnected late, a server that set it without a
				// logged update): subscribers hear of it too, as the
				// reference's callbacks get every snapshot.
				c.events.Publish(e)
			}
			return
		}
	case *event.StreamingDeltaEvent:
		c.events.Publish(e)
		return
	case *event.ServerErrorEvent:
		c.log.Warn("agent server error", "code", e.Code, "detail", e.Detail)
		c.events.Publish(e)
		return
	}
	id := e.EventBase().ID
	c.mu.Lock()
	if id == "" || c.seen[id] {
		c.mu.Unlock()
		return
	}
	c.seen[id], c.lastID = true, id
	c.mu.Unlock()

	up, _ := e.(*event.ConversationStateUpdateEvent)
	var status conversation.ExecutionStatus
	err = c.state.Do(func(tx *conversation.Tx) error {
		if up != nil {
			applyField(tx.Fields(), up.Key, up.Value, &status)
		}
		_, err := tx.Append(e)
		return err
	})
	if err != nil {
		c.log.Warn("mirroring an event", "id", id, "err", err)
	}
	if status != "" {
		c.observe(status, false)
	}
	if c.opt.OnEvent != nil {
		c.opt.OnEvent(e)
	}
	c.events.Publish(e)
}

// applyField copies one state field the client mirrors into f; status is
// set when it is the execution status.
func applyField(f *conversation.Fields, key string, value any, status *conversation.ExecutionStatus) {
	b, err := json.Marshal(value)
	if err != nil {
		return
	}
	switch key {
	case "execution_status":
		var st conversation.ExecutionStatus
		if json.Unmarshal(b, &st) == nil && st.Valid() {
			f.ExecutionStatus, *status = st, st
		}
	case "stats":
		var s conversation.Stats
		if json.Unmarshal(b, &s) == nil {
			f.Stats = s
		}
	case "max_iterations":
		_ = json.Unmarshal(b, &f.MaxIterations)
	}
}

// applySnapshot mirrors a full_state snapshot; true when it changed the
// mirrored execution status.
func (c *Conversation) applySnapshot(value any) (changed bool) {
	var m map[string]json.RawMessage
	b, err := json.Marshal(value)
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		c.log.Warn("agent server sent a state snapshot that is not an object", "err", err)
		return false
	}
	var status conversation.ExecutionStatus
	err = c.state.Update(func(f *conversation.Fields) error {
		before := f.ExecutionStatus
		defer func() { changed = f.ExecutionStatus != before }()
		for _, k := range []string{"execution_status", "stats", "max_iterations"} {
			if v, ok := m[k]; ok {
				applyField(f, k, v, &status)
			}
		}
		return nil
	})
	if err != nil {
		c.log.Warn("mirroring the state", "err", err)
	}
	if status != "" {
		c.observe(status, true)
	}
	return changed
}

// observe records a status heard from the server and wakes Run.
func (c *Conversation) observe(st conversation.ExecutionStatus, snapshot bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.statusN++
	if st == conversation.StatusRunning {
		c.running = c.statusN
	} else if snapshot {
		c.snapN = c.statusN
	}
	c.notifyLocked()
}

func (c *Conversation) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// cut shortens a frame for a log line.
func cut(b []byte) string {
	const n = 300
	s := strings.ToValidUTF8(string(b), "?")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
