package server_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server"
)

// The OpenHands app sends an agent whose condenser summarises with its own
// copy of the LLM, key included. That key is a secret like the agent's:
// never in a response, nor in clear in the conversation's files.
func TestCondenserKeyNeverReturned(t *testing.T) {
	const key = "sk-condenser-7f3a"
	model := llmtest.NewChat(t, llmtest.Reply{Text: "Hi."})
	ts := newTestServer(t, &server.Options{SecretKey: "server-secret-key"})
	body := ts.startBody(model, nil)
	body["agent"].(map[string]any)["condenser"] = map[string]any{
		"kind": "LLMSummarizingCondenser", "max_size": 120, "keep_first": 4,
		"llm": map[string]any{"model": "openai/scripted", "api_key": key, "usage_id": "condenser"},
	}
	var info map[string]any
	created := ts.must(201, "POST", "/api/conversations", body, &info)
	id := info["id"].(string)
	got := ts.must(200, "GET", "/api/conversations/"+id, nil, nil)
	search := ts.must(200, "GET", "/api/conversations/"+id+"/events/search", nil, nil)
	for what, b := range map[string][]byte{"start": created, "get": got, "events": search} {
		if bytes.Contains(b, []byte(key)) {
			t.Errorf("the %s response holds the condenser's key: %s", what, b)
		}
	}
	if !bytes.Contains(created, []byte(`"keep_first":4`)) {
		t.Errorf("the condenser is not in the answer: %s", created)
	}
	filepath.WalkDir(ts.opts.ConversationsPath, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(key)) {
			t.Errorf("%s holds the condenser's key in clear", p)
		}
		return nil
	})
}
