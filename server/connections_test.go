package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type connAnswer struct {
	ID          string  `json:"id"`
	DisplayName string  `json:"display_name"`
	Provider    string  `json:"provider"`
	BaseURL     *string `json:"base_url"`
	APIKeySet   bool    `json:"api_key_set"`
}

func TestProviderConnections(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ts := settingsServer(t, dir)
	var list []connAnswer
	if body := ts.must(200, "GET", "/api/llm/provider-connections", nil, &list); string(body) != "[]" {
		t.Fatalf("empty store: %s", body)
	}
	// Refused bodies lose nothing and echo no key.
	for _, c := range []struct {
		body string
		want string
	}{
		{`{}`, `["body","display_name"]`},
		{`{"display_name":"x"}`, `["body","api_key"]`},
		{`{"display_name":"x","api_key":"**********"}`, "not blank or redacted"},
		{`{"display_name":"x","api_key":"   "}`, "not blank or redacted"},
		{`{"display_name":"","api_key":"k"}`, "string_too_short"},
		{`{"display_name":"x","api_key":"k","extra":1}`, "extra_forbidden"},
		{`{`, "json"},
	} {
		if got, body := ts.do("POST", "/api/llm/provider-connections", c.body); got != 422 || !strings.Contains(string(body), c.want) {
			t.Errorf("POST %s: %d %s, want 422 with %s", c.body, got, body, c.want)
		}
	}
	var c connAnswer
	body := ts.must(201, "POST", "/api/llm/provider-connections", map[string]any{"display_name": "Team proxy", "api_key": "sk-shared-key", "base_url": "http://127.0.0.1:9/v1"}, &c)
	if c.ID == "" || c.Provider != "custom" || !c.APIKeySet || c.BaseURL == nil || strings.Contains(string(body), "sk-shared-key") {
		t.Fatalf("create: %s", body)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "provider-connections", "provider_connections.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "sk-shared-key") || !strings.Contains(string(raw), `"api_key": "gAAAA`) {
		t.Errorf("the key is not sealed on disk: %s", raw)
	}

	p := "/api/llm/provider-connections/" + c.ID
	if got, body := ts.do("PATCH", p, `{}`); got != 422 || !strings.Contains(string(body), "at least one") {
		t.Errorf("empty PATCH: %d %s", got, body)
	}
	if got, body := ts.do("PATCH", p, `{"api_key":null}`); got != 422 || !strings.Contains(string(body), "cannot be cleared") {
		t.Errorf("clearing the key: %d %s", got, body)
	}
	if got, body := ts.do("PATCH", p, `{"display_name":null}`); got != 422 {
		t.Errorf("a null display_name: %d %s", got, body)
	}
	if got, _ := ts.do("PATCH", "/api/llm/provider-connections/nope", `{"display_name":"y"}`); got != 404 {
		t.Errorf("PATCH of an unknown id: %d", got)
	}
	ts.must(200, "PATCH", p, map[string]any{"provider": "openai", "base_url": nil, "api_key": "sk-rotated"}, &c)
	if c.Provider != "openai" || c.BaseURL != nil || !c.APIKeySet || c.DisplayName != "Team proxy" {
		t.Errorf("after PATCH: %+v", c)
	}

	// A profile naming it keeps it.
	ts.must(201, "POST", "/api/profiles/fast", map[string]any{"llm": map[string]any{"model": "openai/gpt-4o", "provider_connection_id": c.ID}}, nil)
	if got, body := ts.do("DELETE", p, nil); got != 409 || !strings.Contains(string(body), "fast") {
		t.Errorf("DELETE of a used connection: %d %s", got, body)
	}
	ts.must(200, "DELETE", "/api/profiles/fast", nil, nil)
	var gone connAnswer
	ts.must(200, "DELETE", p, nil, &gone)
	if gone.ID != c.ID || gone.APIKeySet {
		t.Errorf("DELETE answer: %+v", gone)
	}
	if got, _ := ts.do("DELETE", p, nil); got != 404 {
		t.Errorf("second DELETE: %d", got)
	}
	data := ts.must(200, "GET", "/api/llm/provider-connections", nil, nil)
	if err := json.Unmarshal(data, &list); err != nil || len(list) != 0 {
		t.Errorf("after delete: %s", data)
	}
	// Without the key: 401.
	ts.key = ""
	if got, _ := ts.do("GET", "/api/llm/provider-connections", nil); got != 401 {
		t.Errorf("without the key: %d", got)
	}
}
