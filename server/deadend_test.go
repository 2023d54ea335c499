package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/freeport"
	"github.com/gohands/gohands/llm/llmtest"
)

// A conversation whose model's address has nothing listening ends in error
// at once, its error event saying what to check, with the default retry
// settings (5 attempts, 8 to 64 s apart, about two minutes before).
func TestUnreachableModelFailsFast(t *testing.T) {
	addr, err := freeport.Addr()
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + addr + "/v1"
	ts := newTestServer(t, nil)
	body := ts.startBody(llmtest.NewChat(t), map[string]any{
		"initial_message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "hi"}}, "run": true},
	})
	llm := body["agent"].(map[string]any)["llm"].(map[string]any)
	llm["base_url"], llm["num_retries"], llm["retry_min_wait"], llm["retry_max_wait"] = closed, 5, 8, 64
	start := time.Now()
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", body, &info)
	id := info["id"].(string)
	ts.waitStatus(id, "error")
	t.Logf("the conversation ended in error after %s", time.Since(start).Round(time.Millisecond))
	var page struct {
		Items []map[string]any `json:"items"`
	}
	ts.must(200, "GET", "/api/conversations/"+id+"/events/search?kind=ConversationErrorEvent", nil, &page)
	if len(page.Items) != 1 || !strings.Contains(page.Items[0]["detail"].(string), "nothing listens at the model's address") {
		t.Errorf("error events %v, want one that says nothing listens at the model's address", page.Items)
	}
}
