package pyclient_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gohands/gohands/llm/llmtest"
)

// livePlugins compares plugins on the two servers, from the same sources:
//   - installed: POST /api/plugins/install of a local plugin directory,
//     then GET /api/plugins/installed and /installed/{name}: the same
//     JSON but the install's time and each server's own directory;
//   - start: a start request whose plugins are a local plugin directory
//     (a skill, an MCP server on loopback, a UserPromptSubmit hook) and a
//     local git repository (a skill), the installed plugin being ambient:
//     after the first run, the stored agent has the same skills of the
//     start's plugins (names and contents), the same MCP servers and the
//     same plugins record; the installed plugin's skill is named in the
//     system message and stored in the agent on both;
//     the first model request offers the same tools and brings the same
//     triggered skills into the user message (their file's place and
//     body; the words around them are each server's own); the hook ran
//     on both.
func livePlugins(t *testing.T, p *livePair) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "alpha-tools", Version: "1"}, nil)
	type echoArgs struct {
		Text string `json:"text"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "alpha_echo", Description: "Echoes its text"}, func(_ context.Context, _ *sdk.CallToolRequest, in echoArgs) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Text}}}, nil, nil
	})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(hs.Close)

	root := resolved(t, t.TempDir())
	alpha := filepath.Join(root, "alpha")
	writeFile(t, filepath.Join(alpha, ".plugin/plugin.json"), `{"name": "alpha", "version": "1.0.0", "description": "The alpha plugin"}`)
	writeFile(t, filepath.Join(alpha, "skills/alpha-skill/SKILL.md"), "---\nname: alpha-skill\ndescription: Alpha's skill\ntriggers: [alphaword]\n---\nALPHA-SKILL-BODY\n")
	writeFile(t, filepath.Join(alpha, ".mcp.json"), `{"mcpServers": {"alphatools": {"url": "`+hs.URL+`"}}}`)
	writeFile(t, filepath.Join(alpha, "hooks/hooks.json"), `{"hooks": {"UserPromptSubmit": [{"matcher": "*", "hooks": [{"type": "command", "command": "touch alpha-hook-ran"}]}]}}`)
	beta := filepath.Join(root, "beta")
	writeFile(t, filepath.Join(beta, ".plugin/plugin.json"), `{"name": "beta", "version": "2.0.0", "description": "The beta plugin"}`)
	writeFile(t, filepath.Join(beta, "skills/beta-skill/SKILL.md"), "---\nname: beta-skill\ndescription: Beta's skill\ntriggers: [betaword]\n---\nBETA-SKILL-BODY\n")
	gitRepo(t, beta)
	gamma := filepath.Join(root, "gamma")
	writeFile(t, filepath.Join(gamma, ".plugin/plugin.json"), `{"name": "gamma", "version": "0.3.0", "description": "An installed plugin"}`)
	writeFile(t, filepath.Join(gamma, "skills/gamma-skill/SKILL.md"), "---\nname: gamma-skill\ndescription: Gamma's skill\n---\nGAMMA-SKILL-BODY\n")

	home := func(srv *server) string {
		return map[string]string{"reference": p.refHome, "gohands": p.goHome}[srv.name]
	}
	t.Run("installed", func(t *testing.T) {
		ref, gh := both(p, func(srv *server) []any {
			c := p.client(srv)
			var out []any
			var installed, list, one map[string]any
			if _, err := c.do(t.Context(), "POST", "/api/plugins/install", map[string]any{"source": gamma}, &installed); err != nil {
				t.Errorf("%s: %v", srv.name, err)
				return nil
			}
			if _, err := c.do(t.Context(), "GET", "/api/plugins/installed", nil, &list); err != nil {
				t.Errorf("%s: %v", srv.name, err)
			}
			if _, err := c.do(t.Context(), "GET", "/api/plugins/installed/gamma", nil, &one); err != nil {
				t.Errorf("%s: %v", srv.name, err)
			}
			subst := [][2]string{{home(srv), "<home>"}}
			for _, v := range []any{installed, list, one} {
				out = append(out, substitute(v, subst, "installed_at"))
			}
			out = append(out, refusal(t, c, "/api/plugins/install", map[string]any{"source": gamma}))
			return out
		})
		if diff := cmp.Diff(ref, gh); diff != "" {
			t.Errorf("install, list, get and a second install differ (-reference +gohands):\n%s", diff)
		}
		t.Logf("reference: %v", ref)
	})

	t.Run("start", func(t *testing.T) {
		ref, gh := both(p, func(srv *server) pluginRun {
			c := p.client(srv)
			short := map[string]string{"reference": "ref", "gohands": "go"}[srv.name]
			mark := "#plug-" + short
			p.model.handle(mark, func(llmtest.Request) llmtest.Reply { return finishCall("plugged") })
			work := resolved(t, t.TempDir())
			body := startBody(p.model.URL, work)
			body["plugins"] = []any{map[string]any{"source": alpha}, map[string]any{"source": "file://" + beta, "ref": "main"}}
			id := runTurn(t, c, srv, body, mark+": alphaword and betaword")
			var run pluginRun
			reqs := p.model.requests(mark)
			if len(reqs) == 0 {
				t.Errorf("%s: the model got no request", srv.name)
				return run
			}
			run.Tools = toolNames(reqs[0])
			_, user := systemAndUser(t, reqs[0])
			run.User = skillsShown(user)
			var info map[string]any
			if _, err := c.do(t.Context(), "GET", "/api/conversations/"+id+"?include_skills=true", nil, &info); err != nil {
				t.Errorf("%s: %v", srv.name, err)
				return run
			}
			agent, _ := info["agent"].(map[string]any)
			actx, _ := agent["agent_context"].(map[string]any)
			for _, s := range anyList(actx["skills"]) {
				sk, _ := s.(map[string]any)
				name, _ := sk["name"].(string)
				content, _ := sk["content"].(string)
				run.Skills = append(run.Skills, name+"="+strings.TrimSpace(content))
			}
			sort.Strings(run.Skills)
			// The installed plugin's skill is kept apart (Ambient).
			if i := slices.IndexFunc(run.Skills, func(s string) bool { return strings.HasPrefix(s, "gamma-skill=") }); i >= 0 {
				run.Skills = slices.Delete(run.Skills, i, i+1)
				run.Ambient = true
			}
			sys, _ := systemAndUser(t, reqs[0])
			run.AmbientOffered = strings.Contains(sys, "gamma-skill")
			mcp, _ := agent["mcp_config"].(map[string]any)
			servers, _ := mcp["mcpServers"].(map[string]any)
			if servers == nil {
				servers = mcp
			}
			for name := range servers {
				run.MCP = append(run.MCP, name)
			}
			sort.Strings(run.MCP)
			run.Plugins = substitute(info["plugins"], [][2]string{{home(srv), "<home>"}})
			_, err := os.Stat(filepath.Join(work, "alpha-hook-ran"))
			run.Hook = err == nil
			return run
		})
		if t.Failed() {
			return
		}
		t.Logf("reference: %+v", ref)
		t.Logf("gohands:   %+v", gh)
		if diff := cmp.Diff(ref, gh); diff != "" {
			t.Errorf("a start with plugins differs (-reference +gohands):\n%s", diff)
		}
		if !slices.Contains(ref.Tools, "alpha_echo") || !ref.Hook || !slices.Contains(ref.Skills, "beta-skill=BETA-SKILL-BODY") || !ref.AmbientOffered || !ref.Ambient {
			t.Errorf("a check of the test: the reference's plugins are not all in: %+v", ref)
		}
	})
}

// pluginRun is what livePlugins compares of one server's start.
type pluginRun struct {
	Tools   []string // the first model request's tools, sorted
	User    []string // the skills its user message brings in, in order
	Skills  []string // the stored agent's skills: name=content, sorted
	MCP     []string // the stored agent's MCP servers, sorted
	Plugins any      // the conversation's plugins record
	Hook    bool     // the plugin's UserPromptSubmit hook ran
	// Ambient: the installed plugin's skill is in the stored agent;
	// AmbientOffered: the first request's system message names it.
	Ambient, AmbientOffered bool
}

// skillsShown lists the triggered skills a user message brings in, in
// order: each one's body and the tail of its file's path.
func skillsShown(user string) []string {
	var out []string
	for _, block := range strings.Split(user, "<EXTRA_INFO>")[1:] {
		var body strings.Builder
		for _, b := range []string{"ALPHA-SKILL-BODY", "BETA-SKILL-BODY", "GAMMA-SKILL-BODY"} {
			if strings.Contains(block, b) {
				body.WriteString(b)
			}
		}
		file := ""
		if i := strings.Index(block, "/skills/"); i >= 0 {
			file, _, _ = strings.Cut(block[i:], "SKILL.md")
		}
		out = append(out, body.String()+" "+file)
	}
	return out
}
