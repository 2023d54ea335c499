package server_test

import (
	"encoding/json"
	"os"
	"os/exec"
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

// The /api/plugins routes install, list, disable, enable and uninstall
// plugins in the user's installed directory, which conversations then
// load; a plugin that cannot be installed leaves nothing behind.
func TestPluginRoutes(t *testing.T) {
	persist := t.TempDir()
	t.Setenv("OH_PERSISTENCE_DIR", persist)
	model := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}})
	ts := newTestServer(t, nil)
	src := writePlugin(t, filepath.Join(t.TempDir(), "weather"), map[string]string{
		".claude-plugin/plugin.json": `{"name": "city-weather", "version": "1.2.0", "description": "Weather"}`,
		"skills/always.md":           "INSTALLED-PLUGIN-SKILL",
		"commands/now.md":            "---\ndescription: Weather now\n---\nNow.",
	})
	var fetched map[string]any
	ts.must(200, "POST", "/api/plugins/fetch", map[string]any{"source": src}, &fetched)
	if fetched["manifest"].(map[string]any)["name"] != "city-weather" || len(fetched["skills"].([]any)) != 1 || len(fetched["commands"].([]any)) != 1 {
		t.Errorf("fetch answered %v", fetched)
	}
	if code, body := ts.do("POST", "/api/plugins/fetch", map[string]any{"source": "file:///nonexistent/repo.git"}); code != 502 || !strings.Contains(string(body), "file:///nonexistent/repo.git") {
		t.Errorf("fetch of a missing repository: %d %s, want 502 naming it", code, body)
	}
	var inst map[string]any
	ts.must(200, "POST", "/api/plugins/install", map[string]any{"source": src}, &inst)
	if inst["name"] != "city-weather" || inst["enabled"] != true || inst["version"] != "1.2.0" || len(inst["skills"].([]any)) != 2 {
		t.Errorf("install answered %v", inst)
	}
	if code, body := ts.do("POST", "/api/plugins/install", map[string]any{"source": src}); code != 409 {
		t.Errorf("second install: %d %s, want 409", code, body)
	}
	ts.must(200, "POST", "/api/plugins/install", map[string]any{"source": src, "force": true}, nil)
	var list struct {
		Plugins []map[string]any `json:"plugins"`
	}
	ts.must(200, "GET", "/api/plugins/installed", nil, &list)
	if len(list.Plugins) != 1 || list.Plugins[0]["name"] != "city-weather" {
		t.Errorf("installed = %v", list.Plugins)
	}
	// A conversation gets the enabled installed plugin.
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{"initial_message": runMessage("hi")}), &info)
	ts.waitStatus(info["id"].(string), "finished")
	if !strings.Contains(string(model.LastRequest().RawBody), "INSTALLED-PLUGIN-SKILL") {
		t.Error("the installed plugin's skill did not reach the model")
	}
	var state map[string]any
	ts.must(200, "PATCH", "/api/plugins/installed/city-weather", map[string]any{"enabled": false}, &state)
	if state["enabled"] != false {
		t.Errorf("PATCH answered %v", state)
	}
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{"initial_message": runMessage("hi")}), &info)
	ts.waitStatus(info["id"].(string), "finished")
	if strings.Contains(string(model.LastRequest().RawBody), "INSTALLED-PLUGIN-SKILL") {
		t.Error("a disabled plugin's skill reached the model")
	}
	var avail struct {
		Plugins []map[string]any `json:"plugins"`
	}
	ts.must(200, "POST", "/api/plugins", map[string]any{}, &avail)
	if len(avail.Plugins) != 0 {
		t.Errorf("available plugins with the only one disabled: %v", avail.Plugins)
	}
	for _, c := range []struct {
		method, path string
		body         any
		code         int
	}{
		{"PATCH", "/api/plugins/installed/nothing-here", map[string]any{"enabled": true}, 404},
		{"GET", "/api/plugins/installed/nothing-here", nil, 404},
		{"GET", "/api/plugins/installed/Bad_Name", nil, 422},
		{"POST", "/api/plugins/install", map[string]any{"source": "file:///nonexistent/repo.git"}, 400},
		{"POST", "/api/plugins/install", map[string]any{"source": writePlugin(t, t.TempDir(), map[string]string{".plugin/plugin.json": `{"name": "Not Kebab"}`})}, 422},
		{"POST", "/api/plugins/install", map[string]any{"source": writePlugin(t, t.TempDir(), map[string]string{".plugin/plugin.json": `{"name"`})}, 422},
	} {
		if code, body := ts.do(c.method, c.path, c.body); code != c.code {
			t.Errorf("%s %s: %d %s, want %d", c.method, c.path, code, body, c.code)
		}
	}
	ts.must(200, "DELETE", "/api/plugins/installed/city-weather", nil, nil)
	entries, _ := os.ReadDir(filepath.Join(persist, "plugins", "installed"))
	if len(entries) != 1 || entries[0].Name() != ".installed.json" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("installed directory after uninstall and failed installs: %v", names)
	}
}

