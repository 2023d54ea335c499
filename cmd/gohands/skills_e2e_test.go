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

// Two skills of one name from different sources reach the model once, as
// 1.58.2 merges them: the project's beat a plugin's (the context's
// explicit skills), which beat the user's; within the project, the
// .agents/skills copy beats the .openhands/skills one.
func TestE2ERunDuplicateSkillNames(t *testing.T) {
	t.Parallel()
	e := newE2E(t, finishReply("done"))
	plug := t.TempDir()
	writeFiles(t, map[string]string{
		filepath.Join(e.home, ".openhands/skills/style.md"): "USER-STYLE-LOSES",
		filepath.Join(e.home, ".openhands/skills/tone.md"):  "USER-TONE-LOSES",
		filepath.Join(e.home, ".openhands/skills/alone.md"): "USER-ALONE",
		filepath.Join(plug, ".plugin/plugin.json"):          `{"name": "house"}`,
		filepath.Join(plug, "skills/style.md"):              "PLUGIN-STYLE-LOSES",
		filepath.Join(plug, "skills/tone.md"):               "PLUGIN-TONE",
		filepath.Join(e.work, ".openhands/skills/style.md"): "PROJECT-STYLE",
		filepath.Join(e.work, ".agents/skills/twin.md"):     "AGENTS-TWIN",
		filepath.Join(e.work, ".openhands/skills/twin.md"):  "OPENHANDS-TWIN-LOSES",
	})
	e.mustRun(0, e.args("--plugin", plug, "say hi")...)
	body := string(e.srv.LastRequest().RawBody)
	for _, want := range []string{"PROJECT-STYLE", "PLUGIN-TONE", "USER-ALONE", "AGENTS-TWIN"} {
		if strings.Count(body, want) != 1 {
			t.Errorf("the model was sent %q %d times, want once", want, strings.Count(body, want))
		}
	}
	if strings.Contains(body, "-LOSES") {
		t.Errorf("a shadowed skill reached the model:\n%s", body)
	}
}

// Through gohands serve: a conversation's agent context with explicit
// skills, the user's and the project's, names clashing, sends the model
// the winner of each name (project, then explicit, then user); explicit
// skills with one name are refused (422, as 1.58.2's validation); and
// POST /api/skills answers the same winners, with an organisation
// repository between the user's and the project's.
func TestE2EServeDuplicateSkillNames(t *testing.T) {
	t.Parallel()
	requireTool(t, "git")
	home, work := t.TempDir(), t.TempDir()
	m := llmtest.New(t, finishReply("done"))
	writeFiles(t, map[string]string{
		filepath.Join(home, ".openhands/skills/style.md"): "USER-STYLE-LOSES",
		filepath.Join(home, ".openhands/skills/tone.md"):  "USER-TONE-LOSES",
		filepath.Join(home, ".openhands/skills/alone.md"): "USER-ALONE",
		filepath.Join(work, ".openhands/skills/style.md"): "PROJECT-STYLE",
	})
	org := t.TempDir()
	writeFiles(t, map[string]string{
		filepath.Join(org, "skills/style.md"): "ORG-STYLE",
		filepath.Join(org, "skills/tone.md"):  "ORG-TONE",
	})
	gitRun(t, org, "init", "-q", "-b", "main")
	gitRun(t, org, "add", "-A")
	gitRun(t, org, "commit", "-qm", "org")
	srv := startServeProc(t, home, work, []string{"EXTENSIONS_REPO=", "EXTENSIONS_PATH=" + t.TempDir()}, "--autotitle=false")

	start := func(skills string, want int) string {
		t.Helper()
		body := `{"agent":{"kind":"Agent","llm":{"model":"openai/gpt-4o","base_url":"` + m.URL + `/v1","api_key":"k","usage_id":"agent","num_retries":0},` +
			`"tools":[],"agent_context":{"skills":` + skills + `,"load_user_skills":true,"load_project_skills":true}},` +
			`"workspace":{"kind":"LocalWorkspace","working_dir":` + quote(work) + `},` +
			`"initial_message":{"role":"user","content":[{"type":"text","text":"say hi"}],"run":true}}`
		var info struct {
			ID string `json:"id"`
		}
		srv.do("POST", "/api/conversations", body, want, &info)
		return info.ID
	}
	id := start(`[{"name":"style","content":"EXPLICIT-STYLE-LOSES","trigger":null},{"name":"tone","content":"EXPLICIT-TONE","trigger":null}]`, http.StatusCreated)
	srv.waitStatus(id, time.Minute, "finished")
	body := string(m.LastRequest().RawBody)
	for _, want := range []string{"PROJECT-STYLE", "EXPLICIT-TONE", "USER-ALONE"} {
		if strings.Count(body, want) != 1 {
			t.Errorf("the model was sent %q %d times, want once", want, strings.Count(body, want))
		}
	}
	if strings.Contains(body, "-LOSES") {
		t.Errorf("a shadowed skill reached the model:\n%s", body)
	}
	start(`[{"name":"tone","content":"A","trigger":null},{"name":"tone","content":"B","trigger":null}]`, http.StatusUnprocessableEntity)

	var got struct {
		Skills []struct {
			Name    string `json:"name"`
			Content string `json:"content"`
		} `json:"skills"`
	}
	req := `{"project_dir":` + quote(work) + `,"org_configs":[{"repository":"o/r","provider":"github","org_repo_url":` + quote("file://"+org) + `,"org_name":"o"}]}`
	srv.do("POST", "/api/skills", req, http.StatusOK, &got)
	contents := map[string]string{}
	for _, s := range got.Skills {
		if _, dup := contents[s.Name]; dup {
			t.Errorf("POST /api/skills lists %q twice", s.Name)
		}
		contents[s.Name] = s.Content
	}
	if contents["style"] != "PROJECT-STYLE" || contents["tone"] != "ORG-TONE" || contents["alone"] != "USER-ALONE" {
		t.Errorf("POST /api/skills: %v", contents)
	}
}

