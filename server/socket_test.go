package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server"
)

// frame is the part of a socket frame the tests look at.
type frame struct {
	ID    string          `json:"id"`
	Kind  string          `json:"kind"`
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
}

func (f frame) status() string {
	var st struct {
		ExecutionStatus string `json:"execution_status"`
	}
	if f.Key == "full_state" {
		json.Unmarshal(f.Value, &st)
		return st.ExecutionStatus
	}
	return ""
}

func dial(t *testing.T, ts *testServer, path string) (*websocket.Conn, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	url := "ws" + strings.TrimPrefix(ts.http.URL, "http") + path
	c, _, err := websocket.Dial(ctx, url, nil)
	if c != nil {
		c.SetReadLimit(-1)
	}
	return c, err
}

func readFrame(t *testing.T, c *websocket.Conn) (frame, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, data, err := c.Read(ctx)
	if err != nil {
		return frame{}, err
	}
	var f frame
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("frame %s: %v", data, err)
	}
	return f, nil
}

func TestSocketMessageRunsToFinish(t *testing.T) {
	model := llmtest.NewChat(t, llmtest.Reply{Text: "hello there"})
	ts := newTestServer(t, &server.Options{SessionAPIKeys: []string{"k1", "k2"}})
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, nil), &info)
	id := info["id"].(string)

	c, err := dial(t, ts, "/sockets/events/"+id)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	ctx := context.Background()
	c.Write(ctx, websocket.MessageText, []byte(`{"type":"auth","session_api_key":"k2"}`))
	f, err := readFrame(t, c)
	if err != nil || f.Key != "full_state" || f.status() != "idle" {
		t.Fatalf("first frame %+v, %v", f, err)
	}
	c.Write(ctx, websocket.MessageText, []byte(`{"role":"user","content":[{"type":"text","text":"hi"}]}`))
	var kinds []string
	for {
		f, err := readFrame(t, c)
		if err != nil {
			t.Fatalf("after %v: %v", kinds, err)
		}
		kinds = append(kinds, f.Kind)
		if f.status() == "finished" {
			break
		}
	}
	want := []string{"MessageEvent", "MessageEvent"}
	var got []string
	for _, k := range kinds {
		if k == "MessageEvent" {
			got = append(got, k)
		}
	}
	if len(got) != len(want) {
		t.Errorf("frames %v: want a user and an agent MessageEvent", kinds)
	}
}

func TestSocketAuthAndNotFound(t *testing.T) {
	ts := newTestServer(t, &server.Options{SessionAPIKeys: []string{"secret"}})
	c, err := dial(t, ts, "/sockets/events/6d0c6e1e-3b0c-4b5e-9d7e-1a2b3c4d5e6f")
	if err != nil {
		t.Fatal(err)
	}
	c.Write(context.Background(), websocket.MessageText, []byte(`{"type":"auth","session_api_key":"wrong"}`))
	if _, err := readFrame(t, c); websocket.CloseStatus(err) != 4001 {
		t.Errorf("bad key: %v, want close 4001", err)
	}
	c, err = dial(t, ts, "/sockets/events/6d0c6e1e-3b0c-4b5e-9d7e-1a2b3c4d5e6f?session_api_key=secret")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readFrame(t, c); websocket.CloseStatus(err) != 4004 {
		t.Errorf("unknown conversation: %v, want close 4004", err)
	}
}

// A socket that never reads does not hold the agent back: the run
// finishes, and the socket, fallen behind, is closed with 1013.
func TestSlowSubscriberDropped(t *testing.T) {
	if raceEnabled {
		// 25 model calls re-sending up to 3.75 MB of history each take
		// minutes under the race detector.
		t.Skip("too slow under the race detector; run go test ./server without -race")
	}
	var replies []llmtest.Reply
	// Large events, so that the socket's kernel buffers fill and the
	// server's writer blocks.
	thought := llmtest.Args(map[string]string{"thought": strings.Repeat("x", 150_000)})
	for range 25 {
		replies = append(replies, llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "think", Arguments: thought}}})
	}
	replies = append(replies, llmtest.Reply{Text: "done"})
	model := llmtest.NewChat(t, replies...)
	ts := newTestServer(t, &server.Options{SubscriberBuffer: 4})
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{"stuck_detection": false}), &info)
	id := info["id"].(string)
	c, err := dial(t, ts, "/sockets/events/"+id)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if f, err := readFrame(t, c); err != nil || f.Key != "full_state" {
		t.Fatalf("first frame %v %v", f, err)
	}
	// Stop reading while the agent runs.
	ts.must(200, "POST", "/api/conversations/"+id+"/events", map[string]any{"content": []any{map[string]any{"type": "text", "text": "go"}}, "run": true}, nil)
	start := time.Now()
	ts.waitStatus(id, "finished")
	t.Logf("run took %v", time.Since(start))
	// Reading now gives what was queued, then the close.
	n := 0
	for range 1000 {
		if _, err := readFrame(t, c); err != nil {
			t.Logf("after %d frames: %v", n, err)
			if code := websocket.CloseStatus(err); code != 1013 {
				t.Errorf("close %v, want 1013", err)
			}
			return
		}
		n++
	}
}

// A client that reconnects with resend_mode=since gets the events from
// that time on after the snapshot.
func TestSocketResendSince(t *testing.T) {
	model := llmtest.NewChat(t, llmtest.Reply{Text: "hi"})
	ts := newTestServer(t, nil)
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{
		"initial_message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "go"}}, "run": true},
	}), &info)
	id := info["id"].(string)
	ts.waitStatus(id, "finished")
	var page struct {
		Items []map[string]any `json:"items"`
	}
	ts.must(200, "GET", "/api/conversations/"+id+"/events/search", nil, &page)
	from := page.Items[2]["timestamp"].(string)
	c, err := dial(t, ts, "/sockets/events/"+id+"?resend_mode=since&after_timestamp="+from)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if f, _ := readFrame(t, c); f.Key != "full_state" {
		t.Fatalf("first frame %+v", f)
	}
	for _, want := range page.Items[2:] {
		f, err := readFrame(t, c)
		if err != nil || f.ID != want["id"] {
			t.Fatalf("resent %+v (%v), want %v", f, err, want["id"])
		}
	}
	c2, err := dial(t, ts, "/sockets/events/"+id+"?resend_mode=all")
	if err != nil {
		t.Fatal(err)
	}
	defer c2.CloseNow()
	readFrame(t, c2)
	for _, want := range page.Items {
		if f, err := readFrame(t, c2); err != nil || f.ID != want["id"] {
			t.Fatalf("resend all: %+v (%v), want %v", f, err, want["id"])
		}
	}
}
