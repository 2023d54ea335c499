package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gohands skills catalog lists the public repository's skills (with the
// source gohands skills install takes) and the user's; a skill installed
// from that source is marked installed, disabled stays out of the model's
// request, enabled comes back, and is gone once removed.
func TestE2ESkillsCatalogEnableRemove(t *testing.T) {
	t.Parallel()
	requireTool(t, "git")
	e := newE2E(t, finishReply("done"), finishReply("done"))
	repo := t.TempDir()
	writeFiles(t, map[string]string{
		filepath.Join(repo, "skills/pub/SKILL.md"):               "---\nname: pub\ndescription: PUBLIC-SKILL-DESCRIPTION\n---\nPublic.",
		filepath.Join(repo, "skills/extra/SKILL.md"):             "---\nname: extra\ndescription: EXTRA\n---\nExtra.",
		filepath.Join(repo, "marketplaces/default.json"):         `{"name": "default", "owner": {"name": "o"}, "plugins": [{"name": "pub", "source": "./skills/pub", "description": "PUBLIC-SKILL-DESCRIPTION"}], "skills": [{"name": "far", "source": "https://example.com/far.git", "description": "FAR-AWAY"}]}`,
		filepath.Join(e.home, ".openhands/skills/mine/SKILL.md"): "---\nname: mine\ndescription: USER-SKILL-DESCRIPTION\n---\nMine.",
	})
	gitRun(t, repo, "init", "-q", "-b", "main")
	gitRun(t, repo, "add", "-A")
	gitRun(t, repo, "commit", "-qm", "v1")
	e.env = append(e.env, "EXTENSIONS_REPO=file://"+repo, "EXTENSIONS_REF=main", "EXTENSIONS_PATH=")

	catalog := func() map[string][]string {
		t.Helper()
		r := e.mustRun(0, "skills", "catalog")
		rows := map[string][]string{}
		for _, line := range strings.Split(r.stdout, "\n")[1:] {
			if f := strings.Fields(line); len(f) >= 4 {
				rows[f[0]] = f[1:]
			}
		}
		return rows
	}
	rows := catalog()
	pub, mine, far := rows["pub"], rows["mine"], rows["far"]
	if len(rows) != 3 || pub[0] != "public" || pub[1] != "false" || !strings.HasSuffix(pub[2], "/skills/pub") ||
		mine[0] != "user" || far[0] != "marketplace" || far[2] != "https://example.com/far.git" {
		t.Fatalf("catalog: %v", rows)
	}
	e.mustRun(0, "skills", "install", pub[2])
	if rows := catalog(); rows["pub"][1] != "true" {
		t.Errorf("catalog after install: %v", rows)
	}

	e.mustRun(0, "skills", "disable", "pub")
	if r := e.mustRun(0, "skills", "list"); !strings.Contains(r.stdout, "false") {
		t.Errorf("list after disable: %s", r.stdout)
	}
	e.mustRun(0, e.args("say hi")...)
	if body := string(e.srv.LastRequest().RawBody); strings.Contains(body, "PUBLIC-SKILL-DESCRIPTION") || !strings.Contains(body, "USER-SKILL-DESCRIPTION") {
		t.Errorf("a disabled installed skill reached the model, or the user's did not:\n%s", body)
	}
	e.mustRun(0, "skills", "enable", "pub")
	e.mustRun(0, "run", "--workspace", e.work, "--persistence-dir", e.data, "--llm-config", e.config, "say hi")
	if !strings.Contains(string(e.srv.LastRequest().RawBody), "PUBLIC-SKILL-DESCRIPTION") {
		t.Error("the enabled installed skill did not reach the model")
	}
	e.mustRun(exitUsage, "skills", "disable", "nowhere")
	e.mustRun(0, "skills", "remove", "pub")
	if _, err := os.Stat(filepath.Join(e.home, ".openhands/skills/installed/pub")); !os.IsNotExist(err) {
		t.Errorf("the removed skill's directory: %v", err)
	}
	if r := e.mustRun(0, "skills", "list"); !strings.Contains(r.stdout, "No installed skills") {
		t.Errorf("list after remove: %s", r.stdout)
	}
	e.mustRun(exitUsage, "skills", "remove", "pub")
}
