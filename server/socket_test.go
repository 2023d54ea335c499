package server_test

import (
	"cmp"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server"

	"golang.org/x/sys/unix"
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

func dial(t testing.TB, ts *testServer, path string) (*websocket.Conn, error) {
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
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
	// An id that is no UUID, or a bad query parameter, is refused before
	// the handshake with 403, as the reference refuses it (its validation),
	// on both sockets.
	for _, p := range []string{"/sockets/events/not-a-uuid", "/sockets/session/not-a-uuid", "/sockets/session/" + unknownID + "?after_seq=abc&", "/sockets/events/" + unknownID + "?resend_mode=bogus&"} {
		sep := "?"
		if strings.HasSuffix(p, "&") {
			sep = ""
		}
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.http.URL, "http")+p+sep+"session_api_key=secret", nil)
		cancel()
		if c != nil {
			c.CloseNow()
		}
		if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %v %v, want a 403 refusal", p, resp, err)
		}
	}
}

// A socket that never reads does not hold the agent back: the run
// finishes, and the socket, fallen behind, is closed with 1013. The
// connection's buffers are made tiny on both ends, so that a few hundred
// kilobytes of events fill it and the server's writer blocks (with the
// kernel's self-tuning buffers it takes megabytes, too slow under -race).
func TestSlowSubscriberDropped(t *testing.T) {
	var replies []llmtest.Reply
	thought := llmtest.Args(map[string]string{"thought": strings.Repeat("x", 16_000)})
	for range 12 {
		replies = append(replies, llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "think", Arguments: thought}}})
	}
	replies = append(replies, llmtest.Reply{Text: "done"})
	model := llmtest.NewChat(t, replies...)
	ts := newTestServer(t, &server.Options{SubscriberBuffer: 2})
	small := httptest.NewUnstartedServer(ts.srv)
	small.Listener = smallBufferListener{small.Listener}
	small.Start()
	defer small.Close()

	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{"stuck_detection": false}), &info)
	id := info["id"].(string)
	d := &net.Dialer{Control: func(network, address string, rc syscall.RawConn) error {
		return setSmallBuffer(rc, unix.SO_RCVBUF)
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	url := "ws" + strings.TrimPrefix(small.URL, "http") + "/sockets/events/" + id
	c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}})
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(-1)
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
	t.Errorf("%d frames and no close: the socket was never dropped", n)
}

// smallBufferListener gives accepted connections a 4 KiB send buffer.
type smallBufferListener struct{ net.Listener }

func (l smallBufferListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if rc, err := c.(*net.TCPConn).SyscallConn(); err == nil {
		err = setSmallBuffer(rc, unix.SO_SNDBUF)
		if err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// setSmallBuffer sets a socket buffer (SO_SNDBUF or SO_RCVBUF) to 4 KiB,
// which also stops the kernel from growing it.
func setSmallBuffer(rc syscall.RawConn, opt int) error {
	var serr error
	err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, opt, 4096)
	})
	return cmp.Or(err, serr)
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

// When the model streams, its text reaches the sockets as
// StreamingDeltaEvents before the agent's message, and no delta is stored.
func TestSocketStreamingDeltas(t *testing.T) {
	const reply = "Streaming reaches the socket, a few tokens at a time, before the whole message is stored."
	model := llmtest.NewChat(t, llmtest.Reply{Text: reply, Reasoning: "thinking it over"})
	ts := newTestServer(t, nil)
	body := ts.startBody(model, nil)
	body["agent"].(map[string]any)["llm"].(map[string]any)["stream"] = true
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", body, &info)
	id := info["id"].(string)
	c, err := dial(t, ts, "/sockets/events/"+id)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if f, err := readFrame(t, c); err != nil || f.Key != "full_state" {
		t.Fatalf("first frame %+v %v", f, err)
	}
	ts.must(200, "POST", "/api/conversations/"+id+"/events", map[string]any{"content": []any{map[string]any{"type": "text", "text": "stream please"}}, "run": true}, nil)
	var text, reasoning strings.Builder
	deltas := 0
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, data, err := c.Read(ctx)
		cancel()
		if err != nil {
			t.Fatalf("after %d deltas: %v", deltas, err)
		}
		var f struct {
			Kind             string  `json:"kind"`
			Source           string  `json:"source"`
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			LLMMessage       *struct {
				Role string `json:"role"`
			} `json:"llm_message"`
		}
		if err := json.Unmarshal(data, &f); err != nil {
			t.Fatal(err)
		}
		if f.Kind == "StreamingDeltaEvent" {
			deltas++
			if f.Source != "agent" {
				t.Errorf("delta source %q", f.Source)
			}
			if f.Content != nil {
				text.WriteString(*f.Content)
			}
			if f.ReasoningContent != nil {
				reasoning.WriteString(*f.ReasoningContent)
			}
		}
		if f.Kind == "MessageEvent" && f.LLMMessage != nil && f.LLMMessage.Role == "assistant" {
			break // the whole message comes after its deltas
		}
	}
	if deltas < 2 || text.String() != reply || reasoning.String() != "thinking it over" {
		t.Errorf("%d deltas: text %q reasoning %q", deltas, text.String(), reasoning.String())
	}
	if !model.LastRequest().Stream {
		t.Error("the model was not asked to stream")
	}
	ts.waitStatus(id, "finished")
	var n int
	ts.must(200, "GET", "/api/conversations/"+id+"/events/count?kind=StreamingDeltaEvent", nil, &n)
	if n != 0 {
		t.Errorf("%d deltas stored", n)
	}
}

