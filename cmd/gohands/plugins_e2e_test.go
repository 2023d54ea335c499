package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm/llmtest"
)

// `gohands run` loads the ambient plugins as 1.58.2 does: the project's
// (.openhands/plugins/<name>) and the user's (~/.openhands/plugins/<name>);
// their skills reach the model, a project plugin replacing a user plugin
// of the same name, and their hooks run.
func TestRunLoadsPlugins(t *testing.T) {
	t.Parallel()
	e := newE2E(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}})
	marker := filepath.Join(t.TempDir(), "hook-ran")
	files := map[string]string{
		filepath.Join(e.work, ".openhands/plugins/weather/.claude-plugin/plugin.json"): `{"name": "weather"}`,
		filepath.Join(e.work, ".openhands/plugins/weather/skills/city.md"):             "PROJECT-PLUGIN-SKILL",
		filepath.Join(e.work, ".openhands/plugins/weather/hooks/hooks.json"):           `{"SessionStart": [{"hooks": [{"type": "command", "command": "touch ` + marker + `"}]}]}`,
		filepath.Join(e.home, ".openhands/plugins/weather/.plugin/plugin.json"):        `{"name": "weather"}`,
		filepath.Join(e.home, ".openhands/plugins/weather/skills/old.md"):              "USER-PLUGIN-REPLACED",
		filepath.Join(e.home, ".openhands/plugins/tools/skills/tip.md"):                "USER-PLUGIN-SKILL",
	}
	for p, body := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e.mustRun(0, e.args("say hi")...)
	body := string(e.srv.LastRequest().RawBody)
	for _, want := range []string{"PROJECT-PLUGIN-SKILL", "USER-PLUGIN-SKILL"} {
		if !strings.Contains(body, want) {
			t.Errorf("the model was not sent %q", want)
		}
	}
	if strings.Contains(body, "USER-PLUGIN-REPLACED") {
		t.Error("the user's plugin was not replaced by the project's of the same name")
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the plugin's SessionStart hook did not run: %v", err)
	}
}
