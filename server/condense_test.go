package server_test

import (
	"strings"
	"testing"

	"github.com/gohands/gohands/llm/llmtest"
)

// TestCondense: POST condense makes the condenser summarise the history
// now; without a condenser acting on requests it is a 409, for an unknown
// conversation a 404, while actions wait for confirmation a 409.
func TestCondense(t *testing.T) {
	// The summariser's request has no tools; the agent's has.
	model := llmtest.NewResponder(t, func(r llmtest.Request) (llmtest.Reply, error) {
		if _, ok := r.Body["tools"]; !ok {
			return llmtest.Reply{Text: "SUMMARY: the user said hello"}, nil
		}
		if strings.Contains(string(r.RawBody), "needs confirmation") {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"echo hi"}`}}}, nil
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}}, nil
	}, nil)
	ts := newTestServer(t, nil)
	llmJSON := pythonAgent(t, model.URL+"/v1")["llm"]
	ws := map[string]any{"working_dir": t.TempDir(), "kind": "LocalWorkspace"}

	// agent_settings give the summarizing condenser.
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", map[string]any{
		"agent_settings": map[string]any{"llm": llmJSON}, "workspace": ws,
		"initial_message": runMessage("hello"),
	}, &info)
	id := info["id"].(string)
	ts.waitStatus(id, "finished")
	ts.must(200, "POST", "/api/conversations/"+id+"/condense", nil, nil)
	var page struct {
		Items []map[string]any `json:"items"`
	}
	ts.must(200, "GET", "/api/conversations/"+id+"/events/search?kind=Condensation", nil, &page)
	if len(page.Items) != 1 || !strings.Contains(page.Items[0]["summary"].(string), "SUMMARY") {
		var all struct {
			Items []map[string]any `json:"items"`
		}
		ts.must(200, "GET", "/api/conversations/"+id+"/events/search", nil, &all)
		for _, e := range all.Items {
			t.Log(e["kind"], e["summary"], e["forgotten_event_ids"])
		}
		t.Fatalf("condensations %v", page.Items)
	}
	var n int
	ts.must(200, "GET", "/api/conversations/"+id+"/events/count?kind=CondensationRequest", nil, &n)
	if n != 1 {
		t.Errorf("%d condensation requests, want 1", n)
	}
	if st := ts.waitStatus(id, "finished"); st["execution_status"] != "finished" {
		t.Errorf("status %v after condensing", st["execution_status"])
	}
	// The next run's request carries the summary.
	ts.must(200, "POST", "/api/conversations/"+id+"/events", map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "again"}}, "run": true}, nil)
	ts.waitStatus(id, "finished")
	if last := model.LastRequest(); !strings.Contains(string(last.RawBody), "SUMMARY: the user said hello") {
		t.Errorf("the model's next request lacks the summary: %s", last.RawBody)
	}

	// No condenser: 409 with the reason, as the reference 1.58.
	ts.must(201, "POST", "/api/conversations", map[string]any{
		"agent_settings": map[string]any{"llm": llmJSON, "condenser": map[string]any{"enabled": false}}, "workspace": ws,
	}, &info)
	status, body := ts.do("POST", "/api/conversations/"+info["id"].(string)+"/condense", nil)
	if status != 409 || !strings.Contains(string(body), "condenser") {
		t.Errorf("no condenser: %d %s", status, body)
	}

	// Unknown conversation: 404.
	status, body = ts.do("POST", "/api/conversations/3fa85f64-5717-4562-b3fc-2c963f66afa6/condense", nil)
	if status != 404 || !strings.Contains(string(body), "Conversation not found") {
		t.Errorf("unknown: %d %s", status, body)
	}

	// Waiting for confirmation: 409, and the pending action stays pending.
	ts.must(201, "POST", "/api/conversations", map[string]any{
		"agent_settings": map[string]any{"llm": llmJSON}, "workspace": ws,
		"confirmation_policy": map[string]any{"kind": "AlwaysConfirm"},
		"initial_message":     runMessage("needs confirmation"),
	}, &info)
	id = info["id"].(string)
	ts.waitStatus(id, "waiting_for_confirmation")
	status, body = ts.do("POST", "/api/conversations/"+id+"/condense", nil)
	if status != 409 {
		t.Errorf("waiting for confirmation: %d %s", status, body)
	}
	ts.must(200, "GET", "/api/conversations/"+id+"/events/count?kind=ObservationEvent", nil, &n)
	if n != 0 {
		t.Errorf("%d observations: the pending action ran", n)
	}
}
