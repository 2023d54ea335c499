package server_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/gohands/gohands/api/protocol"
	"github.com/gohands/gohands/server"
)

func TestLLMCatalog(t *testing.T) {
	ts := newTestServer(t, &server.Options{SessionAPIKeys: []string{"sess"}})
	var prov protocol.ProvidersResponse
	ts.must(200, "GET", "/api/llm/providers", nil, &prov)
	for _, p := range []string{"openai", "anthropic", "gemini", "bedrock"} {
		if !slices.Contains(prov.Providers, p) {
			t.Errorf("providers %v lack %s", prov.Providers, p)
		}
	}
	if !slices.IsSorted(prov.Providers) {
		t.Errorf("providers not sorted: %v", prov.Providers)
	}

	var all, anth protocol.ModelsResponse
	ts.must(200, "GET", "/api/llm/models", nil, &all)
	ts.must(200, "GET", "/api/llm/models?provider=anthropic", nil, &anth)
	if !slices.Contains(all.Models, "openai/gpt-4o") || !slices.Contains(all.Models, "anthropic/claude-sonnet-4-5") {
		t.Errorf("models lack openai/gpt-4o or anthropic/claude-sonnet-4-5: %v", all.Models)
	}
	if len(anth.Models) == 0 || len(anth.Models) >= len(all.Models) {
		t.Fatalf("anthropic's models: %v", anth.Models)
	}
	for _, m := range anth.Models {
		if !strings.HasPrefix(m, "anthropic/") {
			t.Errorf("provider=anthropic answered %s", m)
		}
	}
	var none protocol.ModelsResponse
	if ts.must(200, "GET", "/api/llm/models?provider=nosuch", nil, &none); none.Models == nil || len(none.Models) != 0 {
		t.Errorf("an unknown provider: %v, want []", none.Models)
	}

	var ver protocol.VerifiedModelsResponse
	ts.must(200, "GET", "/api/llm/models/verified", nil, &ver)
	if !slices.Contains(ver.Models["openai"], "gpt-4o") || !slices.Contains(ver.Models["anthropic"], "claude-sonnet-4-5") {
		t.Errorf("verified: %v", ver.Models)
	}

	// Without the key: 401, as every route but the health checks.
	ts.key = ""
	for _, p := range []string{"/api/llm/providers", "/api/llm/models", "/api/llm/models/verified", "/api/tools/catalog"} {
		if st, body := ts.do("GET", p, nil); st != 401 {
			t.Errorf("GET %s without the key: %d %s", p, st, body)
		}
	}
}

func TestToolCatalog(t *testing.T) {
	ts := newTestServer(t, &server.Options{SessionAPIKeys: []string{"sess"}})
	var cat protocol.ToolCatalogResponse
	ts.must(200, "GET", "/api/tools/catalog", nil, &cat)
	var names []string
	for _, e := range cat.Tools {
		names = append(names, e.Name)
	}
	var registered []string
	ts.must(200, "GET", "/api/tools/", nil, &registered)
	if !slices.Equal(names, registered) {
		t.Errorf("catalog %v, registered tools %v", names, registered)
	}
	byName := map[string]protocol.ToolCatalogEntry{}
	for _, e := range cat.Tools {
		byName[e.Name] = e
	}
	for _, n := range []string{"terminal", "file_editor", "task_tracker"} {
		if e := byName[n]; !e.UserSelectable || !e.InDefaultSet || !e.Usable || e.Description == "" {
			t.Errorf("%s: %+v", n, e)
		}
	}
	if e, ok := byName["finish"]; ok && e.UserSelectable {
		t.Errorf("finish is offered: %+v", e)
	}
}

func TestServerInfoRuntime(t *testing.T) {
	ts := newTestServer(t, &server.Options{SessionAPIKeys: []string{"sess"}})
	var info map[string]any
	ts.must(200, "GET", "/server_info", nil, &info)
	if info["conversation_runtime"] != "local" {
		t.Errorf("conversation_runtime %v", info["conversation_runtime"])
	}
	if rt, ok := info["available_conversation_runtimes"].([]any); !ok || len(rt) != 0 {
		t.Errorf("available_conversation_runtimes %v", info["available_conversation_runtimes"])
	}
	if v, ok := info["app_backend_ingress_url"]; !ok || v != nil {
		t.Errorf("app_backend_ingress_url %v (present %v)", v, ok)
	}
	caps, _ := info["capabilities"].([]any)
	if !slices.Contains(caps, any("tool_catalog_v1")) {
		t.Errorf("capabilities %v", caps)
	}
}
