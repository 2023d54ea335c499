package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/llm/llmtest"
)

// gohands plugins install/list/disable/enable/uninstall manage the store
// gohands run's ambient loader and gohands serve's /api/plugins/installed
// read: a plugin installed from a git repository (--ref, --repo-path)
// reaches the model of the next run, is listed by the server with its
// pinned commit, is left out once disabled, and is gone once uninstalled.
func TestE2EPluginsInstallCLI(t *testing.T) {
	t.Parallel()
	requireTool(t, "git")
	e := newE2E(t, finishReply("done"), finishReply("done"))
	repo := t.TempDir()
	writeFiles(t, map[string]string{
		filepath.Join(repo, "plugins/city/.plugin/plugin.json"): `{"name": "city", "version": "1.2.0", "description": "CITY-PLUGIN-DESCRIPTION"}`,
		filepath.Join(repo, "plugins/city/skills/streets.md"):   "INSTALLED-PLUGIN-SKILL",
	})
	gitRun(t, repo, "init", "-q", "-b", "main")
	gitRun(t, repo, "add", "-A")
	gitRun(t, repo, "commit", "-qm", "v1")
	src := "file://" + repo

	r := e.mustRun(0, "plugins", "install", "--ref", "main", "--repo-path", "plugins/city", src)
	if !strings.Contains(r.stdout, "Installed plugin city") {
		t.Fatalf("install: %s", r.stdout)
	}
	if r := e.mustRun(exitUsage, "plugins", "install", "--ref", "main", "--repo-path", "plugins/city", src); !strings.Contains(r.stderr, "--force") {
		t.Errorf("second install: %s", r.stderr)
	}
	e.mustRun(0, "plugins", "install", "--force", "--repo-path", "plugins/city", src)
	if r := e.mustRun(0, "plugins", "list"); !strings.Contains(r.stdout, "city") || !strings.Contains(r.stdout, "1.2.0") || !strings.Contains(r.stdout, "CITY-PLUGIN-DESCRIPTION") {
		t.Errorf("list: %s", r.stdout)
	}
	e.mustRun(0, e.args("say hi")...)
	if !strings.Contains(string(e.srv.LastRequest().RawBody), "INSTALLED-PLUGIN-SKILL") {
		t.Error("the installed plugin's skill did not reach the model")
	}

	srv := startServeProc(t, e.home, e.work, nil, "--autotitle=false")
	var got struct {
		Plugins []struct {
			Name        string  `json:"name"`
			Enabled     bool    `json:"enabled"`
			ResolvedRef *string `json:"resolved_ref"`
			Skills      []any   `json:"skills"`
		} `json:"plugins"`
	}
	srv.do("GET", "/api/plugins/installed", "", http.StatusOK, &got)
	if len(got.Plugins) != 1 || got.Plugins[0].Name != "city" || !got.Plugins[0].Enabled || got.Plugins[0].ResolvedRef == nil || len(got.Plugins[0].Skills) != 1 {
		t.Errorf("/api/plugins/installed after gohands plugins install: %+v", got)
	}

	e.mustRun(0, "plugins", "disable", "city")
	srv.do("GET", "/api/plugins/installed", "", http.StatusOK, &got)
	if len(got.Plugins) != 1 || got.Plugins[0].Enabled {
		t.Errorf("/api/plugins/installed after gohands plugins disable: %+v", got)
	}
	e.id = "" // a new conversation
	e.mustRun(0, "run", "--workspace", e.work, "--persistence-dir", e.data, "--llm-config", e.config, "say hi")
	if strings.Contains(string(e.srv.LastRequest().RawBody), "INSTALLED-PLUGIN-SKILL") {
		t.Error("a disabled plugin's skill reached the model")
	}
	e.mustRun(0, "plugins", "enable", "city")
	if r := e.mustRun(0, "plugins", "list"); !strings.Contains(r.stdout, "true") {
		t.Errorf("list after enable: %s", r.stdout)
	}
	e.mustRun(exitUsage, "plugins", "enable", "nowhere")
	e.mustRun(0, "plugins", "uninstall", "city")
	if _, err := os.Stat(filepath.Join(e.home, ".openhands/plugins/installed/city")); !os.IsNotExist(err) {
		t.Errorf("the uninstalled plugin's directory: %v", err)
	}
	srv.do("GET", "/api/plugins/installed", "", http.StatusOK, &got)
	if len(got.Plugins) != 0 {
		t.Errorf("/api/plugins/installed after gohands plugins uninstall: %+v", got)
	}
	e.mustRun(exitUsage, "plugins", "uninstall", "city")
}

// gohands plugins load NAME@MARKETPLACE --server --conversation loads a
// plugin of the conversation's registered marketplace into a conversation
// of gohands serve: its command reaches the model on the next message. A
// plugin the marketplace lacks, and an entry pointing outside the
// marketplace, exit 1 naming why, and load nothing.
func TestE2EPluginsLoadCLI(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	model := llmtest.New(t, finishReply("done"), finishReply("done"))
	market := t.TempDir()
	writeFiles(t, map[string]string{
		filepath.Join(market, ".plugin/marketplace.json"):      `{"name": "company", "owner": {"name": "Tools"}, "plugins": [{"name": "helper", "source": "./plugins/helper"}, {"name": "escape", "source": "../../etc"}]}`,
		filepath.Join(market, "plugins/helper/commands/go.md"): "---\ndescription: Go\n---\nLOADED-PLUGIN-COMMAND",
	})
	srv := startServeProc(t, e.home, e.work, nil, "--autotitle=false")
	body := `{"agent":{"kind":"Agent","llm":{"model":"openai/gpt-4o","base_url":"` + model.URL + `/v1","api_key":"k","usage_id":"agent","num_retries":0},` +
		`"tools":[],"agent_context":{"registered_marketplaces":[{"name":"company","source":` + quote(market) + `}]}},` +
		`"workspace":{"kind":"LocalWorkspace","working_dir":` + quote(e.work) + `},` +
		`"initial_message":{"role":"user","content":[{"type":"text","text":"hi"}],"run":true}}`
	var info struct {
		ID string `json:"id"`
	}
	srv.do("POST", "/api/conversations", body, http.StatusCreated, &info)
	srv.waitStatus(info.ID, time.Minute, "finished")

	load := func(want int, ref string) result {
		t.Helper()
		return e.mustRun(want, "plugins", "load", ref, "--server", srv.URL, "--conversation", info.ID)
	}
	if r := load(exitError, "nothing@company"); !strings.Contains(r.stderr, `"nothing" is not in marketplace "company"`) {
		t.Errorf("unknown plugin: %s", r.stderr)
	}
	if r := load(exitError, "escape@company"); !strings.Contains(r.stderr, "outside the marketplace") {
		t.Errorf("plugin outside its marketplace: %s", r.stderr)
	}
	e.mustRun(exitUsage, "plugins", "load", "helper@company", "--server", srv.URL)
	if r := load(0, "helper@company"); !strings.Contains(r.stdout, "Loaded plugin helper@company") {
		t.Errorf("load: %s", r.stdout)
	}
	srv.do("POST", "/api/conversations/"+info.ID+"/events", `{"role":"user","content":[{"type":"text","text":"please /helper:go"}],"run":true}`, http.StatusOK, nil)
	srv.waitStatus(info.ID, time.Minute, "finished")
	if !strings.Contains(string(model.LastRequest().RawBody), "LOADED-PLUGIN-COMMAND") {
		t.Error("the loaded plugin's command did not reach the model")
	}
}
