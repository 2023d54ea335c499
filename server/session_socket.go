package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/coder/websocket"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/pubsub"
)

// The session socket, /sockets/session/{conversation_id}: the events of a
// conversation in envelopes, on one ordered channel (the reference's
// session protocol). A client gets a sync frame saying which range of the
// log is replayed (after_seq: everything after that index; -1 the whole
// log; absent nothing), the replay as durable frames carrying each event
// with its index (seq), then the live events: durable frames for stored
// events, transient frames for the rest (state snapshots), and the
// progress of streamed replies (item_started, delta, item_aborted). A
// stored event the replay sent is not sent again. A client that
// reconnects with after_seq set to the last seq it saw loses nothing.
//
// Every item_started is retired by the durable frame whose event id is the
// item_id (the step's reply, which the agent stores with the id it
// streamed under), or by an item_aborted when the step ends without one.
// Text frames from the client are user messages, sent with run; a frame
// that cannot be one is answered with an error frame.

// maxFrameBytes is the largest frame sent; a larger one closes the socket
// (1013) rather than arriving cut.
const maxFrameBytes = 4 << 20

type sessionSocketQuery struct {
	SessionAPIKey string `query:"session_api_key"`
	AfterSeq      *int   `query:"after_seq" description:"Resume cursor: events with seq > after_seq are replayed before going live; -1 replays the whole log; absent, live only."`
}

type syncFrame struct {
	Type       string `json:"type"`
	FromSeq    *int   `json:"from_seq,omitempty"`
	ThroughSeq *int   `json:"through_seq,omitempty"`
}

type durableFrame struct {
	Type  string          `json:"type"`
	Seq   int             `json:"seq"`
	Event json.RawMessage `json:"event"`
}

type transientFrame struct {
	Type  string          `json:"type"`
	Event json.RawMessage `json:"event"`
}

type itemStartedFrame struct {
	Type      string `json:"type"`
	ItemID    string `json:"item_id"`
	Attempt   int    `json:"attempt"`
	AnchorSeq *int   `json:"anchor_seq,omitempty"`
}

type deltaFrame struct {
	Type    string `json:"type"`
	ItemID  string `json:"item_id"`
	Attempt int    `json:"attempt"`
	Order   int    `json:"order"`
	Kind    string `json:"kind"`
	Content string `json:"content"`
}

type itemAbortedFrame struct {
	Type    string `json:"type"`
	ItemID  string `json:"item_id"`
	Attempt int    `json:"attempt"`
	Reason  string `json:"reason"`
}

type errorFrame struct {
	Type   string `json:"type"`
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// errFrameTooLarge closes a socket whose next frame is over maxFrameBytes.
var errFrameTooLarge = errors.New("frame_too_large")

// sessionWriter writes one connection's frames and keeps its open stream
// items.
type sessionWriter struct {
	ctx  context.Context
	conn *websocket.Conn
	c    *conv
	lc   *conversation.LocalConversation
	// through is the last seq the replay sent (-1: none).
	through int
	items   map[string]*openItem
}

type openItem struct {
	attempt, order int
}

func (w *sessionWriter) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(b) > maxFrameBytes {
		return errFrameTooLarge
	}
	return w.conn.Write(w.ctx, websocket.MessageText, b)
}

// event sends e as the frame it is: progress of a stream, durable with
// its seq, or transient.
func (w *sessionWriter) event(e event.Event) error {
	if d, ok := e.(*event.StreamingDeltaEvent); ok && d.ItemID != "" {
		return w.delta(d)
	}
	raw, err := w.c.encode(e)
	if err != nil {
		return err
	}
	seq, stored := w.lc.State().Events().Lookup(e.EventBase().ID)
	if !stored {
		return w.send(transientFrame{Type: "transient", Event: raw})
	}
	if seq <= w.through {
		return nil // the replay sent it
	}
	if err := w.send(durableFrame{Type: "durable", Seq: seq, Event: raw}); err != nil {
		return err
	}
	delete(w.items, e.EventBase().ID)
	switch e := e.(type) {
	case *event.AgentErrorEvent, *event.ConversationErrorEvent:
		return w.abortAll("error")
	case *event.ConversationStateUpdateEvent:
		if e.Key == "execution_status" && fmt.Sprint(e.Value) != string(conversation.StatusRunning) {
			return w.abortAll("run_ended")
		}
	}
	return nil
}

func (w *sessionWriter) delta(d *event.StreamingDeltaEvent) error {
	it := w.items[d.ItemID]
	if it == nil || it.attempt != d.Attempt {
		it = &openItem{attempt: d.Attempt}
		w.items[d.ItemID] = it
		f := itemStartedFrame{Type: "item_started", ItemID: d.ItemID, Attempt: d.Attempt}
		if n := w.lc.State().Events().Len(); n > 0 {
			anchor := n - 1
			f.AnchorSeq = &anchor
		}
		if err := w.send(f); err != nil {
			return err
		}
	}
	for _, part := range []struct {
		kind string
		s    *string
	}{{"reasoning", d.ReasoningContent}, {"text", d.Content}} {
		if part.s == nil || *part.s == "" {
			continue
		}
		if err := w.send(deltaFrame{Type: "delta", ItemID: d.ItemID, Attempt: it.attempt, Order: it.order, Kind: part.kind, Content: *part.s}); err != nil {
			return err
		}
		it.order++
	}
	return nil
}

