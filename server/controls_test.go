package server_test

import (
	"testing"
	"time"

	"github.com/gohands/gohands/llm/llmtest"
)

// userText is an initial message that runs the agent.
func userText(text string, run bool) map[string]any {
	return map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": text}}, "run": run}
}

// countEvents returns how many events of kind the conversation has.
func (ts *testServer) countEvents(id, kind string) int {
	ts.t.Helper()
	var n int
	ts.must(200, "GET", "/api/conversations/"+id+"/events/count?kind="+kind, nil, &n)
	return n
}

// waitEvents polls until the conversation has at least n events of kind.
func (ts *testServer) waitEvents(id, kind string, n int) {
	ts.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for ts.countEvents(id, kind) < n {
		if time.Now().After(deadline) {
			ts.t.Fatalf("conversation %s: fewer than %d %s", id, n, kind)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// POST /interrupt cuts a running command short and records an
// InterruptEvent; POST /pause records a PauseEvent.
func TestInterruptRoute(t *testing.T) {
	model := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"sleep 30","timeout":60}`}}},
	)
	ts := newTestServer(t, nil)
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{"initial_message": userText("sleep", true)}), &info)
	id := info["id"].(string)
	ts.waitEvents(id, "ActionEvent", 1)
	time.Sleep(200 * time.Millisecond) // let the command start
	ts.must(200, "POST", "/api/conversations/"+id+"/interrupt", nil, nil)
	ts.waitStatus(id, "paused")
	if n := ts.countEvents(id, "InterruptEvent"); n != 1 {
		t.Errorf("%d InterruptEvents", n)
	}
	if n := ts.countEvents(id, "PauseEvent"); n != 0 {
		t.Errorf("%d PauseEvents after an interrupt", n)
	}
}
