package main

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/llm/llmtest"
)

// closedPort returns a URL of a loopback port nothing listens on.
func closedPort(t *testing.T, path string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + path
}

// unreachable are the two sources that cannot be reached, each with
// credentials in its URL: a loopback server that accepts and never
// answers, and a closed port. shown is the URL as an error may name it
// (no credentials), secret what must never be printed.
type unreachable struct {
	name, url, shown string
}

const sourceSecret = "s3cret-pass"

func unreachableSources(t *testing.T, path string) []unreachable {
	var out []unreachable
	for _, u := range []struct{ name, url string }{{"hanging", hangingRemote(t, path)}, {"closed", closedPort(t, path)}} {
		rest := strings.TrimPrefix(u.url, "http://")
		out = append(out, unreachable{u.name, "http://user:" + sourceSecret + "@" + rest, rest})
	}
	return out
}

// leftovers lists the files under dirs, and fetch directories anywhere
// under them: what a failed install or fetch must not leave.
func leftovers(dirs ...string) []string {
	var left []string
	for _, dir := range dirs {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if !d.IsDir() && d.Name() != ".installed.json" || strings.HasPrefix(d.Name(), ".fetch-") || strings.HasPrefix(d.Name(), ".install-") {
				left = append(left, p)
			}
			return nil
		})
	}
	return left
}

// The CLI's commands that fetch (skills install, plugins install, skills
// sync, skills catalog) fail on a source that hangs or refuses, within
// the fetch timeout ($GOHANDS_FETCH_TIMEOUT, 1s here), exit 1 naming the
// URL without its credentials, and leave nothing installed or cached.
func TestE2EUnreachableSourcesCLI(t *testing.T) {
	t.Parallel()
	requireTool(t, "git")
	for _, u := range unreachableSources(t, "/tools.git") {
		t.Run(u.name, func(t *testing.T) {
			e := newE2E(t)
			e.env = append(e.env, "GOHANDS_FETCH_TIMEOUT=1s", "EXTENSIONS_REPO="+u.url, "EXTENSIONS_PATH=")
			for _, args := range [][]string{
				{"skills", "install", u.url},
				{"plugins", "install", u.url},
				{"skills", "sync"},
				{"skills", "catalog"},
			} {
				began := time.Now()
				r := e.mustRun(exitError, args...)
				if took := time.Since(began); took > 30*time.Second {
					t.Errorf("gohands %s took %s", strings.Join(args, " "), took)
				}
				if !strings.Contains(r.stderr, u.shown) || strings.Contains(r.stderr+r.stdout, sourceSecret) {
					t.Errorf("gohands %s: stderr does not name %s, or shows the password:\n%s", strings.Join(args, " "), u.shown, r.stderr)
				}
				if u.name == "hanging" && !strings.Contains(r.stderr, "no answer within 1s") {
					t.Errorf("gohands %s: stderr does not say it timed out:\n%s", strings.Join(args, " "), r.stderr)
				}
			}
			oh := filepath.Join(e.home, ".openhands")
			if left := leftovers(filepath.Join(oh, "skills/installed"), filepath.Join(oh, "plugins/installed"), filepath.Join(oh, "cache/plugins")); len(left) > 0 {
				t.Errorf("failed fetches left files behind: %v", left)
			}
		})
	}
}

