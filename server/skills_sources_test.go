package server_test

import (
	"encoding/json"
	"log/slog"
	"maps"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gohands/gohands/plugin"
	"github.com/gohands/gohands/server"
)

// hangingListener accepts connections on loopback and never answers
// them: a git remote or an HTTP server that hangs. It returns its address
// and the count of connections it has accepted.
func hangingListener(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		conns    []net.Conn
		accepted atomic.Int32
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				for _, c := range conns {
					c.Close()
				}
				return
			}
			accepted.Add(1)
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String(), &accepted
}

type listedSkill struct {
	Name    string  `json:"name"`
	Type    string  `json:"type"`
	Content string  `json:"content"`
	Source  *string `json:"source"`
}

type skillsAnswer struct {
	Skills  []listedSkill  `json:"skills"`
	Sources map[string]int `json:"sources"`
}

func (a skillsAnswer) names() []string {
	var out []string
	for _, s := range a.Skills {
		out = append(out, s.Name)
	}
	return out
}

func (a skillsAnswer) content(name string) string {
	for _, s := range a.Skills {
		if s.Name == name {
			return s.Content
		}
	}
	return ""
}

// POST /api/skills loads every source of 1.58.2's request — the
// sandbox's exposed URLs, the registered marketplaces, the public
// repository, the user's skills, organisation repositories and the
// project — and merges them as it does: a later tier replaces a skill of
// its name where the name first appeared.
func TestSkillsRouteSources(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("OH_PERSISTENCE_DIR", "")
	t.Setenv("EXTENSIONS_PATH", "")
	t.Setenv("EXTENSIONS_REF", "")
	public := writePlugin(t, filepath.Join(t.TempDir(), "extensions"), map[string]string{
		"skills/listed/SKILL.md":    "---\nname: listed\ndescription: d\n---\nPUBLIC-LISTED",
		"skills/unlisted/SKILL.md":  "---\nname: unlisted\ndescription: d\n---\nPUBLIC-UNLISTED",
		"skills/shared/SKILL.md":    "---\nname: shared\ndescription: d\n---\nPUBLIC-SHARED",
		"marketplaces/default.json": `{"name": "default", "owner": {"name": "o"}, "plugins": [{"name": "listed", "source": "./skills/listed"}, {"name": "shared", "source": "./skills/shared"}]}`,
	})
	gitCommitAll(t, public, true)
	t.Setenv("EXTENSIONS_REPO", "file://"+public)
	writePlugin(t, filepath.Join(home, ".openhands", "skills"), map[string]string{
		"shared.md": "USER-SHARED",
		"mine.md":   "USER-MINE",
	})
	org := writePlugin(t, filepath.Join(t.TempDir(), "org"), map[string]string{
		"skills/shared.md":        "ORG-SHARED",
		"skills/orgwide.md":       "ORG-WIDE",
		"microagents/orgwide.md":  "ORG-LEGACY-LOSES",
		"microagents/legacy.md":   "ORG-LEGACY",
		"microagents/unrelated.x": "not a skill",
	})
	gitCommitAll(t, org, true)
	market := writePlugin(t, filepath.Join(t.TempDir(), "market"), map[string]string{
		".plugin/marketplace.json": `{"name": "company", "owner": {"name": "o"}, "plugins": [], "skills": [{"name": "mkt", "source": "./skills/mkt"}, {"name": "shared", "source": "./skills/shared"}]}`,
		"skills/mkt/SKILL.md":      "---\nname: mkt\ndescription: d\n---\nMARKET-MKT",
		"skills/shared/SKILL.md":   "---\nname: shared\ndescription: d\n---\nMARKET-SHARED",
	})
	house := writePlugin(t, filepath.Join(t.TempDir(), "house"), map[string]string{
		".plugin/marketplace.json":     `{"name": "house", "owner": {"name": "o"}, "plugins": [], "skills": [{"name": "housekeeping", "source": "./skills/housekeeping"}]}`,
		"skills/housekeeping/SKILL.md": "---\nname: housekeeping\ndescription: d\n---\nHOUSE",
	})
	proj := writePlugin(t, t.TempDir(), map[string]string{".openhands/skills/shared.md": "PROJECT-SHARED"})
	// The server's registrations load too; the request's "company"
	// replaces the server's of that name (which could not be fetched).
	ts := newTestServer(t, &server.Options{PersistenceDir: t.TempDir(), RegisteredMarketplaces: []plugin.Registration{
		{Name: "company", Source: filepath.Join(t.TempDir(), "gone"), AutoLoad: json.RawMessage("true")},
		{Name: "house", Source: house, AutoLoad: json.RawMessage("true")},
	}})

	body := map[string]any{
		"project_dir":             proj,
		"org_configs":             []any{map[string]any{"repository": "o/r", "provider": "github", "org_repo_url": "file://" + org, "org_name": "o"}},
		"registered_marketplaces": []any{map[string]any{"name": "company", "source": market, "auto_load": true}},
		"sandbox_config": map[string]any{"exposed_urls": []any{
			map[string]any{"name": "WORKER_1", "url": "http://localhost:12000", "port": 12000},
			map[string]any{"name": "VSCODE", "url": "http://localhost:8001", "port": 8001}}},
	}
	var got skillsAnswer
	ts.must(200, "POST", "/api/skills", body, &got)
	want := []string{"work_hosts", "mkt", "shared", "housekeeping", "listed", "mine", "orgwide", "legacy"}
	if !slices.Equal(got.names(), want) {
		t.Errorf("skills %v, want %v", got.names(), want)
	}
	for name, want := range map[string]string{"shared": "PROJECT-SHARED", "orgwide": "ORG-WIDE", "mkt": "MARKET-MKT", "listed": "PUBLIC-LISTED"} {
		if c := got.content(name); c != want {
			t.Errorf("%s: %q, want %q", name, c, want)
		}
	}
	if c := got.content("work_hosts"); !strings.Contains(c, "* http://localhost:12000 (port 12000)") || strings.Contains(c, "8001") {
		t.Errorf("work_hosts: %q", c)
	}
	wantSources := map[string]int{"sandbox": 1, "registered_marketplaces": 3, "sdk_base": 3, "org": 3, "project": 1}
	if !maps.Equal(got.Sources, wantSources) {
		t.Errorf("sources %v, want %v", got.Sources, wantSources)
	}

	// Each tier in turn: without the project the organisation's shared
	// wins, without it the user's, then the public one, then the
	// marketplace's.
	for _, step := range []struct{ off, want string }{
		{"load_project", "ORG-SHARED"}, {"load_org", "USER-SHARED"}, {"load_user", "PUBLIC-SHARED"},
	} {
		body[step.off] = false
		ts.must(200, "POST", "/api/skills", body, &got)
		if c := got.content("shared"); c != step.want {
			t.Errorf("without %s: shared is %q, want %q", step.off, c, step.want)
		}
	}
	// Without load_public neither the public repository nor the
	// marketplaces load; marketplace_path null loads every public skill.
	delete(body, "load_user")
	body["load_public"] = false
	ts.must(200, "POST", "/api/skills", body, &got)
	if c := got.content("shared"); c != "USER-SHARED" || got.Sources["registered_marketplaces"] != 0 {
		t.Errorf("without load_public: shared %q, sources %v", c, got.Sources)
	}
	body["load_public"], body["marketplace_path"], body["load_user"] = true, nil, false
	ts.must(200, "POST", "/api/skills", body, &got)
	if !slices.Contains(got.names(), "unlisted") {
		t.Errorf("marketplace_path null: %v lacks the unlisted public skill", got.names())
	}
	body["marketplace_path"] = 3
	if st, b := ts.do("POST", "/api/skills", body); st != 422 {
		t.Errorf("marketplace_path 3: %d %s", st, b)
	}
}

