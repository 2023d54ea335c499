package server_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server"
)

// A conversation's first run stores the agent with what it loaded at its
// start: the enabled installed plugin's skill and a registered
// marketplace's auto-loaded plugin's skill are listed by GET
// ?include_skills=true beside the request's own, as 1.58.2 lists them.
// Resumed after a restart, the conversation lists each once.
func TestStartStoresAmbientPlugins(t *testing.T) {
	t.Setenv("OH_PERSISTENCE_DIR", t.TempDir())
	finish := llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}}
	model := llmtest.NewChat(t, finish, finish)
	convs := t.TempDir()
	ts := newTestServer(t, &server.Options{ConversationsPath: convs})
	src := writePlugin(t, filepath.Join(t.TempDir(), "weather"), map[string]string{
		".plugin/plugin.json":      `{"name": "city-weather", "version": "1.2.0"}`,
		"skills/forecast/SKILL.md": "---\nname: forecast\ndescription: Forecasts.\n---\nINSTALLED-PLUGIN-SKILL",
	})
	ts.must(200, "POST", "/api/plugins/install", map[string]any{"source": src}, nil)
	mk := writePlugin(t, t.TempDir(), map[string]string{
		".claude-plugin/marketplace.json": `{"name": "company", "owner": {"name": "Tools"}, "plugins": [{"name": "helper", "source": "./plugins/helper"}]}`,
		"plugins/helper/skills/tip.md":    "MARKETPLACE-PLUGIN-SKILL",
	})
	body := ts.startBody(model, map[string]any{"initial_message": runMessage("hi")})
	body["agent"].(map[string]any)["agent_context"] = map[string]any{
		"skills":                  []any{map[string]any{"name": "own", "content": "OWN-SKILL"}},
		"registered_marketplaces": []any{map[string]any{"name": "company", "source": mk, "auto_load": true}},
	}
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", body, &info)
	checkSkillsKept(t, ts, convs, info["id"].(string), []string{"forecast", "own", "tip"})
}

// checkSkillsKept waits for conversation id's first run on ts (storing
// under convs) and checks that the stored agent's skills are want after
// it, after a restart of the server and after a resumed run.
func checkSkillsKept(t *testing.T, ts *testServer, convs, id string, want []string) {
	t.Helper()
	ts.waitStatus(id, "finished")
	if got := storedSkills(ts, id); !slices.Equal(got, want) {
		t.Errorf("stored agent's skills after the first run = %v, want %v", got, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ts.srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	ts2 := newTestServer(t, &server.Options{ConversationsPath: convs})
	if got := storedSkills(ts2, id); !slices.Equal(got, want) {
		t.Errorf("stored agent's skills after a restart = %v, want %v", got, want)
	}
	ts2.must(200, "POST", "/api/conversations/"+id+"/events", userText("again", true), nil)
	ts2.waitStatus(id, "finished")
	if got := storedSkills(ts2, id); !slices.Equal(got, want) {
		t.Errorf("stored agent's skills after a resumed run = %v, want %v", got, want)
	}
}

// storedSkills are the names of the stored agent's skills, sorted.
func storedSkills(ts *testServer, id string) []string {
	var info map[string]any
	ts.must(200, "GET", "/api/conversations/"+id+"?include_skills=true", nil, &info)
	ac, _ := info["agent"].(map[string]any)["agent_context"].(map[string]any)
	var names []string
	for _, s := range anyList(ac["skills"]) {
		name, _ := s.(map[string]any)["name"].(string)
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// With load_project_skills, the first run stores the workspace's skills in
// the agent, as 1.58.2 does (a disabled one left out); a restart and a
// resumed run list each once.
func TestStartStoresProjectSkills(t *testing.T) {
	t.Setenv("OH_PERSISTENCE_DIR", t.TempDir())
	finish := llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}}
	model := llmtest.NewChat(t, finish, finish)
	convs := t.TempDir()
	ts := newTestServer(t, &server.Options{ConversationsPath: convs})
	work := writePlugin(t, t.TempDir(), map[string]string{
		".openhands/skills/notes/SKILL.md":  "---\nname: notes\ndescription: Release notes.\n---\nPROJECT-SKILL",
		".openhands/skills/hidden/SKILL.md": "---\nname: hidden\ndescription: Disabled.\n---\nDISABLED-SKILL",
	})
	body := ts.startBody(model, map[string]any{"initial_message": runMessage("hi")})
	body["workspace"] = map[string]any{"working_dir": work, "kind": "LocalWorkspace"}
	body["agent"].(map[string]any)["agent_context"] = map[string]any{
		"skills":              []any{map[string]any{"name": "own", "content": "OWN-SKILL"}},
		"load_project_skills": true,
		"disabled_skills":     []any{"hidden"},
	}
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", body, &info)
	checkSkillsKept(t, ts, convs, info["id"].(string), []string{"notes", "own"})
}
