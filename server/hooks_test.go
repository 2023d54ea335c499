package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/gohands/gohands/server"
)

func TestHooksRoute(t *testing.T) {
	ts := newTestServer(t, &server.Options{SessionAPIKeys: []string{"sess"}})
	proj := t.TempDir()
	var got map[string]json.RawMessage
	ts.must(200, "POST", "/api/hooks", map[string]any{"project_dir": proj}, &got)
	if string(got["hook_config"]) != "null" {
		t.Errorf("no hooks.json: %s", got["hook_config"])
	}
	ts.must(200, "POST", "/api/hooks", map[string]any{}, &got)
	if string(got["hook_config"]) != "null" {
		t.Errorf("no project_dir: %s", got["hook_config"])
	}
	if err := os.MkdirAll(filepath.Join(proj, ".openhands"), 0o755); err != nil {
		t.Fatal(err)
	}
	hooks := `{"hooks":{"PreToolUse":[{"matcher":"terminal","hooks":[{"type":"command","command":"echo hi"}]}]}}`
	if err := os.WriteFile(filepath.Join(proj, ".openhands", "hooks.json"), []byte(hooks), 0o644); err != nil {
		t.Fatal(err)
	}
	ts.must(200, "POST", "/api/hooks", map[string]any{"project_dir": proj}, &got)
	var cfg struct {
		PreToolUse []struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"pre_tool_use"`
	}
	if err := json.Unmarshal(got["hook_config"], &cfg); err != nil || len(cfg.PreToolUse) != 1 || cfg.PreToolUse[0].Matcher != "terminal" || cfg.PreToolUse[0].Hooks[0].Command != "echo hi" {
		t.Errorf("hook_config %s (%v)", got["hook_config"], err)
	}
	// An invalid file is no hooks, not an error.
	if err := os.WriteFile(filepath.Join(proj, ".openhands", "hooks.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	ts.must(200, "POST", "/api/hooks", map[string]any{"project_dir": proj}, &got)
	if string(got["hook_config"]) != "null" {
		t.Errorf("invalid hooks.json: %s", got["hook_config"])
	}
	if st, body := ts.do("POST", "/api/hooks", "{"); st != 422 {
		t.Errorf("a bad body: %d %s", st, body)
	}
	ts.key = ""
	if st, body := ts.do("POST", "/api/hooks", map[string]any{}); st != 401 {
		t.Errorf("without the key: %d %s", st, body)
	}
}
