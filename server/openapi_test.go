package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
)

// TestOpenAPIStartExampleRuns sends the start route's example request from
// /openapi.json as it is there and expects a conversation that runs to
// finished. The example names anthropic/claude-sonnet-4-5 with no base
// URL, so the anthropic route is pointed at a scripted model for the
// test; it cannot run in parallel with tests that read the route table
// (it is not parallel, so it runs before any parallel test resumes).
func TestOpenAPIStartExampleRuns(t *testing.T) {
	model := llmtest.NewAnthropic(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"The test passes."}`}}})
	ep, err := llm.Resolve(&llm.Config{Model: "anthropic/x"})
	if err != nil {
		t.Fatal(err)
	}
	llm.RegisterRoute("anthropic", llm.Route{Provider: ep.Provider, API: ep.API, BaseURL: model.URL, AuthHeader: ep.AuthHeader, AuthPrefix: ep.AuthPrefix})
	t.Cleanup(func() {
		llm.RegisterRoute("anthropic", llm.Route{Provider: ep.Provider, API: ep.API, BaseURL: ep.BaseURL, AuthHeader: ep.AuthHeader, AuthPrefix: ep.AuthPrefix})
	})
	ts := newTestServer(t, nil)
	var doc struct {
		Paths map[string]map[string]struct {
			RequestBody struct {
				Content map[string]struct {
					Example json.RawMessage `json:"example"`
				} `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	ts.must(200, "GET", "/openapi.json", nil, &doc)
	example := doc.Paths["/api/conversations"]["post"].RequestBody.Content["application/json"].Example
	if len(example) == 0 {
		t.Fatal("POST /api/conversations has no example request")
	}
	for _, name := range []string{"Agent", "ACPAgent", "LLM"} {
		if doc.Components.Schemas[name] == nil {
			t.Errorf("/openapi.json has no %s schema", name)
		}
	}

	var info map[string]any
	ts.must(201, "POST", "/api/conversations", []byte(example), &info)
	id, _ := info["id"].(string)
	done := ts.waitStatus(id, "finished", "error", "stuck")
	if done["execution_status"] != "finished" {
		t.Fatalf("status %v, want finished", done["execution_status"])
	}
	reqs := model.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1", len(reqs))
	}
	if got := reqs[0].Header.Get("x-api-key"); got != "your-api-key" {
		t.Errorf("x-api-key %q, want the example's key", got)
	}
	// The example's working directory is relative, as the reference's
	// is: the server places it under its own directory.
	wd, _ := info["workspace"].(map[string]any)["working_dir"].(string)
	if fi, err := os.Stat(wd); err != nil || !fi.IsDir() || !filepath.IsAbs(wd) {
		t.Errorf("the example's working directory %q: %v", wd, err)
	}
}

// TestStartRefusesBadHookConfigAndClientTools: a hook_config that is not
// a hook configuration, or a client tool that is not a tool spec, is a 422
// at start (a bad hook_config was a 500 when the agent started; Schemathesis
// found both answered back against the documented ConversationInfo), and
// the conversation is not created.
func TestStartRefusesBadHookConfigAndClientTools(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil)
	model := llmtest.NewChat(t)
	for _, hc := range []string{`[null, null]`, `"x"`, `{"pre_tool_use": 1}`, `{"NoSuchEvent": []}`} {
		code, body := ts.do("POST", "/api/conversations", ts.startBody(model, map[string]any{"hook_config": json.RawMessage(hc)}))
		if code != 422 {
			t.Errorf("hook_config %s: status %d, want 422: %s", hc, code, body)
		}
	}
	for _, ct := range []string{`[[null, null]]`, `[null]`, `[{"name": "x"}]`, `[{"name": "x", "description": "y", "parameters": [1]}]`} {
		code, body := ts.do("POST", "/api/conversations", ts.startBody(model, map[string]any{"client_tools": json.RawMessage(ct)}))
		if code != 422 {
			t.Errorf("client_tools %s: status %d, want 422: %s", ct, code, body)
		}
	}
	var page struct {
		Items []any `json:"items"`
	}
	ts.must(200, "GET", "/api/conversations/search", nil, &page)
	if len(page.Items) != 0 {
		t.Errorf("%d conversations after refused starts", len(page.Items))
	}
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{
		"hook_config":  map[string]any{"pre_tool_use": []any{}},
		"client_tools": []any{map[string]any{"name": "pick", "description": "Pick a file.", "parameters": map[string]any{"type": "object"}}},
	}), nil)
}

// TestAskAgentModelFailureIs502: ask_agent whose model cannot be reached
// answers 502 with the model's error (documented), not a 500: Schemathesis
// found the 500 once it could start conversations.
func TestAskAgentModelFailureIs502(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil)
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	body := map[string]any{
		"agent":     pythonAgent(t, gone.URL+"/v1"),
		"workspace": map[string]any{"working_dir": t.TempDir(), "kind": "LocalWorkspace"},
	}
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", body, &info)
	code, data := ts.do("POST", "/api/conversations/"+info["id"].(string)+"/ask_agent", map[string]any{"question": "Why?"})
	if code != http.StatusBadGateway || !strings.Contains(string(data), "model failed") {
		t.Errorf("status %d, want 502 naming the model: %s", code, data)
	}
}

// TestOpenAPINullableAndArchiveTypes: a pointer to a struct the server
// answers null (runtime_info's runtime_error) is documented nullable, and
// the archive's 200 names the two types it sends; Schemathesis found both
// answers outside the document.
func TestOpenAPINullableAndArchiveTypes(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil)
	type prop struct {
		Ref      string `json:"$ref"`
		Nullable bool   `json:"nullable"`
		AllOf    []struct {
			Ref string `json:"$ref"`
		} `json:"allOf"`
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Content map[string]json.RawMessage `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]prop `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	ts.must(200, "GET", "/openapi.json", nil, &doc)
	for _, c := range []struct{ schema, prop, ref string }{
		{"ServerRuntimeInfo", "runtime_error", "ServerRuntimeError"},
		{"ServerConversationInfo", "runtime_info", "ServerRuntimeInfo"},
	} {
		p := doc.Components.Schemas[c.schema].Properties[c.prop]
		if !p.Nullable || len(p.AllOf) != 1 || p.AllOf[0].Ref != "#/components/schemas/"+c.ref {
			t.Errorf("%s.%s documented as %+v, want a nullable %s", c.schema, c.prop, p, c.ref)
		}
	}
	for _, path := range []string{"/api/file/archive", "/api/conversations/{runtime_conversation_id}/file/archive"} {
		content := doc.Paths[path]["get"].Responses["200"].Content
		if len(content) != 2 || content["application/gzip"] == nil || content["text/x-patch"] == nil {
			t.Errorf("GET %s 200 documents %d types, want application/gzip and text/x-patch", path, len(content))
		}
	}
}
