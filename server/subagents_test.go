package server_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gohands/gohands/server"
)

func TestSubAgentsRoute(t *testing.T) {
	ts := newTestServer(t, &server.Options{SessionAPIKeys: []string{"sess"}})
	proj := t.TempDir()
	dir := filepath.Join(proj, ".agents", "agents")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// A project definition shadows the built-in of the same name.
	def := "---\nname: bash-runner\ndescription: The project's runner.\ntools: [terminal]\n---\nRun it.\n"
	if err := os.WriteFile(filepath.Join(dir, "runner.md"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	type info struct {
		Name       string   `json:"name"`
		Desc       string   `json:"description"`
		Level      *string  `json:"level"`
		IsBuiltin  bool     `json:"is_builtin"`
		Tools      []string `json:"tools"`
		Skills     []string `json:"skills"`
		MCPServers any      `json:"mcp_servers"`
	}
	var got struct {
		Agents []info `json:"agents"`
	}
	ts.must(200, "POST", "/api/sub-agents", map[string]any{"project_dir": proj, "load_user": false}, &got)
	byName := map[string]info{}
	for _, a := range got.Agents {
		if _, dup := byName[a.Name]; dup {
			t.Errorf("%s listed twice", a.Name)
		}
		byName[a.Name] = a
	}
	if a := byName["bash-runner"]; a.Desc != "The project's runner." || a.IsBuiltin || a.Level == nil || *a.Level != "project" {
		t.Errorf("the project's bash-runner: %+v", a)
	}
	if a := byName["general-purpose"]; !a.IsBuiltin || a.Skills == nil {
		t.Errorf("the built-in general-purpose: %+v", a)
	}
	ts.must(200, "POST", "/api/sub-agents", map[string]any{"project_dir": proj, "load_user": false, "load_builtin": false}, &got)
	if len(got.Agents) != 1 || got.Agents[0].Name != "bash-runner" {
		t.Errorf("project only: %+v", got.Agents)
	}
	if st, body := ts.do("POST", "/api/sub-agents", "{"); st != 422 {
		t.Errorf("a bad body: %d %s", st, body)
	}
	ts.key = ""
	if st, body := ts.do("POST", "/api/sub-agents", map[string]any{}); st != 401 {
		t.Errorf("without the key: %d %s", st, body)
	}
}