// abortAll retires the open items that no stored event will close.
func (w *sessionWriter) abortAll(reason string) error {
	for id, it := range w.items {
		if err := w.send(itemAbortedFrame{Type: "item_aborted", ItemID: id, Attempt: it.attempt, Reason: reason}); err != nil {
			return err
		}
		delete(w.items, id)
	}
	return nil
}

func (s *Server) handleSessionSocket(w http.ResponseWriter, r *http.Request) {
	if refuseBadID(w, r) {
		return
	}
	var q sessionSocketQuery
	if err := decodeQuery(r, &q); err != nil {
		// The reference's query validation refuses the handshake.
		http.Error(w, "Forbidden", http.StatusForbidden)
		return
	}
	conn := s.acceptSocket(w, r, q.SessionAPIKey)
	if conn == nil {
		return
	}
	defer conn.CloseNow()
	conn.SetReadLimit(s.opts.MaxRequestBytes)
	id, err := conversationID(r)
	var c *conv
	if err == nil {
		if c, err = s.lookupErr(id); err != nil {
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
	// Subscribe first, then read the log's length: whatever is stored in
	// between is both replayed and queued, and dropped from the queue by
	// its seq.
	sub, ok := c.subscribe(ctx, lc)
	if !ok {
		conn.Close(closeTryLater, "Too many connections for this conversation")
		return
	}
	defer c.unsubscribe(sub)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer cancel()
		s.readSessionSocket(ctx, conn, c, lc)
	}()
	sw := &sessionWriter{ctx: ctx, conn: conn, c: c, lc: lc, through: -1, items: map[string]*openItem{}}
	err = s.writeSessionSocket(sw, sub, q.AfterSeq)
	switch {
	case errors.Is(err, errDropped):
		s.dropped.session.Add(1)
		conn.Close(closeTryLater, "slow_consumer")
	case errors.Is(err, errFrameTooLarge):
		s.log.Warn("session socket: a frame is larger than the limit", "conversation", c.id, "limit", maxFrameBytes)
		conn.Close(closeTryLater, "frame_too_large")
	default:
		conn.Close(websocket.StatusNormalClosure, "")
	}
	cancel()
	<-readDone
}

func (s *Server) writeSessionSocket(w *sessionWriter, sub *subscriber, after *int) error {
	st := w.lc.State().Events()
	n := st.Len()
	sync := syncFrame{Type: "sync", FromSeq: after}
	if n > 0 {
		last := n - 1
		sync.ThroughSeq = &last
	}
	if err := w.send(sync); err != nil {
		return err
	}
	if after != nil && n > 0 {
		for i := max(*after+1, 0); i < n; i++ {
			raw, err := st.Raw(w.ctx, i)
			if err != nil {
				// An unreadable event costs itself, not the connection.
				s.log.Warn("session socket: skipping an unreadable event", "conversation", w.c.id, "seq", i, "err", err)
				continue
			}
			if err := w.send(durableFrame{Type: "durable", Seq: i, Event: raw}); err != nil {
				return err
			}
		}
		w.through = n - 1
	}
	// The conversation's state as it is now, as the reference sends on
	// connecting: a snapshot, never stored.
	snap, err := fullState(w.lc)
	if err != nil {
		return err
	}
	if err := w.send(transientFrame{Type: "transient", Event: snap}); err != nil {
		return err
	}
	for {
		select {
		case <-w.ctx.Done():
			return w.ctx.Err()
		case e, ok := <-sub.events.C():
			if !ok {
				if errors.Is(sub.events.Err(), pubsub.ErrSlow) {
					return errDropped
				}
				return nil
			}
			if err := w.event(e); err != nil {
				return err
			}
		case b := <-sub.ch:
			// A state snapshot (a run ended) or a socket error. The events
			// published before it go out first: select picks among ready
			// channels at random, and a client that saw "finished" before
			// the reply's last deltas and its event lost them (as
			// writeSocket does for /sockets/events).
			if err := sub.drain(w.event); err != nil {
				return err
			}
			if err := w.send(transientFrame{Type: "transient", Event: b}); err != nil {
				return err
			}
			if w.lc.Status() != conversation.StatusRunning {
				if err := w.abortAll("run_ended"); err != nil {
					return err
				}
			}
		case <-sub.done:
			if sub.dropped.Load() > 0 {
				return errDropped
			}
			return nil
		}
	}
}

// readSessionSocket takes the client's frames: user messages, sent with
// run. A frame that is not one is answered with an error frame.
func (s *Server) readSessionSocket(ctx context.Context, conn *websocket.Conn, c *conv, lc *conversation.LocalConversation) {
	reply := func(code, detail string) {
		b, _ := json.Marshal(errorFrame{Type: "error", Code: code, Detail: detail})
		conn.Write(ctx, websocket.MessageText, b) // the writer's frames may come between: no order is promised
	}
	for {
		typ, data, err := conn.Read(ctx)
		if err != nil {
			return
		}
		if typ != websocket.MessageText {
			continue
		}
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(data, &probe); err != nil {
			reply("JSONDecodeError", err.Error())
			continue
		}
		var kind string
		if json.Unmarshal(probe["type"], &kind) == nil && kind == "auth" {
			continue
		}
		req, err := socketMessage(data)
		if err != nil {
			reply("ValidationError", err.Error())
			continue
		}
		req.Run = true
		if err := s.sendMessage((&http.Request{}).WithContext(ctx), c, lc, req); err != nil {
			code := "RuntimeError"
			var ie *invalidError
			if errors.As(err, &ie) {
				code = "ValidationError"
			}
			reply(code, err.Error())
		}
	}
}
