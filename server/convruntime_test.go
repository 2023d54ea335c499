package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm/llmtest"
)

// TestConversationRuntime: the reference 1.58's runtime routes and
// ConversationInfo members answer as its local registry does (available,
// resumable) on GET, search, batch get, fork and navigate, and 404 for an
// unknown conversation; tool_module_qualnames is the one the client sent.
func TestConversationRuntime(t *testing.T) {
	t.Parallel()
	model := llmtest.NewChat(t)
	ts := newTestServer(t, nil)
	body := ts.startBody(model, map[string]any{"tool_module_qualnames": map[string]string{"terminal": "openhands.tools.terminal.definition"}})
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", body, &info)
	id := info["id"].(string)

	want := map[string]any{"runtime_status": "available", "can_resume": true, "runtime_error": nil}
	same := func(what string, got any) {
		t.Helper()
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Errorf("%s: runtime %s, want %s", what, g, w)
		}
	}
	var rt map[string]any
	ts.must(200, "GET", "/api/conversations/"+id+"/runtime", nil, &rt)
	same("GET runtime", rt)
	ts.must(200, "POST", "/api/conversations/"+id+"/runtime/reprovision", nil, &rt)
	same("reprovision", rt)
	ts.must(404, "GET", "/api/conversations/"+unknownID+"/runtime", nil, nil)
	ts.must(404, "POST", "/api/conversations/"+unknownID+"/runtime/reprovision", nil, nil)
	ts.must(422, "GET", "/api/conversations/not-a-uuid/runtime", nil, nil)

	check := func(what string, info map[string]any) {
		t.Helper()
		same(what, info["runtime_info"])
		if q, _ := info["tool_module_qualnames"].(map[string]any); q["terminal"] != "openhands.tools.terminal.definition" {
			t.Errorf("%s: tool_module_qualnames %v", what, info["tool_module_qualnames"])
		}
	}
	ts.must(200, "GET", "/api/conversations/"+id, nil, &info)
	check("GET", info)
	var batch []map[string]any
	ts.must(200, "GET", "/api/conversations?ids="+id, nil, &batch)
	check("batch", batch[0])
	var page struct{ Items []map[string]any }
	ts.must(200, "GET", "/api/conversations/search", nil, &page)
	check("search", page.Items[0])
	var fork map[string]any
	ts.must(201, "POST", "/api/conversations/"+id+"/fork", map[string]any{}, &fork)
	check("fork", fork)
	ts.must(200, "POST", "/api/conversations/"+id+"/navigate", map[string]any{"event_id": nil}, &info)
	check("navigate", info)

	// ids is required, as in the reference.
	if status, out := ts.do("GET", "/api/conversations", nil); status != 422 || !strings.Contains(string(out), `"ids"`) {
		t.Errorf("GET /api/conversations without ids: %d %s, want 422 naming ids", status, out)
	}
}

// TestRequiredBodyMembers: a body that leaves out a member the reference
// requires is refused with 422 naming it, and nothing is done.
func TestRequiredBodyMembers(t *testing.T) {
	t.Parallel()
	model := llmtest.NewChat(t)
	ts := newTestServer(t, nil)
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, nil), &info)
	id := info["id"].(string)
	for _, c := range []struct{ path, member string }{
		{"/api/bash/execute_bash_command", "command"},
		{"/api/bash/start_bash_command", "command"},
		{"/api/conversations/" + id + "/bash/execute_bash_command", "command"},
		{"/api/conversations/" + id + "/bash/start_bash_command", "command"},
		{"/api/conversations/" + id + "/events/respond_to_confirmation", "accept"},
		{"/api/conversations/" + id + "/security_analyzer", "security_analyzer"},
	} {
		status, out := ts.do("POST", c.path, map[string]any{})
		var e struct {
			Detail []struct {
				Loc  []any  `json:"loc"`
				Type string `json:"type"`
			} `json:"detail"`
		}
		if status != 422 || json.Unmarshal(out, &e) != nil || len(e.Detail) == 0 || e.Detail[0].Type != "missing" || len(e.Detail[0].Loc) != 2 || e.Detail[0].Loc[1] != c.member {
			t.Errorf("POST %s {}: %d %s, want 422 missing %s", c.path, status, out, c.member)
		}
	}
	var events struct{ Items []any }
	ts.must(200, "GET", "/api/bash/bash_events/search", nil, &events)
	if len(events.Items) != 0 {
		t.Errorf("refused commands left bash events: %v", events.Items)
	}
	// null is a value: it clears the analyzer.
	ts.must(200, "POST", "/api/conversations/"+id+"/security_analyzer", map[string]any{"security_analyzer": nil}, nil)
}
