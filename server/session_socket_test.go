package server_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server"
)

// sframe is a session socket frame.
type sframe struct {
	Type       string          `json:"type"`
	Seq        *int            `json:"seq"`
	FromSeq    *int            `json:"from_seq"`
	ThroughSeq *int            `json:"through_seq"`
	Event      json.RawMessage `json:"event"`
	ItemID     string          `json:"item_id"`
	Attempt    int             `json:"attempt"`
	AnchorSeq  *int            `json:"anchor_seq"`
	Order      int             `json:"order"`
	Kind       string          `json:"kind"`
	Content    string          `json:"content"`
	Reason     string          `json:"reason"`
	Code       string          `json:"code"`
	Detail     string          `json:"detail"`
}

func (f sframe) event() (id, kind, source string) {
	var e struct {
		ID     string `json:"id"`
		Kind   string `json:"kind"`
		Source string `json:"source"`
	}
	json.Unmarshal(f.Event, &e)
	return e.ID, e.Kind, e.Source
}

func readSFrame(t *testing.T, c *websocket.Conn) sframe {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a hang guard only
	defer cancel()
	_, data, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("reading a frame: %v", err)
	}
	var f sframe
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("frame %s: %v", data, err)
	}
	return f
}

// readUntil reads frames until stop says so, and returns them all.
func readUntil(t *testing.T, c *websocket.Conn, stop func(sframe) bool) []sframe {
	t.Helper()
	var got []sframe
	for {
		f := readSFrame(t, c)
		got = append(got, f)
		if stop(f) {
			return got
		}
	}
}

func finished(f sframe) bool {
	if f.Type != "transient" && f.Type != "durable" {
		return false
	}
	var e struct {
		Key   string          `json:"key"`
		Value json.RawMessage `json:"value"`
	}
	json.Unmarshal(f.Event, &e)
	switch e.Key {
	case "execution_status":
		return string(e.Value) == `"finished"` || string(e.Value) == `"error"`
	case "full_state":
		var st struct {
			ExecutionStatus string `json:"execution_status"`
		}
		json.Unmarshal(e.Value, &st)
		return st.ExecutionStatus == "finished" || st.ExecutionStatus == "error"
	}
	return false
}

