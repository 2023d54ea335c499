package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server"
)

// TestGatewayActiveAgentProfile runs the OpenAI-compatible gateway on the
// active agent profile, as the reference 1.58.2 does: a chat completion
// for openhands_beta runs the active profile's agent (its tools) on the
// LLM profile beta instead of the profile's own alpha, with the request's
// system message appended to the agent's; the conversation records the
// launch (profile id, llm_profile_ref beta). A model that names no LLM
// profile is 404, and with no agent profile to activate the gateway
// answers 409.
func TestGatewayActiveAgentProfile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ts := settingsServer(t, dir)
	alpha := llmtest.NewChat(t) // any request to it fails the test
	beta := llmtest.NewChat(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message": "Four."}`}}})
	for name, m := range map[string]*llmtest.Server{"alpha": alpha, "beta": beta} {
		ts.must(201, "POST", "/api/profiles/"+name, map[string]any{"llm": map[string]any{
			"model": "openai/" + name, "base_url": m.URL + "/v1", "api_key": "sk-" + name, "num_retries": 0}, "include_secrets": true}, nil)
	}
	ts.must(201, "POST", "/api/agent-profiles/p1", map[string]any{"llm_profile_ref": "alpha", "revision": 2,
		"tools": []any{map[string]any{"name": "terminal"}}}, nil)
	var list agentProfileList
	ts.must(200, "GET", "/api/agent-profiles", nil, &list)
	p1 := list.id("p1")
	ts.must(200, "POST", "/api/agent-profiles/"+p1+"/activate", nil, nil)

	chat := map[string]any{"model": "openhands_beta", "messages": []any{
		map[string]any{"role": "system", "content": "Answer like a PIRATE."},
		map[string]any{"role": "user", "content": "What is 2+2?"},
	}}
	st, body, hdr := ts.doHeader("POST", "/v1/chat/completions", chat, nil)
	if st != 200 {
		t.Fatalf("chat completion: %d %s", st, body)
	}
	var out struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
	}
	json.Unmarshal(body, &out)
	if len(out.Choices) != 1 || out.Choices[0].Message.Content != "Four." {
		t.Errorf("answer: %s", body)
	}
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Function struct{ Name string } `json:"function"`
		} `json:"tools"`
	}
	if err := beta.LastRequest().Decode(&req); err != nil {
		t.Fatal(err)
	}
	system, _ := json.Marshal(req.Messages[0].Content)
	var tools []string
	for _, tl := range req.Tools {
		tools = append(tools, tl.Function.Name)
	}
	if req.Model != "beta" || req.Messages[0].Role != "system" || !strings.Contains(string(system), "Answer like a PIRATE.") {
		t.Errorf("the model call: model %q, first message %s %s", req.Model, req.Messages[0].Role, system)
	}
	if !strings.Contains(strings.Join(tools, ","), "terminal") || strings.Contains(strings.Join(tools, ","), "file_editor") {
		t.Errorf("the profile's tools (terminal only), offered: %v", tools)
	}

	var info struct {
		Agent struct {
			LLM struct{ Model string } `json:"llm"`
		} `json:"agent"`
		Launched  map[string]any `json:"launched_agent_profile"`
		Additions map[string]any `json:"agent_launch_additions"`
	}
	id := hdr.Get("X-OpenHands-ServerConversation-ID")
	ts.must(200, "GET", "/api/conversations/"+id, nil, &info)
	if info.Agent.LLM.Model != "openai/beta" || info.Launched["agent_profile_id"] != p1 || info.Launched["revision"] != 2.0 || info.Launched["llm_profile_ref"] != "beta" {
		t.Errorf("the conversation: agent model %q, launched_agent_profile %v", info.Agent.LLM.Model, info.Launched)
	}

	for _, c := range []struct {
		model string
		want  string
	}{
		{"gpt-4o", `{"detail":"Unknown OpenHands model 'gpt-4o'. Use GET /v1/models."}`},
		{"openhands_gone", `{"detail":"Profile 'gone' not found"}`},
	} {
		chat["model"] = c.model
		if st, body, _ := ts.doHeader("POST", "/v1/chat/completions", chat, nil); st != 404 || string(body) != c.want {
			t.Errorf("%s: %d %s", c.model, st, body)
		}
	}

	// No profile can be active: default is unreadable and there is no
	// other.
	ts.must(200, "DELETE", "/api/agent-profiles/p1", nil, nil)
	if err := os.WriteFile(filepath.Join(dir, "agent-profiles", "default.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	chat["model"] = "openhands_beta"
	for _, path := range []string{"/v1/chat/completions", "/v1/responses"} {
		b := chat
		if path == "/v1/responses" {
			b = map[string]any{"model": "openhands_beta", "input": "What is 2+2?"}
		}
		st, body, _ := ts.doHeader("POST", path, b, nil)
		if st != 409 || string(body) != `{"detail":"No active Agent Profile; activate one to use the gateway"}` {
			t.Errorf("%s without an active agent profile: %d %s", path, st, body)
		}
	}
	if n := len(beta.Requests()); n != 1 {
		t.Errorf("the model was called %d times, want 1", n)
	}
}

// TestGatewayOptionsProfile: an LLM profile of Options.Profiles (not
// stored) is a gateway model too, and the active agent profile (default,
// made from the settings) launches on it; its key reaches the model.
func TestGatewayOptionsProfile(t *testing.T) {
	t.Parallel()
	gamma := llmtest.NewChat(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message": "From gamma."}`}}})
	var cfg llm.Config
	if err := json.Unmarshal([]byte(`{"model":"openai/gamma","base_url":"`+gamma.URL+`/v1","api_key":"sk-gamma","num_retries":0}`), &cfg); err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, &server.Options{Profiles: llm.Profiles{"gamma": cfg}})
	var models struct {
		Data []struct{ ID string } `json:"data"`
	}
	ts.must(200, "GET", "/v1/models", nil, &models)
	if len(models.Data) != 1 || models.Data[0].ID != "openhands_gamma" {
		t.Errorf("models: %+v", models)
	}
	data := ts.must(200, "POST", "/v1/responses", map[string]any{"model": "openhands_gamma", "input": "Who answers?"}, nil)
	if !strings.Contains(string(data), `"text":"From gamma."`) {
		t.Errorf("response: %s", data)
	}
	if auth := gamma.LastRequest().Header.Get("Authorization"); auth != "Bearer sk-gamma" {
		t.Errorf("the model call's key: %q", auth)
	}
}
