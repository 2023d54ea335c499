package main

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gohands/gohands/agent/switchllm"
	"github.com/gohands/gohands/agent/visioninspect"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/mcp/oauthtest"
)

// writeSettings writes the settings file of e's $HOME.
func (e *e2e) writeSettings(json string) {
	e.t.Helper()
	if err := os.MkdirAll(filepath.Join(e.home, ".gohands"), 0o700); err != nil {
		e.t.Fatal(err)
	}
	writeFile(e.t, filepath.Join(e.home, ".gohands", "settings.json"), json)
}

// profileJSON is an LLM profile of model at e's scripted server.
func (e *e2e) profileJSON(model string) string {
	return `{"model":"openai/` + model + `","base_url":"` + e.srv.URL + `/v1","api_key":"k","num_retries":0}`
}

// requestModels lists the model of each request the scripted server got.
func requestModels(reqs []llmtest.Request) string {
	models := make([]string, len(reqs))
	for i, r := range reqs {
		models[i], _ = r.Body["model"].(string)
	}
	return strings.Join(models, ",")
}

// gohands run --tool switch_llm offers the built-in switch_llm tool with
// the settings' llm_profiles; the model switches to one and its next step
// runs on that profile's model.
func TestE2ERunSwitchLLMTool(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_s", "switch_llm", map[string]any{"profile_name": "strong", "reason": "hard step"})}},
		finishReply("done on strong"))
	e.writeSettings(`{"llm_profiles":{"strong":` + e.profileJSON("strong-1") + `}}`)
	e.mustRun(0, e.args("--tool", "switch_llm", "solve it")...)
	reqs := e.srv.Requests()
	if got := requestModels(reqs); got != "gpt-4o,strong-1" {
		t.Fatalf("models called: %s", got)
	}
	if body := string(reqs[0].RawBody); !strings.Contains(body, `"name":"switch_llm"`) || !strings.Contains(body, "- strong") {
		t.Fatalf("the model was not offered switch_llm with the profiles: %s", body)
	}
	evs, _ := e.events()
	var found bool
	for _, o := range ofKind[*event.ObservationEvent](evs) {
		if s, ok := o.Observation.(*switchllm.Observation); ok {
			found = !s.IsError && s.ActiveModel != nil && *s.ActiveModel == "openai/strong-1"
		}
	}
	if !found {
		t.Fatalf("no successful SwitchLLMObservation: %v", kinds(evs))
	}
	// Without the flag the tool is not offered.
	e2 := newE2E(t, finishReply("done"))
	e2.writeSettings(`{"llm_profiles":{"strong":` + e2.profileJSON("strong-1") + `}}`)
	e2.mustRun(0, e2.args("solve it")...)
	if strings.Contains(string(e2.srv.LastRequest().RawBody), `"switch_llm"`) {
		t.Error("switch_llm offered without --tool switch_llm")
	}
}

