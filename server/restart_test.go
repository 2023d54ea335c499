package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server"
)

// TestKilledRunShownRecovered: a server that dies in a run leaves its
// conversation "running" on disk. A server started on that directory shows
// the conversation in its true state at once, before any /run: error, the
// action the death cut short answered, as the reference recovers it when
// it starts (issue 35 item 6d: it showed "running" until a client called
// /run, and recovery then recorded error for a moment).
func TestKilledRunShownRecovered(t *testing.T) {
	model := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "terminal", Arguments: `{"command":"touch started; sleep 30"}`}}},
		llmtest.Reply{Text: "done"},
	)
	a := newTestServer(t, nil)
	var info map[string]any
	body := a.startBody(model, map[string]any{
		"initial_message": map[string]any{"role": "user", "content": []map[string]any{{"type": "text", "text": "go"}}, "run": true},
	})
	work := body["workspace"].(map[string]any)["working_dir"].(string)
	a.must(201, "POST", "/api/conversations", body, &info)
	id := info["id"].(string)
	for {
		if _, err := os.Stat(filepath.Join(work, "started")); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	a.waitStatus(id, "running")
	// What a kill leaves on disk: a copy taken mid-run.
	dead := filepath.Join(t.TempDir(), "conversations")
	if err := os.CopyFS(dead, os.DirFS(a.opts.ConversationsPath)); err != nil {
		t.Fatal(err)
	}

	b := newTestServer(t, &server.Options{ConversationsPath: dead})
	b.must(200, "GET", "/api/conversations/"+id, nil, &info)
	if st := info["execution_status"]; st != "error" {
		t.Fatalf("status %v after the restart, want error at once", st)
	}
	var page struct {
		Items []json.RawMessage `json:"items"`
	}
	b.must(200, "GET", "/api/conversations/"+id+"/events/search?limit=100", nil, &page)
	restarts := 0
	for _, raw := range page.Items {
		var e struct {
			Kind, Error, Key string
			Value            any
		}
		json.Unmarshal(raw, &e)
		if e.Kind == "AgentErrorEvent" && e.Error == conversation.RestartError {
			restarts++
		}
	}
	if restarts != 1 {
		t.Errorf("%d actions answered with the restart error, want 1", restarts)
	}

	b.must(200, "POST", "/api/conversations/"+id+"/run", nil, nil)
	b.waitStatus(id, "finished")
	// The recovery recorded error once, before the run; the run recorded
	// no error of its own.
	b.must(200, "GET", "/api/conversations/"+id+"/events/search?limit=100", nil, &page)
	var statuses []any
	for _, raw := range page.Items {
		var e struct {
			Kind, Key string
			Value     any
		}
		json.Unmarshal(raw, &e)
		if e.Kind == "ConversationStateUpdateEvent" && e.Key == "execution_status" {
			statuses = append(statuses, e.Value)
		}
	}
	if want := []any{"running", "error", "running", "finished"}; !slices.Equal(statuses, want) {
		t.Errorf("recorded statuses %v, want %v", statuses, want)
	}
}
