package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server"
)

// The switch_llm tool (include_default_tools "SwitchLLMTool", as the
// OpenHands app sends it): the model asks for a saved profile, the next
// step runs on it and the stored agent has it; an unknown profile is an
// error observation listing the profiles, and the run goes on.
func TestSwitchLLMTool(t *testing.T) {
	call := func(name, args string) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: name, Arguments: args}}}
	}
	first := llmtest.NewChat(t,
		call("switch_llm", `{"profile_name":"nope","reason":"try"}`),
		call("switch_llm", `{"profile_name":"strong","reason":"hard step ahead"}`))
	strong := llmtest.NewChat(t, call("finish", `{"message":"done on the strong model"}`))
	var cfg llm.Config
	if err := json.Unmarshal([]byte(`{"model":"openai/strong-1","base_url":"`+strong.URL+`/v1","api_key":"k2","num_retries":0}`), &cfg); err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, &server.Options{Profiles: llm.Profiles{"strong": cfg}})
	body := ts.startBody(first, map[string]any{"initial_message": userText("#switch", true)})
	a := body["agent"].(map[string]any)
	a["include_default_tools"] = []any{"FinishTool", "ThinkTool", "SwitchLLMTool"}
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", body, &info)
	id := info["id"].(string)
	ts.waitStatus(id, "finished")

	req := first.Requests()[0]
	if tools, _ := json.Marshal(req.Body["tools"]); !strings.Contains(string(tools), `"name":"switch_llm"`) || !strings.Contains(string(tools), "- strong") {
		t.Fatalf("the model was not offered switch_llm with the profiles: %s", tools)
	}
	if n := len(strong.Requests()); n != 1 {
		t.Fatalf("the strong profile's model got %d requests, want the step after the switch", n)
	}
	var page struct {
		Items []map[string]any `json:"items"`
	}
	ts.must(200, "GET", "/api/conversations/"+id+"/events/search?kind=ObservationEvent&limit=100", nil, &page)
	var obs []map[string]any
	for _, e := range page.Items {
		if o, _ := e["observation"].(map[string]any); o["kind"] == "SwitchLLMObservation" {
			obs = append(obs, o)
		}
	}
	if len(obs) != 2 {
		t.Fatalf("%d SwitchLLMObservation events, want 2: %v", len(obs), page.Items)
	}
	if obs[0]["is_error"] != true || !strings.Contains(obs[0]["content"].([]any)[0].(map[string]any)["text"].(string), "strong") {
		t.Errorf("unknown profile: %v", obs[0])
	}
	if obs[1]["is_error"] != false || obs[1]["active_model"] != "openai/strong-1" || obs[1]["profile_name"] != "strong" || obs[1]["reason"] != "hard step ahead" {
		t.Errorf("switch: %v", obs[1])
	}
	ts.must(200, "GET", "/api/conversations/"+id, nil, &info)
	if m := info["agent"].(map[string]any)["llm"].(map[string]any)["model"]; m != "openai/strong-1" {
		t.Errorf("stored agent's model %v", m)
	}
}