// TestSessionSocket drives /sockets/session/{id} with a Go WebSocket
// client: a live-only connection sees sync, the state snapshot, its own
// message as a durable frame, the streamed reply as item_started and
// deltas retired by the durable event whose id is the item's; a
// reconnection with after_seq gets exactly the rest of the log, once; -1
// gets it all; bad frames get error frames and keep the socket; a
// conversation that does not exist closes it with 4004.
func TestSessionSocket(t *testing.T) {
	t.Parallel()
	model := llmtest.NewChat(t, llmtest.Reply{Text: "Hello from a streamed reply.", Reasoning: "Thinking it over."})
	ts := newTestServer(t, &server.Options{SessionAPIKeys: []string{"k"}})
	body := ts.startBody(model, nil)
	body["agent"].(map[string]any)["llm"].(map[string]any)["stream"] = true
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", body, &info)
	id := info["id"].(string)

	c, err := dial(t, ts, "/sockets/session/"+id+"?session_api_key=k")
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	sync := readSFrame(t, c)
	if sync.Type != "sync" || sync.FromSeq != nil || sync.ThroughSeq != nil {
		t.Fatalf("first frame %+v, want sync without from_seq nor through_seq (no event yet)", sync)
	}
	if f := readSFrame(t, c); f.Type != "transient" {
		t.Fatalf("second frame %+v, want the state snapshot", f)
	}
	ctx := context.Background()
	if err := c.Write(ctx, websocket.MessageText, []byte("not json")); err != nil {
		t.Fatal(err)
	}
	if f := readSFrame(t, c); f.Type != "error" || f.Code == "" {
		t.Fatalf("after a bad frame: %+v, want an error frame", f)
	}
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"role":"user","content":[{"type":"text","text":"stream please"}]}`)); err != nil {
		t.Fatal(err)
	}
	frames := readUntil(t, c, finished)
	var (
		userSeq   = -1
		item      string
		text      string
		reasoning string
		retired   bool
		lastSeq   = -1
		order     = -1
	)
	for _, f := range frames {
		switch f.Type {
		case "durable":
			if *f.Seq <= lastSeq {
				t.Errorf("durable seq %d after %d", *f.Seq, lastSeq)
			}
			lastSeq = *f.Seq
			eid, kind, source := f.event()
			if kind == "MessageEvent" && source == "user" {
				userSeq = *f.Seq
			}
			if item != "" && eid == item {
				retired = true
			}
		case "item_started":
			if item != "" {
				t.Errorf("a second item started: %+v", f)
			}
			item = f.ItemID
			if f.Attempt != 1 || f.AnchorSeq == nil || *f.AnchorSeq < userSeq {
				t.Errorf("item_started %+v: want attempt 1 anchored after the user message (seq %d)", f, userSeq)
			}
		case "delta":
			if f.ItemID != item || f.Order != order+1 {
				t.Errorf("delta %+v: item %s, previous order %d", f, item, order)
			}
			order = f.Order
			if f.Kind == "text" {
				text += f.Content
			} else {
				reasoning += f.Content
			}
		case "item_aborted":
			t.Errorf("item aborted: %+v", f)
		}
	}
	if userSeq < 0 || item == "" || !retired || text != "Hello from a streamed reply." || reasoning != "Thinking it over." {
		t.Fatalf("user message seq %d, item %q retired %v, text %q, reasoning %q; frames:\n%+v", userSeq, item, retired, text, reasoning, frames)
	}
	c.Close(websocket.StatusNormalClosure, "")

	// Reconnect from the user message: the rest of the log, once, in order.
	var count int
	ts.must(200, "GET", "/api/conversations/"+id+"/events/count", nil, &count)
	c2, err := dial(t, ts, "/sockets/session/"+id+"?session_api_key=k&after_seq="+strconv.Itoa(userSeq))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.CloseNow()
	sync = readSFrame(t, c2)
	// The run may still store an event after "finished" reached the
	// client (its last state update): the sync covers at least what the
	// count saw, and at most what is stored now.
	var now int
	ts.must(200, "GET", "/api/conversations/"+id+"/events/count", nil, &now)
	if sync.FromSeq == nil || *sync.FromSeq != userSeq || sync.ThroughSeq == nil || *sync.ThroughSeq < count-1 || *sync.ThroughSeq > now-1 {
		t.Fatalf("resume sync %+v, want from %d through %d..%d", sync, userSeq, count-1, now-1)
	}
	for want := userSeq + 1; want <= *sync.ThroughSeq; want++ {
		f := readSFrame(t, c2)
		if f.Type != "durable" || *f.Seq != want {
			t.Fatalf("replay: %+v, want durable seq %d", f, want)
		}
	}
	if f := readSFrame(t, c2); f.Type != "transient" {
		t.Fatalf("after the replay: %+v, want the snapshot", f)
	}

	// -1: the whole log.
	c3, err := dial(t, ts, "/sockets/session/"+id+"?session_api_key=k&after_seq=-1")
	if err != nil {
		t.Fatal(err)
	}
	defer c3.CloseNow()
	readSFrame(t, c3)
	for want := range count {
		if f := readSFrame(t, c3); f.Type != "durable" || *f.Seq != want {
			t.Fatalf("full replay: %+v, want seq %d", f, want)
		}
	}
	if err := c3.Write(ctx, websocket.MessageText, []byte(`{"role":"user","content":"not a list"}`)); err != nil {
		t.Fatal(err)
	}
	for {
		if f := readSFrame(t, c3); f.Type == "error" {
			break
		}
	}

	// Unknown conversation; wrong key.
	for _, path := range []string{"/sockets/session/" + unknownID + "?session_api_key=k", "/sockets/session/" + id + "?session_api_key=wrong"} {
		c4, err := dial(t, ts, path)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = c4.Read(ctx)
		want := websocket.StatusCode(4004)
		if path[len(path)-5:] == "wrong" {
			want = 4001
		}
		if websocket.CloseStatus(err) != want {
			t.Errorf("%s: %v, want close %d", path, err, want)
		}
	}
}

// TestSessionSocketAbort: a streamed reply cut mid-way (the connection to
// the model drops, no retry) is retired by item_aborted, since no event
// with its id will come.
func TestSessionSocketAbort(t *testing.T) {
	t.Parallel()
	model := llmtest.NewChat(t, llmtest.Reply{Text: "This reply will not arrive whole, it is cut.", CutAfter: 3})
	ts := newTestServer(t, nil)
	body := ts.startBody(model, nil)
	body["agent"].(map[string]any)["llm"].(map[string]any)["stream"] = true
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", body, &info)
	id := info["id"].(string)
	c, err := dial(t, ts, "/sockets/session/"+id)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	readSFrame(t, c)
	readSFrame(t, c)
	if err := c.Write(context.Background(), websocket.MessageText, []byte(`{"role":"user","content":[{"type":"text","text":"go"}]}`)); err != nil {
		t.Fatal(err)
	}
	frames := readUntil(t, c, func(f sframe) bool { return f.Type == "item_aborted" || finished(f) })
	last := frames[len(frames)-1]
	started := false
	for _, f := range frames {
		started = started || f.Type == "item_started"
	}
	if !started || last.Type != "item_aborted" || last.Reason == "" {
		t.Fatalf("frames end with %+v (item started: %v), want item_aborted:\n%+v", last, started, frames)
	}
}
