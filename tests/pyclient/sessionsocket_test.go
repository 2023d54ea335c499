package pyclient_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// sessionSocketID is the conversation whose session socket
// TestRouteConformance158 compares.
const sessionSocketID = "6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c9d"

// sFrame is what the comparison reads of a session socket frame.
type sFrame struct {
	Type       string `json:"type"`
	Seq        *int   `json:"seq"`
	FromSeq    *int   `json:"from_seq"`
	ThroughSeq *int   `json:"through_seq"`
	Code       string `json:"code"`
	Event      struct {
		Kind string `json:"kind"`
	} `json:"event"`
}

// sessionSocketFacts drives /sockets/session/{id} of the server at base
// through the envelope protocol — a live connection, a stored message, bad
// frames, after_seq resumes (the whole log, from a seq, past the end), an
// unknown conversation, a bad cursor — and describes what it saw in lines
// that do not depend on timing, to be compared between the two servers.
func sessionSocketFacts(ctx context.Context, base string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute) // a hang guard
	defer cancel()
	c := &apiClient{base: base, http: http.DefaultClient}
	ws := "ws" + strings.TrimPrefix(base, "http") + "/sockets/session/"
	dial := func(path string) (*websocket.Conn, int, error) {
		conn, resp, err := websocket.Dial(ctx, ws+path, nil)
		if err != nil {
			if resp != nil {
				return nil, resp.StatusCode, err
			}
			return nil, 0, err
		}
		conn.SetReadLimit(-1)
		return conn, 101, nil
	}
	read := func(conn *websocket.Conn) (sFrame, error) {
		var f sFrame
		_, data, err := conn.Read(ctx)
		if err != nil {
			return f, err
		}
		return f, json.Unmarshal(data, &f)
	}
	var facts []string
	add := func(format string, args ...any) { facts = append(facts, fmt.Sprintf(format, args...)) }
	key := "session_api_key=" + apiKey

	// Live: sync without a range, then the state snapshot.
	live, _, err := dial(sessionSocketID + "?" + key)
	if err != nil {
		return nil, err
	}
	defer live.CloseNow()
	for range 2 {
		f, err := read(live)
		if err != nil {
			return nil, err
		}
		add("live: %s from=%v through=%v kind=%s", f.Type, f.FromSeq != nil, f.ThroughSeq != nil, f.Event.Kind)
	}
	// A stored message arrives as durable frames, in the log's order.
	msg := map[string]any{"role": "user", "run": false, "content": []any{map[string]any{"type": "text", "text": "hello"}}}
	if _, err := c.do(ctx, "POST", "/api/conversations/"+sessionSocketID+"/events", msg, nil); err != nil {
		return nil, err
	}
	for {
		f, err := read(live)
		if err != nil {
			return nil, err
		}
		if f.Type == "durable" {
			add("message: durable seq=%d kind=%s", *f.Seq, f.Event.Kind)
		}
		if f.Event.Kind == "MessageEvent" {
			break
		}
	}
	// Bad frames: an error frame each, the socket stays. Durable frames
	// may come between (no order is promised): skipped.
	for _, bad := range []string{"not json", `{"content":[{"type":"text","text":"no role"}]}`} {
		if err := live.Write(ctx, websocket.MessageText, []byte(bad)); err != nil {
			return nil, err
		}
		for {
			f, err := read(live)
			if err != nil {
				return nil, err
			}
			if f.Type == "error" {
				add("bad frame %q: error %s", bad, f.Code)
				break
			}
		}
	}
	live.Close(websocket.StatusNormalClosure, "")

	// Resumes: sync echoing after_seq, the durable frames after it in
	// order up to through_seq, then the snapshot.
	for _, after := range []int{-1, 0, 99} {
		conn, _, err := dial(fmt.Sprintf("%s?%s&after_seq=%d", sessionSocketID, key, after))
		if err != nil {
			return nil, err
		}
		sync, err := read(conn)
		if err != nil || sync.Type != "sync" || sync.FromSeq == nil || sync.ThroughSeq == nil {
			conn.CloseNow()
			return nil, fmt.Errorf("after_seq=%d: first frame %+v, %v", after, sync, err)
		}
		add("after_seq=%d: sync from=%d", after, *sync.FromSeq)
		next, contiguous := max(after+1, 0), true
		var kinds []string
		for {
			f, err := read(conn)
			if err != nil {
				conn.CloseNow()
				return nil, err
			}
			if f.Type != "durable" {
				add("after_seq=%d: then %s kind=%s", after, f.Type, f.Event.Kind)
				break
			}
			if f.Seq == nil || *f.Seq != next {
				contiguous = false
			}
			next++
			if len(kinds) < 2 {
				kinds = append(kinds, f.Event.Kind)
			}
		}
		conn.CloseNow()
		add("after_seq=%d: durable frames contiguous=%v through sync's through_seq=%v, first kinds %v", after, contiguous, next-1 == *sync.ThroughSeq || after >= *sync.ThroughSeq, kinds)
	}

	// An unknown conversation: closed with 4004. A bad cursor: refused.
	if conn, _, err := dial("00000000-0000-4000-8000-000000000000?" + key); err == nil {
		_, err = read(conn)
		add("unknown conversation: close %d", websocket.CloseStatus(err))
		conn.CloseNow()
	} else {
		add("unknown conversation: %v", err)
	}
	_, status, _ := dial(sessionSocketID + "?" + key + "&after_seq=abc")
	add("after_seq=abc: handshake %d", status)
	return facts, nil
}
