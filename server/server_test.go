package server_test

import (
	"testing"

	"github.com/gohands/gohands/llm/llmtest"
)

func TestHealthRoutes(t *testing.T) {
	ts := newTestServer(t, nil)
	for _, p := range []string{"/alive", "/health"} {
		var st map[string]string
		ts.must(200, "GET", p, nil, &st)
		if st["status"] != "ok" {
			t.Errorf("%s: %v", p, st)
		}
	}
	var ready map[string]string
	ts.must(200, "GET", "/ready", nil, &ready)
	if ready["status"] != "ready" {
		t.Errorf("/ready: %v", ready)
	}
	var info map[string]any
	ts.must(200, "GET", "/server_info", nil, &info)
	tools, _ := info["usable_tools"].([]any)
	if len(tools) == 0 {
		t.Errorf("server_info: no usable tools: %v", info)
	}
}

func TestStartRunFinish(t *testing.T) {
	model := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"echo hi"}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"all done"}`}}},
	)
	ts := newTestServer(t, nil)
	body := ts.startBody(model, map[string]any{
		"initial_message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "say hi"}}, "run": true},
	})
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", body, &info)
	id := info["id"].(string)
	ts.waitStatus(id, "finished")
	var resp map[string]string
	ts.must(200, "GET", "/api/conversations/"+id+"/agent_final_response", nil, &resp)
	if resp["response"] != "all done" {
		t.Errorf("final response %q", resp["response"])
	}
	var page struct {
		Items []map[string]any `json:"items"`
	}
	ts.must(200, "GET", "/api/conversations/"+id+"/events/search?limit=100", nil, &page)
	var kinds []string
	for _, e := range page.Items {
		kinds = append(kinds, e["kind"].(string))
	}
	t.Log(kinds)
	// Same id again: 200 with the existing conversation.
	body["conversation_id"] = id
	ts.must(200, "POST", "/api/conversations", body, nil)
}
