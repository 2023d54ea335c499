package pyclient_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
)

// gatewayPlaybook answers the gateway client's requests. The system
// pattern checks that the request's system and developer messages and its
// instructions reached the agent's system prompt.
const gatewayPlaybook = `{"rules": [
 {"name": "chat", "system": "PIRATE-MODE", "first_user": "#gw-chat", "last_user": "#gw-chat",
  "replies": [{"usage": {"prompt_tokens": 11, "completion_tokens": 3}, "tool_calls": [{"name": "finish", "arguments": {"message": "Four, matey."}}]}]},
 {"name": "again", "last_user": "#gw-again",
  "replies": [{"tool_calls": [{"name": "finish", "arguments": {"message": "Still four."}}]}], "loop": true},
 {"name": "stream", "first_user": "#gw-stream",
  "replies": [{"usage": {"prompt_tokens": 5, "completion_tokens": 2}, "tool_calls": [{"name": "finish", "arguments": {"message": "One, two, three."}}]}]},
 {"name": "responses", "system": "PIRATE-MODE", "first_user": "#gw-resp say",
  "replies": [{"tool_calls": [{"name": "finish", "arguments": {"message": "Ahoy!"}}]}]},
 {"name": "responses-items", "system": "PIRATE-MODE", "first_user": "#gw-resp2",
  "replies": [{"tool_calls": [{"name": "finish", "arguments": {"message": "Ahoy again!"}}]}]}
]}`

// TestGatewayOpenAIClient drives gohands serve's OpenAI-compatible
// gateway with OpenAI's own Python client: the models list, a chat
// completion (its conversation continued by id), a streamed one with
// usage, two responses (a string input with instructions, and items with
// a developer message), and the errors an OpenAI client sees (unknown
// model 404, a streamed response 400, a wrong key 401).
func TestGatewayOpenAIClient(t *testing.T) {
	t.Parallel()
	py := testenv.OpenAIClientPython(t)
	p, err := llmtest.ParsePlaybook([]byte(gatewayPlaybook))
	if err != nil {
		t.Fatal(err)
	}
	model := llmtest.NewResponder(t, p.Respond, nil)
	home := t.TempDir()
	profiles := map[string]any{"llm_profiles": map[string]any{"scripted": map[string]any{
		"model": "openai/scripted", "base_url": model.URL + "/v1", "api_key": "sk-scripted", "num_retries": 0,
	}}}
	b, _ := json.Marshal(profiles)
	if err := os.MkdirAll(filepath.Join(home, ".gohands"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gohands", "settings.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startGohandsServer(t, "HOME="+home, "XDG_CONFIG_HOME=", "OH_PERSISTENCE_DIR="+filepath.Join(home, ".openhands"))
	cmd := exec.CommandContext(t.Context(), py, filepath.Join("testdata", "gateway_client.py"), srv.URL, apiKey)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("gateway_client.py: %v\n%s\n%s", err, out, tail(stderr, 6000))
	}
	var got struct {
		Models []string `json:"models"`
		Chat   struct {
			Content        string `json:"content"`
			Role           string `json:"role"`
			FinishReason   string `json:"finish_reason"`
			Object         string `json:"object"`
			ConversationID string `json:"conversation_id"`
			TotalTokens    int    `json:"total_tokens"`
		} `json:"chat"`
		Again struct {
			Content        string `json:"content"`
			ConversationID string `json:"conversation_id"`
		} `json:"again"`
		Stream struct {
			Text         string `json:"text"`
			Usage        int    `json:"usage"`
			FinishReason string `json:"finish_reason"`
		} `json:"stream"`
		Responses struct {
			Text   string `json:"text"`
			Status string `json:"status"`
			Object string `json:"object"`
		} `json:"responses"`
		ResponsesItems struct {
			Text string `json:"text"`
		} `json:"responses_items"`
		Errors map[string]int `json:"errors"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	t.Logf("client saw: %s", out)

	if len(got.Models) != 1 || got.Models[0] != "openhands_scripted" {
		t.Errorf("models = %v", got.Models)
	}
	if got.Chat.Content != "Four, matey." || got.Chat.Role != "assistant" || got.Chat.FinishReason != "stop" || got.Chat.Object != "chat.completion" || got.Chat.ConversationID == "" {
		t.Errorf("chat = %+v", got.Chat)
	}
	if got.Chat.TotalTokens != 14 {
		t.Errorf("chat usage total = %d, want 14 (the model's 11 + 3)", got.Chat.TotalTokens)
	}
	if got.Again.Content != "Still four." || got.Again.ConversationID != got.Chat.ConversationID {
		t.Errorf("continued chat = %+v (first conversation %s)", got.Again, got.Chat.ConversationID)
	}
	if got.Stream.Text != "One, two, three." || got.Stream.Usage != 7 || got.Stream.FinishReason != "stop" {
		t.Errorf("stream = %+v", got.Stream)
	}
	if got.Responses.Text != "Ahoy!" || got.Responses.Status != "completed" || got.Responses.Object != "response" {
		t.Errorf("responses = %+v", got.Responses)
	}
	if got.ResponsesItems.Text != "Ahoy again!" {
		t.Errorf("responses with items = %+v", got.ResponsesItems)
	}
	if got.Errors["unknown_model"] != 404 || got.Errors["responses_stream"] != 400 || got.Errors["wrong_key"] != 401 {
		t.Errorf("errors = %v", got.Errors)
	}
}
