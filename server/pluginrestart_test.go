package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server"
)

// A start plugin's sub-agent is back after a restart, as 1.58.2 loads a
// conversation's start plugins again on resume: a server on the same
// directory runs it through the task tool. meta.json keeps the plugins.
func TestStartPluginSubAgentAfterRestart(t *testing.T) {
	t.Parallel()
	pb, err := llmtest.NewPlaybook(
		llmtest.Rule{Name: "sub", System: "PLUG-HELPER-PROMPT", Replies: []llmtest.Reply{{Text: "helped"}}, Loop: true},
		llmtest.Rule{Name: "parent", FirstUser: "#help", Replies: []llmtest.Reply{
			{ToolCalls: []llmtest.ToolCall{{Name: "task", Arguments: `{"description":"ask","prompt":"help","subagent_type":"plug-helper","security_risk":"LOW"}`}}},
			{Text: "done"},
		}},
	)
	if err != nil {
		t.Fatal(err)
	}
	model := llmtest.NewResponder(t, pb.Respond, nil)
	dir := writePlugin(t, filepath.Join(t.TempDir(), "helpers"), map[string]string{
		".plugin/plugin.json": `{"name": "helpers"}`,
		"agents/helper.md":    "---\nname: plug-helper\ndescription: Helps.\ntools: []\n---\nYou are PLUG-HELPER-PROMPT.",
	})
	convs := t.TempDir()
	ts := newTestServer(t, &server.Options{ConversationsPath: convs})
	body := ts.startBody(model, map[string]any{"plugins": []any{map[string]any{"source": dir}}})
	ag := body["agent"].(map[string]any)
	ag["tools"] = append(ag["tools"].([]any), map[string]any{"name": "task_tool_set", "params": map[string]any{}})
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", body, &info)
	id := info["id"].(string)
	meta, err := os.ReadFile(filepath.Join(convs, strings.ReplaceAll(id, "-", ""), "meta.json"))
	if err != nil || !strings.Contains(string(meta), `"plugins":[{"source":`+mustJSON(t, dir)+`,"ref":null,"repo_path":null}]`) {
		t.Errorf("meta.json (%v): %s", err, meta)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ts.srv.Close(ctx); err != nil {
		t.Fatal(err)
	}

	ts2 := newTestServer(t, &server.Options{ConversationsPath: convs})
	ts2.must(200, "POST", "/api/conversations/"+id+"/events", userText("#help me", true), nil)
	ts2.waitStatus(id, "finished")
	var obs map[string]any
	for _, e := range ts2.eventsOf(id) {
		if e["kind"] == "ObservationEvent" {
			obs = e["observation"].(map[string]any)
		}
	}
	if obs == nil || obs["subagent"] != "plug-helper" || obs["status"] != "completed" || !strings.Contains(mustJSON(t, obs["content"]), "helped") {
		t.Errorf("task observation after the restart: %v", obs)
	}
}
