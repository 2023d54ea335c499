package server_test

import (
	"testing"

	"github.com/gohands/gohands/llm/llmtest"
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
