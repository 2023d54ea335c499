package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm/llmtest"
)

// writePlugin makes a plugin directory from relative paths and contents.
func writePlugin(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The start request's plugins are fetched and loaded: their skills reach
// the model (an always-on skill in the system prompt, a command's keyword
// skill when the message names it), their hooks run after the request's
// own, and the stored agent has them. A plugin that cannot be loaded or
// fetched is refused naming it, and nothing is stored.
func TestStartWithPlugins(t *testing.T) {
	t.Parallel()
	model := llmtest.NewChat(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}})
	ts := newTestServer(t, nil)
	marker := filepath.Join(t.TempDir(), "hook-ran")
	dir := writePlugin(t, filepath.Join(t.TempDir(), "weather"), map[string]string{
		".claude-plugin/plugin.json": `{"name": "city-weather", "version": "1.2.0"}`,
		"skills/always.md":           "PLUGIN-ALWAYS: name the city.",
		"commands/now.md":            "---\ndescription: Weather now\n---\nPLUGIN-COMMAND: tell the weather.",
		"hooks/hooks.json":           `{"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "touch ` + marker + `"}]}]}`,
	})
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{
		"plugins":         []any{map[string]any{"source": dir}},
		"initial_message": runMessage("/city-weather:now in Paris"),
	}), &info)
	id := info["id"].(string)
	ts.waitStatus(id, "finished")
	body := string(model.LastRequest().RawBody)
	for _, want := range []string{"PLUGIN-ALWAYS: name the city.", "PLUGIN-COMMAND: tell the weather."} {
		if !strings.Contains(body, want) {
			t.Errorf("the model was not sent %q", want)
		}
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the plugin's hook did not run: %v", err)
	}
	ts.must(200, "GET", "/api/conversations/"+id+"?include_skills=true", nil, &info)
	var names []string
	for _, s := range info["agent"].(map[string]any)["agent_context"].(map[string]any)["skills"].([]any) {
		names = append(names, s.(map[string]any)["name"].(string))
	}
	if strings.Join(names, ",") != "always,city-weather:now" {
		t.Errorf("stored agent's skills = %v", names)
	}

	bad := writePlugin(t, t.TempDir(), map[string]string{".plugin/plugin.json": `{"name": `})
	up := "../x"
	for _, c := range []struct {
		plugins any
		code    int
		want    string
	}{
		{[]any{map[string]any{"source": bad}}, 400, "plugin.json"},
		{[]any{map[string]any{"source": "file:///nonexistent/plugins.git"}}, 400, "file:///nonexistent/plugins.git"},
		{[]any{map[string]any{"source": dir, "repo_path": up}}, 422, "'..'"},
		{"not a list", 422, "plugins"},
	} {
		code, resp := ts.do("POST", "/api/conversations", ts.startBody(model, map[string]any{"plugins": c.plugins}))
		if code != c.code || !strings.Contains(string(resp), c.want) {
			t.Errorf("plugins %v: %d %s, want %d naming %q", c.plugins, code, resp, c.code, c.want)
		}
	}
	var page struct {
		Items []json.RawMessage `json:"items"`
	}
	ts.must(200, "GET", "/api/conversations/search", nil, &page)
	if len(page.Items) != 1 {
		t.Errorf("%d conversations stored, want only the accepted one", len(page.Items))
	}
}