// writeFiles writes files (path → content), making their directories.
func writeFiles(t *testing.T, files map[string]string) {
	t.Helper()
	for p, body := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// gitRun runs git in dir.
func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// gohands run --plugin loads plugins by source, as a start request's
// plugins: a directory's skills, hooks and MCP servers (connected by the
// agent beside the --mcp-config ones gohands connects), and a git
// repository at the ref after #.
func TestE2ERunPluginSource(t *testing.T) {
	t.Parallel()
	requireTool(t, "git")
	e := newE2E(t, finishReply("done"))
	dir := t.TempDir()
	marker := filepath.Join(t.TempDir(), "hook-ran")
	writeFiles(t, map[string]string{
		filepath.Join(dir, ".plugin/plugin.json"): `{"name": "local-tools"}`,
		filepath.Join(dir, "skills/tip.md"):       "DIR-PLUGIN-SKILL",
		filepath.Join(dir, "hooks/hooks.json"):    `{"SessionStart": [{"hooks": [{"type": "command", "command": "touch ` + marker + `"}]}]}`,
		filepath.Join(dir, ".mcp.json"):           `{"mcpServers": {"plugin-srv": {"url": "` + echoMCPServer(t, "plugin_echo") + `"}}}`,
	})
	mcpFile := filepath.Join(t.TempDir(), "mcp.json")
	writeFiles(t, map[string]string{mcpFile: `{"mcpServers": {"own-srv": {"command": "` + filepath.Join(dir, "no-such-server") + `"}}}`})
	repo := t.TempDir()
	writeFiles(t, map[string]string{
		filepath.Join(repo, ".plugin/plugin.json"): `{"name": "pinned"}`,
		filepath.Join(repo, "skills/pin.md"):       "GIT-PLUGIN-V1",
	})
	gitRun(t, repo, "init", "-q", "-b", "main")
	gitRun(t, repo, "add", "-A")
	gitRun(t, repo, "commit", "-qm", "v1")
	gitRun(t, repo, "tag", "v1")
	writeFiles(t, map[string]string{filepath.Join(repo, "skills/pin.md"): "GIT-PLUGIN-V2"})
	gitRun(t, repo, "commit", "-qam", "v2")

	r := e.mustRun(0, e.args("--mcp-config", mcpFile, "--plugin", dir, "--plugin", "file://"+repo+"#v1", "say hi")...)
	body := string(e.srv.LastRequest().RawBody)
	for _, want := range []string{"DIR-PLUGIN-SKILL", "GIT-PLUGIN-V1", `"plugin_echo"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the model was not sent %q", want)
		}
	}
	if strings.Contains(body, "GIT-PLUGIN-V2") {
		t.Error("the git plugin was not taken at the ref v1")
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the plugin's SessionStart hook did not run: %v", err)
	}
	if n := strings.Count(r.stderr, `MCP server "own-srv" did not start`); n != 1 {
		t.Errorf("stderr reports the --mcp-config server %d times, want once:\n%s", n, r.stderr)
	}
	// A source that cannot be fetched fails the run before it starts.
	e2 := newE2E(t)
	r = e2.mustRun(1, e2.args("--plugin", filepath.Join(dir, "missing"), "say hi")...)
	if !strings.Contains(r.stderr, "plugin cannot be loaded") || !strings.Contains(r.stderr, filepath.Join(dir, "missing")) || len(e2.srv.Requests()) != 0 {
		t.Errorf("a missing plugin: %s", r.stderr)
	}
}

// The settings' load_public_skills and registered_marketplaces reach
// gohands run's agent context: the public skills (a local copy named by
// $EXTENSIONS_PATH) and what a registered marketplace auto-loads are
// sent to the model.
func TestE2ERunPublicSkillsAndMarketplaces(t *testing.T) {
	t.Parallel()
	e := newE2E(t, finishReply("done"), finishReply("done"))
	ext, market := t.TempDir(), t.TempDir()
	writeFiles(t, map[string]string{
		filepath.Join(ext, "skills/pubtip/SKILL.md"):                 "---\nname: pubtip\ndescription: PUBLIC-SKILL-DESCRIPTION\n---\nPublic body.",
		filepath.Join(market, ".plugin/marketplace.json"):            `{"name": "company", "owner": {"name": "Tools"}, "plugins": [{"name": "weather", "source": "./plugins/weather"}, {"name": "skipped", "source": "./plugins/skipped"}], "skills": [{"name": "greet", "source": "./skills/greet"}]}`,
		filepath.Join(market, "plugins/weather/.plugin/plugin.json"): `{"name": "weather"}`,
		filepath.Join(market, "plugins/weather/skills/now.md"):       "MARKET-PLUGIN-SKILL",
		filepath.Join(market, "plugins/skipped/.plugin/plugin.json"): `{"name": "skipped"}`,
		filepath.Join(market, "plugins/skipped/skills/no.md"):        "NOT-AUTO-LOADED",
		filepath.Join(market, "skills/greet/SKILL.md"):               "---\nname: greet\ndescription: MARKET-STANDALONE-SKILL\n---\nGreet.",
	})
	e.env = append(e.env, "EXTENSIONS_PATH="+ext, "OH_PERSISTENCE_DIR="+filepath.Join(e.home, ".openhands"))
	// Without the settings, neither is loaded.
	e.mustRun(0, e.args("say hi")...)
	body := string(e.srv.LastRequest().RawBody)
	for _, absent := range []string{"PUBLIC-SKILL-DESCRIPTION", "MARKET-PLUGIN-SKILL", "MARKET-STANDALONE-SKILL"} {
		if strings.Contains(body, absent) {
			t.Fatalf("%q sent without the settings", absent)
		}
	}
	e.writeSettings(`{"load_public_skills": true, "registered_marketplaces": [{"name": "company", "source": "` + market + `", "auto_load": ["weather", "greet"]}]}`)
	e.id = uuid.NewString()
	e.mustRun(0, e.args("say hi")...)
	body = string(e.srv.LastRequest().RawBody)
	for _, want := range []string{"PUBLIC-SKILL-DESCRIPTION", "MARKET-PLUGIN-SKILL", "MARKET-STANDALONE-SKILL"} {
		if !strings.Contains(body, want) {
			t.Errorf("the model was not sent %q", want)
		}
	}
	if strings.Contains(body, "NOT-AUTO-LOADED") {
		t.Error("a plugin the registration does not auto-load was sent")
	}
	// A registration without a source is refused.
	e.writeSettings(`{"registered_marketplaces": [{"name": "company"}]}`)
	if r := e.mustRun(2, e.args("say hi")...); !strings.Contains(r.stderr, "registered_marketplaces[0]") {
		t.Errorf("bad registration: %s", r.stderr)
	}
}

// gohands run --meta-profile NAME gives the agent route_task_to_model
// with that stored meta-profile (not the first one stored): the
// classifier profile is asked, and the next step runs on the chosen
// class's profile. An unknown name is a usage error.
func TestE2ERunMetaProfile(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_r", "route_task_to_model", map[string]any{})}},
		llmtest.Reply{Text: "2"},
		finishReply("routed"))
	e.writeSettings(`{"llm_profiles":{"cls":` + e.profileJSON("cls-1") + `,"strong":` + e.profileJSON("strong-1") + `,"cheap":` + e.profileJSON("cheap-1") + `}}`)
	store := filepath.Join(e.home, "oh")
	e.env = append(e.env, "OH_PERSISTENCE_DIR="+store)
	writeFiles(t, map[string]string{
		filepath.Join(store, "meta-profiles/aaa.json"):   `{"classifier_model":"cls","classes":[{"description":"anything","model":"cheap"},{"description":"else","model":"cheap"}]}`,
		filepath.Join(store, "meta-profiles/route.json"): `{"classifier_model":"cls","classes":[{"description":"routine edits","model":"cheap"},{"description":"hard algorithms","model":"strong"}]}`,
	})
	e.mustRun(0, e.args("--meta-profile", "route", "write a faster sort")...)
	reqs := e.srv.Requests()
	if got := requestModels(reqs); got != "gpt-4o,cls-1,strong-1" {
		t.Fatalf("models called: %s", got)
	}
	if c := string(reqs[1].RawBody); !strings.Contains(c, "hard algorithms") || !strings.Contains(c, "write a faster sort") {
		t.Errorf("classifier call: %s", c)
	}
	evs, _ := e.events()
	var found bool
	for _, o := range ofKind[*event.ObservationEvent](evs) {
		if c, ok := o.Observation.(*event.ClassifyAndSwitchLLMObservation); ok {
			found = !c.IsError && c.Model == "strong" && c.ActiveModel == "openai/strong-1"
		}
	}
	if !found {
		t.Fatalf("no successful routing observation: %v", kinds(evs))
	}
	if r := e.mustRun(2, e.args("--meta-profile", "nope", "again")...); !strings.Contains(r.stderr, "nope.json") {
		t.Errorf("unknown meta-profile: %s", r.stderr)
	}
}

// gohands skills install puts a skill where gohands run loads it (its
// description reaches the model); a second install needs --force; list
// shows it. gohands skills sync fetches the public repository
// ($EXTENSIONS_REPO) again: a commit made since is on disk afterwards.
func TestE2ESkillsInstallAndSync(t *testing.T) {
	t.Parallel()
	requireTool(t, "git")
	e := newE2E(t, finishReply("done"))
	src := filepath.Join(t.TempDir(), "deploy-notes")
	writeFiles(t, map[string]string{
		filepath.Join(src, "SKILL.md"): "---\nname: deploy-notes\ndescription: INSTALLED-SKILL-DESCRIPTION\n---\nHow we deploy.",
	})
	r := e.mustRun(0, "skills", "install", src)
	if !strings.Contains(r.stdout, "Installed skill deploy-notes") {
		t.Fatalf("install: %s", r.stdout)
	}
	if r := e.mustRun(2, "skills", "install", src); !strings.Contains(r.stderr, "--force") {
		t.Errorf("second install: %s", r.stderr)
	}
	e.mustRun(0, "skills", "install", "--force", src)
	if r := e.mustRun(0, "skills", "list"); !strings.Contains(r.stdout, "deploy-notes") || !strings.Contains(r.stdout, "INSTALLED-SKILL-DESCRIPTION") {
		t.Errorf("list: %s", r.stdout)
	}
	e.mustRun(0, e.args("say hi")...)
	if !strings.Contains(string(e.srv.LastRequest().RawBody), "INSTALLED-SKILL-DESCRIPTION") {
		t.Error("the installed skill did not reach the model")
	}

	repo := t.TempDir()
	writeFiles(t, map[string]string{filepath.Join(repo, "skills/pub/SKILL.md"): "---\nname: pub\ndescription: V1\n---\nv1"})
	gitRun(t, repo, "init", "-q", "-b", "main")
	gitRun(t, repo, "add", "-A")
	gitRun(t, repo, "commit", "-qm", "v1")
	e.env = append(e.env, "EXTENSIONS_REPO=file://"+repo, "EXTENSIONS_REF=main")
	synced := func() string {
		r := e.mustRun(0, "skills", "sync")
		dir, ok := strings.CutPrefix(strings.TrimSpace(r.stdout), "Synced the public skills in ")
		if !ok {
			t.Fatalf("sync: %s", r.stdout)
		}
		b, err := os.ReadFile(filepath.Join(dir, "skills/pub/SKILL.md"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := synced(); !strings.Contains(got, "V1") {
		t.Fatalf("first sync: %s", got)
	}
	writeFiles(t, map[string]string{filepath.Join(repo, "skills/pub/SKILL.md"): "---\nname: pub\ndescription: V2\n---\nv2"})
	gitRun(t, repo, "commit", "-qam", "v2")
	if got := synced(); !strings.Contains(got, "V2") {
		t.Fatalf("second sync: %s", got)
	}
	e.env = append(e.env, "EXTENSIONS_REPO=file://"+filepath.Join(repo, "gone"))
	e.mustRun(1, "skills", "sync")
}

// onePixelPNG is a 1×1 PNG.
const onePixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="

// gohands run --attach-image FILE sends the image with the task; a model that
// cannot see images, with a vision profile saved, gets
// inspect_image_with_vision, whose call sends the image and the question
// to the profile's model. A file that is no image is a usage error.
func TestE2ERunImageVision(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_v", "inspect_image_with_vision", map[string]any{"image_index": 0, "question": "What colour is the square?"})}},
		llmtest.Reply{Text: "Red."},
		finishReply("it is red"))
	e.writeSettings(`{"llm_profiles":{"eye":` + e.profileJSON("gpt-4o") + `}}`)
	png, err := base64.StdEncoding.DecodeString(onePixelPNG)
	if err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(t.TempDir(), "square.png")
	writeFile(t, img, string(png))
	e.mustRun(0, e.args("--model", "openai/gpt-3.5-turbo", "--attach-image", img, "what is in the picture?")...)
	reqs := e.srv.Requests()
	if got := requestModels(reqs); got != "gpt-3.5-turbo,gpt-4o,gpt-3.5-turbo" {
		t.Fatalf("models called: %s", got)
	}
	if !strings.Contains(string(reqs[0].RawBody), `"inspect_image_with_vision"`) {
		t.Fatal("the agent was not offered inspect_image_with_vision")
	}
	vision := string(reqs[1].RawBody)
	if !strings.Contains(vision, "What colour is the square?") || !strings.Contains(vision, "data:image/png;base64,"+onePixelPNG) {
		t.Fatalf("vision call: %s", vision)
	}
	evs, _ := e.events()
	var found bool
	for _, o := range ofKind[*event.ObservationEvent](evs) {
		if v, ok := o.Observation.(*visioninspect.Observation); ok {
			found = !v.IsError && v.Answer != nil && *v.Answer == "Red."
		}
	}
	if !found {
		t.Fatalf("no vision observation: %v", kinds(evs))
	}
	notImage := filepath.Join(t.TempDir(), "notes.txt")
	writeFile(t, notImage, "plain text")
	if r := e.mustRun(2, e.args("--attach-image", notImage, "look")...); !strings.Contains(r.stderr, "not a PNG") {
		t.Errorf("a text file as --attach-image: %s", r.stderr)
	}
}

// waitLine waits until a line of the process's standard output starts
// with prefix and returns it.
func (p *proc) waitLine(prefix string, limit time.Duration) string {
	p.t.Helper()
	deadline := time.After(limit)
	for {
		for _, l := range p.snapshot() {
			if strings.HasPrefix(l, prefix) {
				return l
			}
		}
		select {
		case <-p.cond:
		case <-p.done:
			for _, l := range p.snapshot() {
				if strings.HasPrefix(l, prefix) {
					return l
				}
			}
			p.t.Fatalf("gohands ended without printing %q: %v\nstderr:\n%s", prefix, p.err, p.stderr.String())
		case <-deadline:
			p.t.Fatalf("no line %q within %s; stderr:\n%s", prefix, limit, p.stderr.String())
		}
	}
}

// gohands mcp add --oauth and gohands mcp login: the user (here an HTTP
// client) follows the printed authorization address of a loopback OAuth
// server, which redirects to gohands' loopback callback; the tokens are
// saved in the settings, and gohands run then calls the server's tool
// with them.
func TestE2EMCPLogin(t *testing.T) {
	t.Parallel()
	as := oauthtest.New(t)
	e := newE2E(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_w", "whoami", map[string]any{})}},
		finishReply("asked"))
	e.mustRun(0, "mcp", "add", "tracker", "--url", as.URL, "--oauth")
	if r := e.mustRun(2, "mcp", "login", "nope"); !strings.Contains(r.stderr, `no MCP server "nope"`) {
		t.Errorf("login to an unknown server: %s", r.stderr)
	}

	p := e.start("mcp", "login", "--no-browser", "tracker")
	authURL := p.waitLine("http://", time.Minute)
	resp, err := http.Get(authURL) // follows the redirect to gohands' callback
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "signed in") {
		t.Fatalf("callback page %d: %s", resp.StatusCode, page)
	}
	if r := p.wait(time.Minute); r.code != 0 || !strings.Contains(r.stdout, "Signed in to tracker") {
		t.Fatalf("login: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if reg, exch, _ := as.Counts(); reg != 1 || exch != 1 {
		t.Fatalf("registered %d clients, exchanged %d codes", reg, exch)
	}
	data, err := os.ReadFile(filepath.Join(e.home, ".gohands", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		MCPServers map[string]struct {
			Auth struct {
				State struct {
					Tokens struct {
						AccessToken string `json:"access_token"`
					} `json:"tokens"`
				} `json:"state"`
			} `json:"auth"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	if tok := st.MCPServers["tracker"].Auth.State.Tokens.AccessToken; tok == "" || strings.Contains(tok, "*") {
		t.Fatalf("saved access token %q", tok)
	}

	e.mustRun(0, e.args("who am I?")...)
	_, texts := toolResults(t, e.srv.LastRequest())
	if len(texts) != 1 || !strings.Contains(texts[0], "caller tester") {
		t.Fatalf("whoami result %q", texts)
	}
}

// gohands run --server --plugin sends the plugins in the start request:
// the agent server loads them, its model is sent the plugin's skill and
// the plugin's hook runs.
func TestE2ERunServerPlugin(t *testing.T) {
	t.Parallel()
	url := startAgentServer(t)
	e := newE2E(t, finishReply("done"))
	dir := t.TempDir()
	marker := filepath.Join(t.TempDir(), "hook-ran")
	writeFiles(t, map[string]string{
		filepath.Join(dir, ".plugin/plugin.json"): `{"name": "remote-tools"}`,
		filepath.Join(dir, "skills/tip.md"):       "SERVER-PLUGIN-SKILL",
		filepath.Join(dir, "hooks/hooks.json"):    `{"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "touch ` + marker + `"}]}]}`,
	})
	e.mustRun(0, "run", "--server", url, "--session-key", "k", "--workspace", e.work,
		"--llm-config", e.config, "--plugin", dir, "say hi")
	if body := string(e.srv.LastRequest().RawBody); !strings.Contains(body, "SERVER-PLUGIN-SKILL") {
		t.Error("the model was not sent the plugin's skill")
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the plugin's UserPromptSubmit hook did not run: %v", err)
	}
}