// A source that hangs (a git remote that accepts and never answers) costs
// its skills, not the request: the answer comes within the fetch timeout
// ($GOHANDS_FETCH_TIMEOUT), the others' skills in it, and the log names
// the remote without the credentials of its URL.
func TestSkillsRouteHangingSources(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("EXTENSIONS_PATH", "")
	t.Setenv("EXTENSIONS_REF", "")
	t.Setenv("GOHANDS_FETCH_TIMEOUT", "1s")
	addr, _ := hangingListener(t)
	t.Setenv("EXTENSIONS_REPO", "http://"+addr+"/public.git")
	writePlugin(t, filepath.Join(home, ".openhands", "skills"), map[string]string{"mine.md": "USER-MINE"})
	var logs syncBuffer
	ts := newTestServer(t, &server.Options{PersistenceDir: t.TempDir(),
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	body := map[string]any{
		"org_configs":             []any{map[string]any{"repository": "o/r", "provider": "github", "org_repo_url": "http://x-token:TOKEN-SECRET@" + addr + "/org.git", "org_name": "acme"}},
		"registered_marketplaces": []any{map[string]any{"name": "company", "source": "http://" + addr + "/market.git", "auto_load": true}},
	}
	start := time.Now()
	var got skillsAnswer
	ts.must(200, "POST", "/api/skills", body, &got)
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the answer took %s with a 1s fetch timeout", took)
	}
	if !slices.Equal(got.names(), []string{"mine"}) || got.Sources["org"] != 0 || got.Sources["registered_marketplaces"] != 0 {
		t.Errorf("skills %v, sources %v", got.names(), got.Sources)
	}
	log := logs.String()
	for _, want := range []string{"http://" + addr + "/public.git", "http://" + addr + "/market.git", "****@" + addr + "/org.git", "no answer within 1s"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not name %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "TOKEN-SECRET") {
		t.Errorf("the log shows the org URL's credentials:\n%s", log)
	}
}

// The server's marketplace registrations come from its configuration
// file's registered_marketplaces, replaced by $OH_REGISTERED_MARKETPLACES
// (a JSON list), as the reference's setting.
func TestRegisteredMarketplacesConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	writePlugin(t, filepath.Dir(path), map[string]string{"config.json": `{"registered_marketplaces": [{"name": "file", "source": "/m", "auto_load": true}]}`})
	env := map[string]string{"HOME": t.TempDir()}
	getenv := func(k string) string { return env[k] }
	names := func() []string {
		t.Helper()
		o, err := server.LoadConfig(path, getenv)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range o.RegisteredMarketplaces {
			out = append(out, r.Name+"="+r.Source)
		}
		return out
	}
	if got := names(); !slices.Equal(got, []string{"file=/m"}) {
		t.Errorf("from the file: %v", got)
	}
	env["OH_REGISTERED_MARKETPLACES"] = `[{"name": "env", "source": "github:o/r", "auto_load": ["a"]}]`
	if got := names(); !slices.Equal(got, []string{"env=github:o/r"}) {
		t.Errorf("from the environment: %v", got)
	}
	env["OH_REGISTERED_MARKETPLACES"] = `{"name": "env"}`
	if _, err := server.LoadConfig(path, getenv); err == nil || !strings.Contains(err.Error(), "OH_REGISTERED_MARKETPLACES") {
		t.Errorf("a bad OH_REGISTERED_MARKETPLACES: %v", err)
	}
}
