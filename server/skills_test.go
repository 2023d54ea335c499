package server_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gohands/gohands/server"
)

func TestSkillsRoute(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	// No public skills: an empty local copy of the public repository.
	t.Setenv("EXTENSIONS_REPO", "")
	t.Setenv("EXTENSIONS_PATH", t.TempDir())
	ts := newTestServer(t, &server.Options{SessionAPIKeys: []string{"sess"}})
	proj := t.TempDir()
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(proj, ".openhands", "skills", "deploy.md"), "---\nname: deploy\ntriggers: [deploy, release]\n---\nHow we deploy.\n")
	write(filepath.Join(proj, "AGENTS.md"), "Run make test.\n")
	write(filepath.Join(home, ".openhands", "skills", "mine.md"), "---\nname: mine\ntriggers: [mine]\n---\nThe user's.\n")
	// The project's deploy wins over the user's.
	write(filepath.Join(home, ".openhands", "skills", "deploy.md"), "---\nname: deploy\ntriggers: [ship]\n---\nThe user's deploy.\n")

	type info struct {
		Name     string   `json:"name"`
		Type     string   `json:"type"`
		Content  string   `json:"content"`
		Triggers []string `json:"triggers"`
		Source   *string  `json:"source"`
	}
	var got struct {
		Skills  []info         `json:"skills"`
		Sources map[string]int `json:"sources"`
	}
	ts.must(200, "POST", "/api/skills", map[string]any{"project_dir": proj}, &got)
	byName := map[string]info{}
	for _, s := range got.Skills {
		byName[s.Name] = s
	}
	if d := byName["deploy"]; d.Type != "knowledge" || len(d.Triggers) != 2 || d.Content != "How we deploy." || d.Source == nil {
		t.Errorf("deploy: %+v", d)
	}
	if m := byName["mine"]; m.Type != "knowledge" || m.Content != "The user's." {
		t.Errorf("mine: %+v", m)
	}
	var repo int
	for _, s := range got.Skills {
		if s.Type == "repo" {
			repo++
		}
	}
	if repo == 0 {
		t.Errorf("AGENTS.md is no repo skill: %+v", got.Skills)
	}
	if got.Sources["project"] < 2 || got.Sources["sdk_base"] != 2 {
		t.Errorf("sources %v", got.Sources)
	}
	ts.must(200, "POST", "/api/skills", map[string]any{"project_dir": proj, "load_user": false, "load_project": false}, &got)
	if len(got.Skills) != 0 || got.Skills == nil {
		t.Errorf("nothing to load: %+v", got)
	}
	if st, body := ts.do("POST", "/api/skills", "{"); st != 422 {
		t.Errorf("a bad body: %d %s", st, body)
	}
	ts.key = ""
	if st, body := ts.do("POST", "/api/skills", map[string]any{}); st != 401 {
		t.Errorf("without the key: %d %s", st, body)
	}
}
