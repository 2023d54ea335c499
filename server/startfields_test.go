package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm/llmtest"
)

// No field of the reference 1.58.2's start request is silently ignored:
// those this server does not implement are accepted at their defaults (the
// OpenHands app sends them all) and refused with a 422 naming them
// otherwise, storing nothing; title_llm_profile is kept (meta.json).
func TestStartRequestFields(t *testing.T) {
	model := llmtest.NewChat(t)
	ts := newTestServer(t, nil)
	defaults := map[string]any{
		"worktree": false, "worktree_options": nil, "agent_definitions": []any{}, "plugins": nil,
		"agent_launch_additions": nil, "prompt": nil, "conversation_runtime": nil, "container": nil,
		"title_llm_profile": "cheap",
	}
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, defaults), &info)
	meta, err := os.ReadFile(filepath.Join(ts.opts.ConversationsPath, strings.ReplaceAll(info["id"].(string), "-", ""), "meta.json"))
	if err != nil || !strings.Contains(string(meta), `"title_llm_profile":"cheap"`) {
		t.Errorf("meta.json does not keep title_llm_profile (%v): %s", err, meta)
	}
	for field, v := range map[string]any{
		"prompt":               "hi",
		"conversation_runtime": "docker",
		"container":            map[string]any{"image": "x"},
	} {
		code, body := ts.do("POST", "/api/conversations", ts.startBody(model, map[string]any{field: v}))
		var e struct {
			Detail []struct {
				Loc []any  `json:"loc"`
				Msg string `json:"msg"`
			} `json:"detail"`
		}
		json.Unmarshal(body, &e)
		loc := field
		if code != 422 || len(e.Detail) != 1 || len(e.Detail[0].Loc) != 2 || e.Detail[0].Loc[1] != loc || !strings.Contains(e.Detail[0].Msg, loc) {
			t.Errorf("%s=%v: %d %s, want 422 naming %s", field, v, code, body, loc)
		}
	}
	var page struct {
		Items []any `json:"items"`
	}
	ts.must(200, "GET", "/api/conversations/search", nil, &page)
	if len(page.Items) != 1 {
		t.Errorf("%d conversations stored, want only the accepted one", len(page.Items))
	}
}