// hangingRemote accepts connections on loopback and never answers: a git
// remote (or any HTTP server) that hangs. It returns a URL of it.
func hangingRemote(t *testing.T, path string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return "http://" + ln.Addr().String() + path
}

// A plugin, skill or marketplace source that hangs fails within the fetch
// timeout ($GOHANDS_FETCH_TIMEOUT, a second here) with an error naming
// its URL, and nothing is installed or cached half-way: gohands run
// --plugin exits before asking the model; gohands serve refuses the
// install (400) and the conversation (400), and POST /api/skills answers
// without the hanging sources.
func TestE2EHangingSkillSources(t *testing.T) {
	t.Parallel()
	requireTool(t, "git")
	const timeout = "GOHANDS_FETCH_TIMEOUT=1s"
	hang := hangingRemote(t, "/tools.git")

	e := newE2E(t, finishReply("done"))
	e.env = append(e.env, timeout)
	began := time.Now()
	r := e.mustRun(1, e.args("--plugin", hang, "say hi")...)
	if took := time.Since(began); took > 30*time.Second {
		t.Errorf("gohands run took %s on a hanging plugin source", took)
	}
	if !strings.Contains(r.stderr, hang) || !strings.Contains(r.stderr, "no answer within 1s") || len(e.srv.Requests()) != 0 {
		t.Errorf("gohands run --plugin (hanging): requests %d, stderr:\n%s", len(e.srv.Requests()), r.stderr)
	}

	home, work := t.TempDir(), t.TempDir()
	srv := startServeProc(t, home, work, []string{timeout, "EXTENSIONS_REPO=" + hangingRemote(t, "/extensions.git"), "EXTENSIONS_PATH="}, "--autotitle=false")
	writeFiles(t, map[string]string{filepath.Join(home, ".openhands/skills/mine.md"): "USER-MINE"})
	var detail struct {
		Detail string `json:"detail"`
	}
	began = time.Now()
	srv.do("POST", "/api/skills/install", `{"source":`+quote(hang)+`}`, http.StatusBadRequest, &detail)
	if !strings.Contains(detail.Detail, hang) {
		t.Errorf("install: detail %q does not name %s", detail.Detail, hang)
	}
	var installed struct {
		Skills []any `json:"skills"`
	}
	srv.do("GET", "/api/skills/installed", "", http.StatusOK, &installed)
	if len(installed.Skills) != 0 {
		t.Errorf("a hanging source left installed skills: %v", installed.Skills)
	}
	for _, dir := range []string{".openhands/skills/installed", ".openhands/cache/plugins"} {
		var left []string
		filepath.WalkDir(filepath.Join(home, dir), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() || strings.HasPrefix(filepath.Base(p), ".fetch-") {
				left = append(left, p)
			}
			return nil
		})
		if len(left) > 0 {
			t.Errorf("a hanging fetch left files behind: %v", left)
		}
	}

	body := `{"agent":{"kind":"Agent","llm":{"model":"openai/gpt-4o","base_url":"` + e.srv.URL + `/v1","api_key":"k","num_retries":0},"tools":[]},` +
		`"workspace":{"kind":"LocalWorkspace","working_dir":` + quote(work) + `},"plugins":[{"source":` + quote(hang) + `}]}`
	detail.Detail = ""
	srv.do("POST", "/api/conversations", body, http.StatusBadRequest, &detail)
	if !strings.Contains(detail.Detail, hang) {
		t.Errorf("start with a hanging plugin: detail %q does not name %s", detail.Detail, hang)
	}

	var got struct {
		Skills []struct {
			Name string `json:"name"`
		} `json:"skills"`
		Sources map[string]int `json:"sources"`
	}
	req := `{"registered_marketplaces":[{"name":"m","source":` + quote(hang) + `,"auto_load":true}],` +
		`"org_configs":[{"repository":"o/r","provider":"github","org_repo_url":` + quote(hang) + `,"org_name":"o"}]}`
	srv.do("POST", "/api/skills", req, http.StatusOK, &got)
	if len(got.Skills) != 1 || got.Skills[0].Name != "mine" {
		t.Errorf("POST /api/skills with hanging sources: %+v", got)
	}
	if took := time.Since(began); took > time.Minute {
		t.Errorf("the server's answers took %s with a 1s fetch timeout", took)
	}
	if logs := srv.logs(); !strings.Contains(logs, hang) {
		t.Errorf("the server's log does not name the hanging source:\n%s", logs)
	}
}