// gohands serve with sources that hang or refuse (1s fetch timeout):
// POST /api/plugins/install is a 400 naming the URL and installs nothing;
// POST /api/skills/sync answers an error; a conversation with
// load_public_skills and a registered marketplace there starts and
// finishes without them (the log names them); load_plugin from that
// marketplace, by the route and by gohands plugins load, is refused
// naming the URL, and the agent gains nothing. No answer, log or output
// shows the URL's password.
func TestE2EUnreachableSourcesServe(t *testing.T) {
	t.Parallel()
	requireTool(t, "git")
	for _, u := range unreachableSources(t, "/extensions.git") {
		t.Run(u.name, func(t *testing.T) {
			e := newE2E(t)
			model := llmtest.New(t, finishReply("done"))
			srv := startServeProc(t, e.home, e.work, []string{"GOHANDS_FETCH_TIMEOUT=1s", "EXTENSIONS_REPO=" + u.url, "EXTENSIONS_PATH="}, "--autotitle=false")
			began := time.Now()
			var detail struct {
				Detail string `json:"detail"`
			}
			srv.do("POST", "/api/plugins/install", `{"source":`+quote(u.url)+`}`, http.StatusBadRequest, &detail)
			if !strings.Contains(detail.Detail, u.shown) || strings.Contains(detail.Detail, sourceSecret) {
				t.Errorf("/api/plugins/install: detail %q", detail.Detail)
			}
			var installed struct {
				Plugins []any `json:"plugins"`
			}
			srv.do("GET", "/api/plugins/installed", "", http.StatusOK, &installed)
			if len(installed.Plugins) != 0 {
				t.Errorf("an unreachable source left installed plugins: %v", installed.Plugins)
			}
			var sync struct{ Status string }
			srv.do("POST", "/api/skills/sync", "", http.StatusOK, &sync)
			if sync.Status != "error" {
				t.Errorf("/api/skills/sync: %+v", sync)
			}

			body := `{"agent":{"kind":"Agent","llm":{"model":"openai/gpt-4o","base_url":"` + model.URL + `/v1","api_key":"k","usage_id":"agent","num_retries":0},` +
				`"tools":[],"agent_context":{"load_public_skills":true,"registered_marketplaces":[{"name":"far","source":` + quote(u.url) + `,"auto_load":true}]}},` +
				`"workspace":{"kind":"LocalWorkspace","working_dir":` + quote(e.work) + `},` +
				`"initial_message":{"role":"user","content":[{"type":"text","text":"hi"}],"run":true}}`
			var info struct {
				ID string `json:"id"`
			}
			srv.do("POST", "/api/conversations", body, http.StatusCreated, &info)
			srv.waitStatus(info.ID, time.Minute, "finished")

			detail.Detail = ""
			srv.do("POST", "/api/conversations/"+info.ID+"/load_plugin", `{"plugin_ref":"tools@far"}`, http.StatusBadRequest, &detail)
			if !strings.Contains(detail.Detail, u.shown) || strings.Contains(detail.Detail, sourceSecret) {
				t.Errorf("load_plugin: detail %q", detail.Detail)
			}
			r := e.mustRun(exitError, "plugins", "load", "tools@far", "--server", srv.URL, "--conversation", info.ID)
			if !strings.Contains(r.stderr, u.shown) || strings.Contains(r.stderr, sourceSecret) {
				t.Errorf("gohands plugins load: stderr:\n%s", r.stderr)
			}
			var conv struct {
				Agent struct {
					AgentContext struct {
						Skills []any `json:"skills"`
					} `json:"agent_context"`
				} `json:"agent"`
			}
			srv.do("GET", "/api/conversations/"+info.ID+"?include_skills=true", "", http.StatusOK, &conv)
			if len(conv.Agent.AgentContext.Skills) != 0 {
				t.Errorf("a failed load_plugin changed the agent's skills: %v", conv.Agent.AgentContext.Skills)
			}
			if took := time.Since(began); took > time.Minute {
				t.Errorf("the server's answers took %s with a 1s fetch timeout", took)
			}
			logs := srv.logs()
			for _, want := range []string{"public skills not loaded", "marketplace not loaded", "the public repository cannot be synced"} {
				if !strings.Contains(logs, want) {
					t.Errorf("the server's log does not say %q", want)
				}
			}
			if !strings.Contains(logs, u.shown) || strings.Contains(logs, sourceSecret) {
				t.Errorf("the server's log does not name %s, or shows the password:\n%s", u.shown, logs)
			}
			if left := leftovers(filepath.Join(e.home, ".openhands/plugins/installed"), filepath.Join(e.home, ".openhands/cache/plugins")); len(left) > 0 {
				t.Errorf("failed fetches left files behind: %v", left)
			}
		})
	}
}

// gohands run refuses a --plugin directory whose manifest is malformed
// before asking the model, naming the manifest; a registered
// marketplace's entry that points outside the marketplace's directory is
// left out with a warning naming it (as 1.58.2 skips it), and nothing of
// it reaches the model.
func TestE2ERunBadPluginAndMarketplace(t *testing.T) {
	t.Parallel()
	e := newE2E(t, finishReply("done"))
	bad, base := t.TempDir(), t.TempDir()
	writeFiles(t, map[string]string{
		filepath.Join(bad, ".plugin/plugin.json"):                   `{"name": "broken", "version": `,
		filepath.Join(bad, "skills/tip.md"):                         "BROKEN-PLUGIN-SKILL",
		filepath.Join(base, "market/.plugin/marketplace.json"):      `{"name": "company", "owner": {"name": "Tools"}, "plugins": [{"name": "escape", "source": "../outside"}]}`,
		filepath.Join(base, "outside/.plugin/plugin.json"):          `{"name": "escape"}`,
		filepath.Join(base, "outside/skills/tip.md"):                "OUTSIDE-PLUGIN-SKILL",
		filepath.Join(base, "market/plugins/inside/skills/fine.md"): "unused",
	})
	r := e.mustRun(exitError, e.args("--plugin", bad, "say hi")...)
	if !strings.Contains(r.stderr, filepath.Join(bad, ".plugin/plugin.json")) || len(e.srv.Requests()) != 0 {
		t.Errorf("malformed manifest: %d model requests, stderr:\n%s", len(e.srv.Requests()), r.stderr)
	}

	e.writeSettings(`{"registered_marketplaces": [{"name": "company", "source": ` + quote(filepath.Join(base, "market")) + `, "auto_load": true}]}`)
	r = e.mustRun(0, e.args("say hi")...)
	if !strings.Contains(r.stderr, `escape`) || !strings.Contains(r.stderr, "outside the marketplace") {
		t.Errorf("the entry outside its marketplace is not named:\n%s", r.stderr)
	}
	if strings.Contains(string(e.srv.LastRequest().RawBody), "OUTSIDE-PLUGIN-SKILL") {
		t.Error("a plugin outside its marketplace reached the model")
	}
}
