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

// A start repeated with the id of a conversation that has no message sends
// the initial message (the first start may have died before storing it);
// once the conversation has one, a repeated start sends nothing.
func TestRepeatedStartSendsLostInitialMessage(t *testing.T) {
	model := llmtest.NewChat(t)
	ts := newTestServer(t, nil)
	const id = "8c0ad5c4-5f8e-4d0c-9d3e-2b7a4f1e6a10"
	msg := func(text string) map[string]any {
		return map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": text}}}
	}
	userTexts := func() []string {
		var page struct {
			Items []map[string]any `json:"items"`
		}
		ts.must(200, "GET", "/api/conversations/"+id+"/events/search?limit=100", nil, &page)
		var out []string
		for _, e := range page.Items {
			if e["kind"] == "MessageEvent" && e["source"] == "user" {
				lm, _ := e["llm_message"].(map[string]any)
				content, _ := lm["content"].([]any)
				for _, c := range content {
					if c, ok := c.(map[string]any); ok {
						out = append(out, c["text"].(string))
					}
				}
			}
		}
		return out
	}
	// As a start killed after creating the conversation leaves it.
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{"conversation_id": id}), nil)
	if got := userTexts(); len(got) != 0 {
		t.Fatalf("user messages before the retry: %v", got)
	}
	ts.must(200, "POST", "/api/conversations", ts.startBody(model, map[string]any{"conversation_id": id, "initial_message": msg("the task")}), nil)
	if got := userTexts(); len(got) != 1 || got[0] != "the task" {
		t.Fatalf("user messages after the retry: %v, want the task once", got)
	}
	ts.must(200, "POST", "/api/conversations", ts.startBody(model, map[string]any{"conversation_id": id, "initial_message": msg("again")}), nil)
	if got := userTexts(); len(got) != 1 {
		t.Errorf("a repeated start of a conversation with a message sent it again: %v", got)
	}
}
