package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/gohands/gohands/llm/llmtest"
)

// A start request's client_tools are offered to the model with the
// client's schema as given; the model's call reaches the client over its
// socket as an ActionEvent of kind ClientAction_<name> and is acknowledged
// at once with a ClientToolObservation, as the reference 1.58.2 does; the
// client's answer (a message) reaches the model on the next run. The agent
// keeps the spec in its tools, and GET returns client_tools. Bad specs
// are a 422 naming client_tools.
func TestClientTools(t *testing.T) {
	spec := map[string]any{
		"name": "pick_color", "description": "Ask the user to pick a colour",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{
			"hint": map[string]any{"type": "string", "enum": []any{"warm", "cold"}},
		}, "required": []any{"hint"}},
	}
	model := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "pick_color", Arguments: `{"hint":"warm","security_risk":"LOW"}`}}},
		llmtest.Reply{Text: "I asked you for a colour."},
		llmtest.Reply{Text: "Red it is."},
	)
	ts := newTestServer(t, nil)
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{"client_tools": []any{spec}}), &info)
	id := info["id"].(string)
	if ct, _ := info["client_tools"].([]any); len(ct) != 1 || ct[0].(map[string]any)["name"] != "pick_color" {
		t.Errorf("client_tools %v", info["client_tools"])
	}
	var found bool
	for _, tl := range info["agent"].(map[string]any)["tools"].([]any) {
		tm := tl.(map[string]any)
		if tm["name"] == "pick_color" && tm["params"].(map[string]any)["spec"].(map[string]any)["name"] == "pick_color" {
			found = true
		}
	}
	if !found {
		t.Errorf("the agent's tools lack the client tool: %v", info["agent"].(map[string]any)["tools"])
	}

	c, err := dial(t, ts, "/sockets/events/"+id)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	ctx := context.Background()
	if f, err := readFrame(t, c); err != nil || f.Key != "full_state" {
		t.Fatalf("first frame %+v, %v", f, err)
	}
	c.Write(ctx, websocket.MessageText, []byte(`{"role":"user","content":[{"type":"text","text":"pick a colour"}]}`))
	var action, obs map[string]any
	for action == nil || obs == nil {
		_, data, err := readRaw(t, c)
		if err != nil {
			t.Fatalf("reading the socket: %v", err)
		}
		var e map[string]any
		json.Unmarshal(data, &e)
		switch e["kind"] {
		case "ActionEvent":
			action = e
		case "ObservationEvent":
			obs = e
		}
	}
	if a := action["action"].(map[string]any); a["kind"] != "ClientAction_pick_color" || a["hint"] != "warm" || action["tool_name"] != "pick_color" {
		t.Errorf("action %v", action)
	}
	o := obs["observation"].(map[string]any)
	if o["kind"] != "ClientToolObservation" || !strings.Contains(mustJSON(t, o["content"]), "Tool call dispatched to client.") || obs["action_id"] != action["id"] {
		t.Errorf("observation %v", obs)
	}
	ts.waitStatus(id, "finished")

	// The model was offered the tool with the client's constraints.
	tools := mustJSON(t, model.Requests()[0].Body["tools"])
	if !strings.Contains(tools, `"name":"pick_color"`) || !strings.Contains(tools, `"enum":["warm","cold"]`) {
		t.Errorf("tools offered: %s", tools)
	}
	// The client answers with a message; the model reads it.
	c.Write(ctx, websocket.MessageText, []byte(`{"role":"user","content":[{"type":"text","text":"red"}]}`))
	for {
		_, data, err := readRaw(t, c)
		if err != nil {
			t.Fatalf("reading the socket: %v", err)
		}
		if strings.Contains(string(data), "Red it is.") {
			break
		}
	}
	reqs := model.Requests()
	if last := string(reqs[len(reqs)-1].RawBody); len(reqs) != 3 || !strings.Contains(last, "Tool call dispatched to client.") || !strings.Contains(last, `"red"`) {
		t.Errorf("%d model calls; the last: %s", len(reqs), last)
	}

	for name, bad := range map[string][]any{
		"duplicate":  {spec, spec},
		"not object": {map[string]any{"name": "x", "description": "d", "parameters": map[string]any{"type": "string"}}},
		"collides":   {map[string]any{"name": "terminal", "description": "d"}},
		"no name":    {map[string]any{"description": "d"}},
		"extra key":  {map[string]any{"name": "x", "description": "d", "colour": 1}},
	} {
		code, out := ts.do("POST", "/api/conversations", ts.startBody(model, map[string]any{"client_tools": bad}))
		if code != 422 || !strings.Contains(string(out), "client_tools") {
			t.Errorf("%s: %d %s, want 422 naming client_tools", name, code, out)
		}
	}
}

func readRaw(t *testing.T, c *websocket.Conn) (websocket.MessageType, []byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.Read(ctx)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