// A client that missed a run's final snapshot (the reference's
// RemoteConversation arms itself for it only once POST /run has answered)
// gets one when it polls the conversation: each GET of a conversation that
// is not running sends the sockets a full_state snapshot, once the run's
// end is past the server's grace (here none; TestNoStaleSnapshotBeforeNextRun
// has it).
func TestSocketSnapshotOnPollAfterRun(t *testing.T) {
	model := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"echo one"}`}}},
	)
	ts := newTestServer(t, nil)
	server.SetEndedGrace(ts.srv, 0)
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{
		"confirmation_policy": map[string]any{"kind": "AlwaysConfirm"},
		"initial_message":     map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "go"}}},
	}), &info)
	id := info["id"].(string)
	c, err := dial(t, ts, "/sockets/events/"+id)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if f, err := readFrame(t, c); err != nil || f.status() != "idle" {
		t.Fatalf("first frame %+v, %v", f, err)
	}
	ts.must(200, "POST", "/api/conversations/"+id+"/run", nil, nil)
	for {
		f, err := readFrame(t, c)
		if err != nil {
			t.Fatalf("waiting for the run's snapshot: %v", err)
		}
		if f.status() == "waiting_for_confirmation" {
			break
		}
	}
	for i := range 3 {
		ts.must(200, "GET", "/api/conversations/"+id, nil, nil)
		f, err := readFrame(t, c)
		if err != nil || f.status() != "waiting_for_confirmation" {
			t.Fatalf("frame after poll %d: %+v, %v; want a full_state snapshot", i, f, err)
		}
	}
}

// TestSocketFrameWithoutRole: a frame without a role is the reference's
// invalid Message on both sockets: an error frame answers it, the socket
// stays, and nothing is stored nor run.
func TestSocketFrameWithoutRole(t *testing.T) {
	t.Parallel()
	model := llmtest.NewChat(t)
	ts := newTestServer(t, nil)
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, nil), &info)
	id := info["id"].(string)
	frame := []byte(`{"content":[{"type":"text","text":"no role"}]}`)
	ctx := t.Context()

	sc, err := dial(t, ts, "/sockets/session/"+id)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.CloseNow()
	readSFrame(t, sc) // sync
	readSFrame(t, sc) // the snapshot
	if err := sc.Write(ctx, websocket.MessageText, frame); err != nil {
		t.Fatal(err)
	}
	if f := readSFrame(t, sc); f.Type != "error" || f.Code != "ValidationError" {
		t.Errorf("session socket: %+v, want a ValidationError frame", f)
	}

	ec, err := dial(t, ts, "/sockets/events/"+id)
	if err != nil {
		t.Fatal(err)
	}
	defer ec.CloseNow()
	if err := ec.Write(ctx, websocket.MessageText, frame); err != nil {
		t.Fatal(err)
	}
	for {
		f, err := readFrame(t, ec)
		if err != nil {
			t.Fatal(err)
		}
		if f.Kind == "ServerErrorEvent" {
			break
		}
	}
	var n int
	ts.must(200, "GET", "/api/conversations/"+id+"/events/count?kind=MessageEvent", nil, &n)
	if n != 0 || len(model.Requests()) != 0 {
		t.Errorf("%d messages stored, %d model calls; want none", n, len(model.Requests()))
	}
}
