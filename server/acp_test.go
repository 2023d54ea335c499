package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/gohands/gohands/agent/acp" // kind ACPAgent
	"github.com/gohands/gohands/agent/acp/acptest"
	"github.com/gohands/gohands/llm/llmtest"
)

// A client creates a conversation whose agent is an ACPAgent, as the
// reference's Python client sends it (its model_dump, the server's
// credentials in secrets): the external agent, Claude Code pointed at
// the scripted model, writes a file; its tool calls and the turn's
// FinishAction are the conversation's events.
func TestACPAgentConversation(t *testing.T) {
	work := t.TempDir()
	target := filepath.Join(work, "hello.txt")
	model := llmtest.NewAnthropic(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "Write", Arguments: llmtest.Args(map[string]any{"file_path": target, "content": "hi\n"})}}},
		llmtest.Reply{Text: "Wrote hello.txt."},
	)
	claude := acptest.NewClaude(t, model)

	ts := newTestServer(t, nil)
	// The reference's ACPAgent(acp_command=[node, script]).model_dump().
	agent := map[string]any{
		"kind": "ACPAgent", "acp_command": []string{claude.Node, claude.Script}, "acp_args": []string{},
		"acp_server": nil, "acp_session_mode": nil, "acp_prompt_timeout": 120.0, "acp_startup_timeout": 120.0,
		"acp_model": nil, "acp_resume_session_id": nil, "acp_isolate_data_dir": false,
		"llm":   map[string]any{"model": "acp-managed", "usage_id": "acp-managed"},
		"tools": []any{}, "include_default_tools": []any{}, "mcp_config": map[string]any{},
	}
	secrets := map[string]any{}
	for k, v := range claude.Env {
		secrets[k] = map[string]any{"kind": "StaticSecret", "value": v}
	}
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", map[string]any{
		"agent":           agent,
		"workspace":       map[string]any{"working_dir": work, "kind": "LocalWorkspace"},
		"secrets":         secrets,
		"initial_message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "write hello.txt"}}, "run": true},
	}, &info)
	id, _ := info["id"].(string)
	if a, _ := info["agent"].(map[string]any); a["kind"] != "ACPAgent" {
		t.Errorf("agent in the response: %v", info["agent"])
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		ts.must(200, "GET", "/api/conversations/"+id, nil, &info)
		st := info["execution_status"]
		if st == "finished" || st == "error" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status %v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var page struct {
		Items []map[string]any `json:"items"`
	}
	ts.must(200, "GET", "/api/conversations/"+id+"/events/search?limit=100", nil, &page)
	var kinds []string
	var answer string
	for _, e := range page.Items {
		kinds = append(kinds, e["kind"].(string))
		if a, ok := e["action"].(map[string]any); ok && a["kind"] == "FinishAction" {
			answer, _ = a["message"].(string)
		}
	}
	if info["execution_status"] != "finished" {
		b, _ := json.Marshal(page.Items)
		t.Fatalf("status %v; events %s", info["execution_status"], b)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "hi\n" {
		t.Errorf("hello.txt: %q, %v", b, err)
	}
	if answer != "Wrote hello.txt." {
		t.Errorf("answer %q; events %v", answer, kinds)
	}
	if !strings.Contains(strings.Join(kinds, " "), "ACPToolCallEvent") {
		t.Errorf("no ACPToolCallEvent among %v", kinds)
	}
	for _, e := range page.Items {
		b, _ := json.Marshal(e)
		if strings.Contains(string(b), "sk-ant-test") {
			t.Errorf("the API key is in an event: %s", b)
		}
	}
}
