package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm/llmtest"
)

// TestObservabilityFields: the start request's observability fields are
// validated as the reference validates them (422 naming the field), taken
// from the X-OpenHands-Observability-* headers when the body leaves them
// out, and stored in meta.json.
func TestObservabilityFields(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, nil)
	model := llmtest.NewChat(t)
	for field, bad := range map[string]any{
		"observability_span_name":           "has space",
		"observability_tags":                []any{"ok", ""},
		"observability_metadata":            map[string]any{"mixed": []any{1, 1.5}},
		"observability_parent_span_context": 7,
	} {
		code, out := ts.do("POST", "/api/conversations", ts.startBody(model, map[string]any{field: bad}))
		if code != 422 || !strings.Contains(string(out), field) {
			t.Errorf("%s=%v: %d %s, want 422 naming the field", field, bad, code, out)
		}
	}

	body, _ := json.Marshal(ts.startBody(model, map[string]any{
		"observability_tags":     []string{"from-body"},
		"observability_metadata": map[string]any{"team": "infra", "n": 3, "flags": []bool{true, false}},
	}))
	req, _ := http.NewRequest("POST", ts.http.URL+"/api/conversations", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenHands-Observability-Span-Name", "nightly.job")
	req.Header.Set("X-OpenHands-Observability-Tags", "ignored, for the body has tags")
	req.Header.Set("X-OpenHands-Observability-Metadata", `{"team": "header", "region": "eu"}`)
	req.Header.Set("X-OpenHands-Observability-Parent-Span-Context", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var info map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil || resp.StatusCode != 201 {
		t.Fatalf("start: %d %v %v", resp.StatusCode, err, info)
	}
	data, err := os.ReadFile(filepath.Join(ts.opts.ConversationsPath, strings.ReplaceAll(info["id"].(string), "-", ""), "meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	if err := json.Unmarshal(data, &meta); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"observability_span_name":           `"nightly.job"`,
		"observability_tags":                `["from-body"]`,
		"observability_metadata":            `{"flags":[true,false],"n":3,"region":"eu","team":"infra"}`,
		"observability_parent_span_context": `"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"`,
	}
	for k, w := range want {
		if got, _ := json.Marshal(meta[k]); string(got) != w {
			t.Errorf("meta.json %s = %s, want %s", k, got, w)
		}
	}
}
