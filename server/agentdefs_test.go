package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/tools/task"
)

// A start request's agent_definitions are sub-agents its task tool can
// run, as in the reference: the model is offered the definition (its
// name and description in the task tool), a task call with its
// subagent_type runs a sub-agent with the definition's system prompt, and
// the sub-agent's answer comes back to the parent. meta.json keeps the
// definitions; a bad one is a 422 naming agent_definitions.
func TestAgentDefinitions(t *testing.T) {
	const name = "colour-expert-test"
	t.Cleanup(func() { task.Unregister(name) })
	pb, err := llmtest.NewPlaybook(
		llmtest.Rule{Name: "sub", System: "COLOUR-EXPERT-PROMPT", Replies: []llmtest.Reply{{Text: "Vermilion."}}, Loop: true},
		llmtest.Rule{Name: "parent", FirstUser: "#pick", Replies: []llmtest.Reply{
			{ToolCalls: []llmtest.ToolCall{{Name: "task", Arguments: `{"description":"ask the expert","prompt":"Name one warm colour.","subagent_type":"` + name + `","security_risk":"LOW"}`}}},
			{Text: "The expert said vermilion."},
		}},
	)
	if err != nil {
		t.Fatal(err)
	}
	model := llmtest.NewResponder(t, pb.Respond, nil)
	ts := newTestServer(t, nil)
	body := ts.startBody(model, map[string]any{
		"agent_definitions": []any{map[string]any{
			"name": name, "description": "Knows every colour by name.", "tools": []any{},
			"system_prompt": "You are COLOUR-EXPERT-PROMPT.",
		}},
		"initial_message": userText("#pick a colour", true),
	})
	ag := body["agent"].(map[string]any)
	ag["tools"] = append(ag["tools"].([]any), map[string]any{"name": "task_tool_set", "params": map[string]any{}})
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", body, &info)
	id := info["id"].(string)
	ts.waitStatus(id, "finished")

	var offered, ranSub bool
	for _, r := range model.Requests() {
		raw := string(r.RawBody)
		if strings.Contains(raw, "#pick") && strings.Contains(raw, name) && strings.Contains(raw, "Knows every colour by name.") {
			offered = true
		}
		if strings.Contains(raw, "COLOUR-EXPERT-PROMPT") {
			ranSub = true
		}
	}
	if !offered || !ranSub {
		t.Errorf("definition offered to the model: %v; its sub-agent ran: %v", offered, ranSub)
	}
	var obs map[string]any
	for _, e := range ts.eventsOf(id) {
		if e["kind"] == "ObservationEvent" {
			obs = e["observation"].(map[string]any)
		}
	}
	if obs == nil || obs["kind"] != "TaskObservation" || obs["subagent"] != name || obs["status"] != "completed" || !strings.Contains(mustJSON(t, obs["content"]), "Vermilion.") {
		t.Errorf("task observation %v", obs)
	}
	meta, err := os.ReadFile(filepath.Join(ts.opts.ConversationsPath, strings.ReplaceAll(id, "-", ""), "meta.json"))
	if err != nil || !strings.Contains(string(meta), `"agent_definitions":[{"name":"`+name+`","description":"Knows every colour by name.","model":"inherit"`) {
		t.Errorf("meta.json (%v): %s", err, meta)
	}

	for _, bad := range []any{
		map[string]any{"description": "no name"},
		map[string]any{"name": "x", "max_iteration_per_run": 0},
		"not an object",
	} {
		code, out := ts.do("POST", "/api/conversations", ts.startBody(model, map[string]any{"agent_definitions": []any{bad}}))
		if code != 422 || !strings.Contains(string(out), "agent_definitions") {
			t.Errorf("%v: %d %s, want 422 naming agent_definitions", bad, code, out)
		}
	}
}
