package server_test

import (
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server"
)

// Pausing logs the status change before the PauseEvent, and the events
// route, which lists by timestamp, shows them in that order (as the
// reference's server does; its Python client's transcript compares it).
func TestPauseLogsStatusFirst(t *testing.T) {
	model := llmtest.NewChat(t)
	ts := newTestServer(t, nil)
	for _, route := range []string{"pause", "interrupt"} {
		var info map[string]any
		ts.must(201, "POST", "/api/conversations", ts.startBody(model, nil), &info)
		id := info["id"].(string)
		ts.must(200, "POST", "/api/conversations/"+id+"/"+route, nil, nil)
		var page struct {
			Items []map[string]any `json:"items"`
		}
		ts.must(200, "GET", "/api/conversations/"+id+"/events/search", nil, &page)
		var order, times []string
		for _, e := range page.Items {
			switch {
			case e["kind"] == "ConversationStateUpdateEvent" && e["key"] == "execution_status" && e["value"] == "paused":
				order = append(order, "paused")
			case e["kind"] == "PauseEvent", e["kind"] == "InterruptEvent":
				order = append(order, e["kind"].(string))
			default:
				continue
			}
			times = append(times, e["timestamp"].(string))
		}
		// Clients (the reference's RemoteConversation) order events by
		// timestamp: the times must agree with the log.
		if len(order) != 2 || order[0] != "paused" || times[0] > times[1] {
			t.Errorf("%s: order %v at %v, want the status change first", route, order, times)
		}
	}
}

// TestRunAfterStoppedRun: a run request that comes once the run in
// progress has stored how it ended (here finished), but before that run
// has returned, waits for it and starts the next run, where it was
// refused with 409. A reference client that saw the status and asked for
// the next run at once took the ending run's last snapshot for the end of
// its own (TestGohandsServer158's pause scenario, under load).
func TestRunAfterStoppedRun(t *testing.T) {
	model := llmtest.NewChat(t, llmtest.Reply{Text: "done"}, llmtest.Reply{Text: "done again"})
	ts := newTestServer(t, nil)
	returned := make(chan string, 1)
	release := make(chan struct{})
	releaseOnce := sync.OnceFunc(func() { close(release) })
	// Registered after newTestServer's: runs first, so that Close finds
	// the run free to end when the test fails early.
	t.Cleanup(releaseOnce)
	server.SetRunReturned(ts.srv, func(id string) {
		returned <- id
		<-release
	})
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{
		"initial_message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "go"}}, "run": true},
	}), &info)
	id := info["id"].(string)
	<-returned // the run has returned, its end not yet recorded
	ts.waitStatus(id, "finished")
	ts.must(200, "POST", "/api/conversations/"+id+"/events", map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "more"}}}, nil)
	code := make(chan int, 1)
	go func() {
		c, _ := ts.do("POST", "/api/conversations/"+id+"/run", nil)
		code <- c
	}()
	select {
	case c := <-code:
		t.Fatalf("POST /run answered %d while the stopped run was ending; want it to wait and run", c)
	case <-time.After(100 * time.Millisecond): // waiting, as it should
	}
	releaseOnce()
	if c := <-code; c != 200 {
		t.Fatalf("POST /run = %d, want 200", c)
	}
	<-returned
	ts.waitStatus(id, "finished")
	if n := len(model.Requests()); n != 2 {
		t.Errorf("the model got %d requests, want 2 (one per run)", n)
	}
}

// TestRunAnsweredOnceStarted: POST /run answers once the run has stored
// "running", and a run request right after an interrupt was seen (the
// interrupted run stores "paused" before it returns) waits for that run
// to end and starts the next, where it was refused with 409: a reference
// 1.43.1 client then waited for the interrupted run's end and took its
// "paused" snapshot for the next run's end (tests/pyclient
// TestGohandsServer's interrupt scenario, under load).
func TestRunAnsweredOnceStarted(t *testing.T) {
	slow := llmtest.Reply{Text: "late", Delay: time.Hour} // ended by the interrupt
	model := llmtest.NewChat(t, slow, slow, llmtest.Reply{Text: "done"})
	ts := newTestServer(t, nil)
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, nil), &info)
	id := info["id"].(string)
	msg := func(text string) {
		ts.must(200, "POST", "/api/conversations/"+id+"/events", map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": text}}}, nil)
	}
	status := func() any {
		ts.must(200, "GET", "/api/conversations/"+id, nil, &info)
		return info["execution_status"]
	}
	msg("think slowly")
	for round := range 2 {
		ts.must(200, "POST", "/api/conversations/"+id+"/run", nil, nil)
		if s := status(); s != "running" {
			t.Fatalf("round %d: status %v right after POST /run answered, want running", round, s)
		}
		// Interrupt the model call, not the run before it: the slow reply
		// must be used up.
		for deadline := time.Now().Add(time.Minute); model.Remaining() != 2-round; {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the model call did not come", round)
			}
			time.Sleep(10 * time.Millisecond)
		}
		ts.must(200, "POST", "/api/conversations/"+id+"/interrupt", nil, nil)
		ts.waitStatus(id, "paused")
		msg("go on")
	}
	ts.must(200, "POST", "/api/conversations/"+id+"/run", nil, nil)
	ts.waitStatus(id, "finished")
}
