package pyclient_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gohands/gohands/internal/testenv"
)

// TestSkills158 asks POST /api/skills of a reference 1.58.2 server and of
// gohands serve for every source its request names — the sandbox's
// exposed URLs, a registered marketplace, the public repository (a local
// copy, $EXTENSIONS_PATH), the user's skills, an organisation repository
// (a local git repository) and a project — with a name in every tier,
// and compares the answers: the same skills in the same order, the same
// winner of each name, the same counts per source. Their paths (each
// server has its own home) and the work_hosts skill's sentence (each
// server's own words) are left out.
func TestSkills158(t *testing.T) {
	t.Parallel()
	testenv.Program(t, "git")
	py := testenv.Reference158Python(t)

	shared := t.TempDir()
	public := filepath.Join(shared, "extensions")
	writeFile(t, filepath.Join(public, "skills/shared/SKILL.md"), "---\nname: shared\ndescription: the public one\n---\nPUBLIC-SHARED\n")
	writeFile(t, filepath.Join(public, "skills/unlisted/SKILL.md"), "---\nname: unlisted\ndescription: not in the marketplace\n---\nPUBLIC-UNLISTED\n")
	writeFile(t, filepath.Join(public, "marketplaces/default.json"), `{"name": "default", "owner": {"name": "o"}, "plugins": [{"name": "shared", "source": "./skills/shared"}]}`)
	org := filepath.Join(shared, "org")
	writeFile(t, filepath.Join(org, "skills/shared.md"), "ORG-SHARED\n")
	writeFile(t, filepath.Join(org, "skills/orgwide.md"), "---\ntriggers: [orgwide]\n---\nORG-WIDE\n")
	writeFile(t, filepath.Join(org, "microagents/orgwide.md"), "ORG-LEGACY-LOSES\n")
	writeFile(t, filepath.Join(org, "microagents/legacy.md"), "ORG-LEGACY\n")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "org"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = org
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	market := filepath.Join(shared, "market")
	writeFile(t, filepath.Join(market, ".plugin/marketplace.json"), `{"name": "company", "owner": {"name": "o"}, "plugins": [], "skills": [{"name": "mkt", "source": "./skills/mkt"}, {"name": "shared", "source": "./skills/shared"}]}`)
	writeFile(t, filepath.Join(market, "skills/mkt/SKILL.md"), "---\nname: mkt\ndescription: a marketplace skill\n---\nMARKET-MKT\n")
	writeFile(t, filepath.Join(market, "skills/shared/SKILL.md"), "---\nname: shared\ndescription: the marketplace's\n---\nMARKET-SHARED\n")
	proj := filepath.Join(shared, "project")
	writeFile(t, filepath.Join(proj, ".openhands/skills/shared.md"), "PROJECT-SHARED\n")
	writeFile(t, filepath.Join(proj, ".agents/skills/deploy.md"), "---\ntriggers: [deploy, release]\n---\nPROJECT-DEPLOY\n")
	home := func() string {
		h := t.TempDir()
		writeFile(t, filepath.Join(h, ".openhands/skills/shared.md"), "USER-SHARED\n")
		writeFile(t, filepath.Join(h, ".openhands/skills/mine.md"), "USER-MINE\n")
		return h
	}

	ref := startReferenceServer(t, py, "HOME="+home(), "OH_PERSISTENCE_DIR=", "EXTENSIONS_PATH="+public)
	gh := startGohandsServer(t, "HOME="+home(), "OH_PERSISTENCE_DIR=", "XDG_CONFIG_HOME=", "EXTENSIONS_PATH="+public, "EXTENSIONS_REPO=")

	full := map[string]any{
		"project_dir":             proj,
		"org_configs":             []any{map[string]any{"repository": "o/r", "provider": "github", "org_repo_url": "file://" + org, "org_name": "o"}},
		"registered_marketplaces": []any{map[string]any{"name": "company", "source": market, "auto_load": true}},
		"sandbox_config": map[string]any{"exposed_urls": []any{
			map[string]any{"name": "WORKER_1", "url": "http://localhost:12000", "port": 12000},
			map[string]any{"name": "VSCODE", "url": "http://localhost:8001", "port": 8001}}},
	}
	without := func(keys ...string) map[string]any {
		b := map[string]any{}
		maps.Copy(b, full)
		for _, k := range keys {
			b[k] = false
		}
		return b
	}
	allPublic := without("load_user", "load_org", "load_project")
	allPublic["marketplace_path"] = nil
	for name, body := range map[string]map[string]any{
		"every source":          full,
		"without the project":   without("load_project"),
		"without org and user":  without("load_org", "load_user"),
		"without public":        without("load_public"),
		"marketplace_path null": allPublic,
	} {
		r, g := askSkills(t, ref, body), askSkills(t, gh, body)
		t.Logf("%s: the reference answers %v %v", name, r.Names, r.Sources)
		if diff := cmp.Diff(r, g); diff != "" {
			t.Errorf("%s: gohands' answer differs from 1.58.2's (-reference +gohands):\n%s", name, diff)
		}
		if name == "every source" && !slices.Contains(r.Names, "work_hosts") {
			t.Errorf("a check of the test: the reference made no work_hosts skill: %v", r.Names)
		}
	}
}

// skillsView is what TestSkills158 compares of an answer.
type skillsView struct {
	Names   []string
	Skills  map[string]map[string]any
	Sources map[string]int
}

func askSkills(t *testing.T, srv *server, body map[string]any) skillsView {
	t.Helper()
	var got struct {
		Skills  []map[string]any `json:"skills"`
		Sources map[string]int   `json:"sources"`
	}
	c := &apiClient{base: srv.URL, http: &http.Client{Timeout: 3 * time.Minute}}
	if _, err := c.do(t.Context(), "POST", "/api/skills", body, &got); err != nil {
		t.Fatalf("%s: %v", srv.name, err)
	}
	v := skillsView{Skills: map[string]map[string]any{}, Sources: got.Sources}
	for _, s := range got.Skills {
		name, _ := s["name"].(string)
		v.Names = append(v.Names, name)
		delete(s, "source")
		if name == "work_hosts" {
			c, _ := s["content"].(string)
			s["content"] = strings.Contains(c, "* http://localhost:12000 (port 12000)") && !strings.Contains(c, "8001")
		}
		v.Skills[name] = s
	}
	if _, err := json.Marshal(v); err != nil {
		t.Fatal(err)
	}
	return v
}
