package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server"
)

// TestNoStaleSnapshotBeforeNextRun: a reference client takes any
// non-running full_state snapshot that reaches it during run() as that
// run's end. So between one run's end snapshot and the next run's, the
// server sends none: not after a rejection (the reference sends none
// there), and not for a poll just after a run ended, when the run's own
// snapshot may still be on its way. Either one, arriving after the
// client's next POST /run, ended its wait at once (issue 35 item 7: the
// confirm scenario saw "idle" and "running" after run()).
func TestNoStaleSnapshotBeforeNextRun(t *testing.T) {
	model := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"echo one"}`}}},
		llmtest.Reply{Text: "ok"},
	)
	ts := newTestServer(t, nil)
	// However slow the machine, the poll below comes within the grace.
	server.SetEndedGrace(ts.srv, time.Hour)
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{
		"confirmation_policy": map[string]any{"kind": "AlwaysConfirm"},
	}), &info)
	id := info["id"].(string)
	c, err := dial(t, ts, "/sockets/events/"+id)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	ctx := context.Background()
	if f, err := readFrame(t, c); err != nil || f.status() != "idle" {
		t.Fatalf("first frame %+v, %v", f, err)
	}
	// statuses reads frames until a non-running full_state snapshot and
	// returns the status of every snapshot on the way.
	statuses := func() []string {
		t.Helper()
		var got []string
		for {
			f, err := readFrame(t, c)
			if err != nil {
				t.Fatalf("after snapshots %v: %v", got, err)
			}
			if f.Key != "full_state" {
				continue
			}
			got = append(got, f.status())
			if f.status() != "running" {
				return got
			}
		}
	}
	c.Write(ctx, websocket.MessageText, []byte(`{"role":"user","content":[{"type":"text","text":"go"}],"run":true}`))
	if got := statuses(); got[len(got)-1] != "waiting_for_confirmation" {
		t.Fatalf("first run's snapshots %v", got)
	}
	ts.must(200, "POST", "/api/conversations/"+id+"/events/respond_to_confirmation", map[string]any{"accept": false, "reason": "no"}, nil)
	ts.must(200, "GET", "/api/conversations/"+id, nil, nil) // a client's poll
	c.Write(ctx, websocket.MessageText, []byte(`{"role":"user","content":[{"type":"text","text":"again"}],"run":true}`))
	if got := statuses(); len(got) != 1 || got[0] != "finished" {
		t.Errorf("snapshots after the rejection and the poll: %v, want only the next run's end (finished)", got)
	}
}