// The installed skills routes: a skill installed from a directory reaches
// the model of a conversation that loads the user's skills, until it is
// disabled; a second install is a 409, a directory without a valid
// SKILL.md a 422, and neither leaves anything behind.
func TestInstalledSkillRoutes(t *testing.T) {
	persist := t.TempDir()
	t.Setenv("OH_PERSISTENCE_DIR", persist)
	model := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}})
	ts := newTestServer(t, nil)
	src := writePlugin(t, filepath.Join(t.TempDir(), "greeter"), map[string]string{
		"SKILL.md":            "---\nname: greeter\ndescription: INSTALLED-SKILL-DESCRIPTION\n---\nGreet.",
		"references/notes.md": "a resource",
	})
	var inst map[string]any
	ts.must(200, "POST", "/api/skills/install", map[string]any{"source": src}, &inst)
	if inst["name"] != "greeter" || inst["enabled"] != true || inst["description"] != "INSTALLED-SKILL-DESCRIPTION" {
		t.Errorf("install answered %v", inst)
	}
	if code, body := ts.do("POST", "/api/skills/install", map[string]any{"source": src}); code != 409 {
		t.Errorf("second install: %d %s, want 409", code, body)
	}
	start := func() string {
		body := ts.startBody(model, map[string]any{"initial_message": runMessage("hi")})
		body["agent"].(map[string]any)["agent_context"] = map[string]any{"load_user_skills": true}
		var info map[string]any
		ts.must(201, "POST", "/api/conversations", body, &info)
		ts.waitStatus(info["id"].(string), "finished")
		return string(model.LastRequest().RawBody)
	}
	if !strings.Contains(start(), "INSTALLED-SKILL-DESCRIPTION") {
		t.Error("the installed skill did not reach the model")
	}
	ts.must(200, "PATCH", "/api/skills/installed/greeter", map[string]any{"enabled": false}, nil)
	if strings.Contains(start(), "INSTALLED-SKILL-DESCRIPTION") {
		t.Error("a disabled skill reached the model")
	}
	var list struct {
		Skills []map[string]any `json:"skills"`
	}
	ts.must(200, "GET", "/api/skills/installed", nil, &list)
	if len(list.Skills) != 1 || list.Skills[0]["enabled"] != false {
		t.Errorf("installed = %v", list.Skills)
	}
	for _, c := range []struct {
		method, path string
		body         any
		code         int
	}{
		{"PATCH", "/api/skills/installed/nothing-here", map[string]any{"enabled": true}, 404},
		{"PATCH", "/api/skills/installed/greeter", map[string]any{}, 422},
		{"GET", "/api/skills/installed/Bad_Name", nil, 422},
		{"POST", "/api/skills/install", map[string]any{"source": writePlugin(t, t.TempDir(), map[string]string{"README.md": "no skill"})}, 422},
		{"POST", "/api/skills/install", map[string]any{"source": writePlugin(t, filepath.Join(t.TempDir(), "bad"), map[string]string{"SKILL.md": "---\nname: Not Kebab\n---\nx"})}, 422},
		{"POST", "/api/skills/install", map[string]any{"source": "https://user:hunter2@127.0.0.1:1/skills.git"}, 400},
	} {
		code, body := ts.do(c.method, c.path, c.body)
		if code != c.code || strings.Contains(string(body), "hunter2") {
			t.Errorf("%s %s: %d %s, want %d", c.method, c.path, code, body, c.code)
		}
	}
	ts.must(200, "DELETE", "/api/skills/installed/greeter", nil, nil)
	entries, _ := os.ReadDir(filepath.Join(persist, "skills", "installed"))
	if len(entries) != 1 || entries[0].Name() != ".installed.json" {
		t.Errorf("installed directory after uninstall and failed installs holds %d entries", len(entries))
	}
}

// An agent context's registered marketplace auto-loads its plugins into
// the conversation (1.58.2's registered_marketplaces).
func TestRegisteredMarketplace(t *testing.T) {
	t.Parallel()
	model := llmtest.NewChat(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}})
	ts := newTestServer(t, nil)
	mk := writePlugin(t, t.TempDir(), map[string]string{
		".claude-plugin/marketplace.json": `{"name": "company", "owner": {"name": "Tools"}, "plugins": [{"name": "helper", "source": "./plugins/helper"}]}`,
		"plugins/helper/skills/tip.md":    "MARKETPLACE-PLUGIN-SKILL",
	})
	body := ts.startBody(model, map[string]any{"initial_message": runMessage("hi")})
	body["agent"].(map[string]any)["agent_context"] = map[string]any{
		"registered_marketplaces": []any{map[string]any{"name": "company", "source": mk, "auto_load": true}},
	}
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", body, &info)
	ts.waitStatus(info["id"].(string), "finished")
	if !strings.Contains(string(model.LastRequest().RawBody), "MARKETPLACE-PLUGIN-SKILL") {
		t.Error("the marketplace's plugin skill did not reach the model")
	}
}

