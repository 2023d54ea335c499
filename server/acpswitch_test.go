package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
)

// POST /api/conversations/{id}/switch_acp_model on a conversation whose
// ACP server is the scripted peer: before the first turn the model is
// recorded and selected when the session starts; after it the live
// session is asked (session/set_model); the stored agent and the
// conversation's info name the new model. A model the server refuses,
// an empty one and a conversation of another agent answer 400, an
// unknown conversation 404 and a body without model 422, as the
// reference's do.
func TestSwitchACPModel(t *testing.T) {
	t.Parallel()
	py := testenv.Program(t, "python3")
	script, err := filepath.Abs("testdata/acp_models_peer.py")
	if err != nil {
		t.Fatal(err)
	}
	peerLog := filepath.Join(t.TempDir(), "peer.log")
	ts := newTestServer(t, nil)
	agent := map[string]any{
		"kind": "ACPAgent", "acp_command": []string{py, script},
		"acp_prompt_timeout": 120.0, "acp_startup_timeout": 120.0,
		"llm": map[string]any{"model": "acp-managed", "usage_id": "acp-managed"},
	}
	secrets := map[string]any{}
	for k, v := range map[string]string{"PEER_LOG": peerLog, "PEER_AUTH": "1", "PEER_NAME": "codex-acp-peer"} {
		secrets[k] = map[string]any{"kind": "StaticSecret", "value": v}
	}
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", map[string]any{
		"agent": agent, "secrets": secrets,
		"workspace": map[string]any{"working_dir": t.TempDir(), "kind": "LocalWorkspace"},
	}, &info)
	id, _ := info["id"].(string)
	sw := "/api/conversations/" + id + "/switch_acp_model"
	peerCalls := func() string {
		b, _ := os.ReadFile(peerLog)
		return strings.Join(strings.Fields(strings.ReplaceAll(string(b), "start\n", "")), " ")
	}
	modelOf := func() (acpModel, current any, switchable any) {
		ts.must(200, "GET", "/api/conversations/"+id, nil, &info)
		a, _ := info["agent"].(map[string]any)
		return a["acp_model"], info["current_model_id"], info["supports_runtime_model_switch"]
	}

	ts.must(200, "POST", sw, map[string]any{"model": "big"}, nil)
	if m, cur, _ := modelOf(); m != "big" || cur != "big" {
		t.Fatalf("before the first turn: acp_model %v, current_model_id %v, want big", m, cur)
	}
	if got := peerCalls(); got != "" {
		t.Fatalf("the server was asked %q before any session", got)
	}
	ts.must(200, "POST", "/api/conversations/"+id+"/events", map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "hi"}}, "run": true}, nil)
	ts.waitStatus(id, "finished", "error")
	if got := peerCalls(); got != "set_model big" {
		t.Fatalf("the session was asked %q, want set_model big", got)
	}
	if _, _, sw := modelOf(); sw != true {
		t.Errorf("supports_runtime_model_switch %v for a codex-acp server, want true", sw)
	}
	if ms, _ := info["available_models"].([]any); len(ms) != 2 || ms[1].(map[string]any)["model_id"] != "big" || ms[1].(map[string]any)["description"] != "Slow" {
		t.Errorf("available_models %v, want the session's fast and big", info["available_models"])
	}

	ts.must(200, "POST", sw, map[string]any{"model": "fast"}, nil)
	if got := peerCalls(); got != "set_model big set_model fast" {
		t.Fatalf("live switch: the session was asked %q", got)
	}
	for _, bad := range []string{"huge", " "} {
		if code, body := ts.do("POST", sw, map[string]any{"model": bad}); code != 400 || !strings.Contains(string(body), "detail") {
			t.Errorf("switch to %q: %d %s, want 400", bad, code, body)
		}
	}
	if m, cur, _ := modelOf(); m != "fast" || cur != "fast" {
		t.Errorf("after the switches: acp_model %v, current_model_id %v, want fast", m, cur)
	}
	if code, body := ts.do("POST", sw, map[string]any{}); code != 422 || !strings.Contains(string(body), "model") {
		t.Errorf("no model: %d %s, want 422", code, body)
	}
	if code, _ := ts.do("POST", "/api/conversations/00000000-0000-4000-8000-000000000000/switch_acp_model", map[string]any{"model": "fast"}); code != 404 {
		t.Errorf("unknown conversation: %d, want 404", code)
	}

	// A conversation of the LLM agent has no ACP model.
	model := llmtest.NewChat(t)
	var other map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, nil), &other)
	code, body := ts.do("POST", "/api/conversations/"+other["id"].(string)+"/switch_acp_model", map[string]any{"model": "fast"})
	if code != 400 || !strings.Contains(string(body), "only supported for ACP conversations") {
		t.Errorf("LLM agent's conversation: %d %s, want 400", code, body)
	}
}