// load_plugin adds a plugin of a registered marketplace to a conversation
// between runs: its command skill answers the next message that names it,
// and the stored agent has its skills.
func TestLoadPlugin(t *testing.T) {
	t.Parallel()
	fin := llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}}
	model := llmtest.NewChat(t, fin, fin)
	ts := newTestServer(t, nil)
	mk := writePlugin(t, t.TempDir(), map[string]string{
		".plugin/marketplace.json":      `{"name": "company", "owner": {"name": "Tools"}, "plugins": [{"name": "helper", "source": "./plugins/helper"}, {"name": "escape", "source": "../../etc"}]}`,
		"plugins/helper/commands/go.md": "---\ndescription: Go\n---\nLOADED-PLUGIN-COMMAND",
	})
	body := ts.startBody(model, map[string]any{"initial_message": runMessage("hi")})
	body["agent"].(map[string]any)["agent_context"] = map[string]any{
		"registered_marketplaces": []any{map[string]any{"name": "company", "source": mk}},
	}
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", body, &info)
	id := info["id"].(string)
	ts.waitStatus(id, "finished")
	for _, c := range []struct {
		ref  any
		code int
	}{
		{"nothing", 404},
		{"helper@elsewhere", 404},
		{"escape@company", 400},
		{nil, 422},
	} {
		b := map[string]any{}
		if c.ref != nil {
			b["plugin_ref"] = c.ref
		}
		if code, resp := ts.do("POST", "/api/conversations/"+id+"/load_plugin", b); code != c.code {
			t.Errorf("load_plugin %v: %d %s, want %d", c.ref, code, resp, c.code)
		}
	}
	if code, _ := ts.do("POST", "/api/conversations/00000000-0000-4000-8000-000000000000/load_plugin", map[string]any{"plugin_ref": "helper"}); code != 404 {
		t.Errorf("load_plugin on an unknown conversation: %d", code)
	}
	ts.must(200, "POST", "/api/conversations/"+id+"/load_plugin", map[string]any{"plugin_ref": "helper@company"}, nil)
	ts.must(200, "POST", "/api/conversations/"+id+"/events", map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "please /helper:go"}}, "run": true}, nil)
	ts.waitStatus(id, "finished")
	if !strings.Contains(string(model.LastRequest().RawBody), "LOADED-PLUGIN-COMMAND") {
		t.Error("the loaded plugin's command did not reach the model")
	}
	ts.must(200, "GET", "/api/conversations/"+id+"?include_skills=true", nil, &info)
	skills := info["agent"].(map[string]any)["agent_context"].(map[string]any)["skills"].([]any)
	if len(skills) != 1 || skills[0].(map[string]any)["name"] != "helper:go" {
		t.Errorf("stored skills = %v", skills)
	}
}

// load_public_skills fetches the public skills repository
// ($EXTENSIONS_REPO here, a local git repository) and its default
// marketplace's skills reach the model.
func TestPublicSkills(t *testing.T) {
	dir := writePlugin(t, filepath.Join(t.TempDir(), "extensions"), map[string]string{
		"skills/gh-work/SKILL.md":   "---\ndescription: PUBLIC-SKILL-DESCRIPTION\n---\nUse gh.",
		"marketplaces/default.json": `{"name": "default", "owner": {"name": "o"}, "plugins": [{"name": "gh-work", "source": "./skills/gh-work"}]}`,
	})
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	t.Setenv("EXTENSIONS_PATH", "")
	t.Setenv("EXTENSIONS_REF", "")
	t.Setenv("EXTENSIONS_REPO", "file://"+dir)
	t.Setenv("OH_PERSISTENCE_DIR", t.TempDir())
	model := llmtest.NewChat(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}})
	ts := newTestServer(t, nil)
	body := ts.startBody(model, map[string]any{"initial_message": runMessage("hi")})
	body["agent"].(map[string]any)["agent_context"] = map[string]any{"load_public_skills": true}
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", body, &info)
	ts.waitStatus(info["id"].(string), "finished")
	if !strings.Contains(string(model.LastRequest().RawBody), "PUBLIC-SKILL-DESCRIPTION") {
		t.Error("the public skill did not reach the model")
	}
}
