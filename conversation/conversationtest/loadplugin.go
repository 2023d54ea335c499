package conversationtest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/plugin"
)

// Marks of the plugin the LoadPlugin scenarios load.
const (
	// pluginSkillBody is the body of its skill, triggered by "frobnicate".
	pluginSkillBody = "PLUGIN-SKILL-BODY"
	// pluginTool is the tool of its MCP server.
	pluginTool = "plugin_echo"
	// hookMark is the file its UserPromptSubmit hook makes in the
	// working directory.
	hookMark = "plugin-hook-ran"
)

// marketplace writes a marketplace "conformance" with two plugins:
// "helper", whose skill answers "frobnicate" and whose MCP server (on
// loopback, for the test) has the tool pluginTool, and "broken", whose
// manifest does not parse. It returns the agent context registering it.
func marketplace(t *testing.T) json.RawMessage {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "conformance-plugin", Version: "1"}, nil)
	type echoArgs struct {
		Text string `json:"text"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: pluginTool, Description: "Echoes its text"}, func(_ context.Context, _ *sdk.CallToolRequest, in echoArgs) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Text}}}, nil, nil
	})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(hs.Close)

	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		".plugin/marketplace.json":             `{"name": "conformance", "owner": {"name": "gohands"}, "plugins": [{"name": "helper", "source": "./plugins/helper"}, {"name": "broken", "source": "./plugins/broken"}]}`,
		"plugins/helper/.plugin/plugin.json":   `{"name": "helper", "version": "1.0.0", "description": "Helps"}`,
		"plugins/helper/skills/frob/SKILL.md":  "---\nname: frob\ndescription: How to frobnicate\ntriggers: [frobnicate]\n---\n" + pluginSkillBody,
		"plugins/helper/.mcp.json":             `{"mcpServers": {"plugtools": {"url": "` + hs.URL + `"}}}`,
		"plugins/helper/hooks/hooks.json":      `{"hooks": {"UserPromptSubmit": [{"matcher": "*", "hooks": [{"type": "command", "command": "touch ` + hookMark + `"}]}]}}`,
		"plugins/broken/.plugin/plugin.json":   `{"name": "broken",`,
		"plugins/broken/skills/never/SKILL.md": "---\nname: never\ndescription: Never loaded\n---\nnever",
	})
	ac, err := json.Marshal(map[string]any{"registered_marketplaces": []any{map[string]any{"name": "conformance", "source": dir}}})
	if err != nil {
		t.Fatal(err)
	}
	return ac
}

// storedAgentHas waits until the conversation's stored agent (for a
// remote one, as its server last said) holds want.
func storedAgentHas(t *testing.T, c conversation.Conversation, want string) {
	t.Helper()
	eventually(t, "the stored agent to hold "+want, func() bool {
		b, err := json.Marshal(c.State().Fields().Agent)
		return err == nil && strings.Contains(string(b), want)
	})
}

// requestsWith counts the agent's model requests that hold s.
func (m *model) requestsWith(s string) int {
	n := 0
	for _, r := range m.srv.Requests() {
		if strings.Contains(string(r.RawBody), s) {
			n++
		}
	}
	return n
}

// RunLoadPlugin runs the LoadPlugin scenario alone, for a conversation
// kind Run is not for (a remote one on the reference's server, whose
// load_plugin holds its caller until the step in progress ends, so that
// LoadPluginDuringRun does not apply).
func RunLoadPlugin(t *testing.T, open Open) { testLoadPlugin(t, open) }

// A plugin loaded between runs: what is not there is plugin.ErrNotFound,
// what cannot be loaded ErrCannotLoadPlugin, neither changes the agent;
// the plugin's skill answers the next message that triggers it, its MCP
// server's tool is offered to the model, its hook runs on that message,
// and the stored agent has its skill and server.
func testLoadPlugin(t *testing.T, open Open) {
	m := newModel(t)
	s := m.setup(t)
	s.AgentContext = marketplace(t)
	c := open(t, s)
	t.Cleanup(func() { c.Close() })
	turn(t, c, "hello")
	for ref, want := range map[string]error{
		"nothing":             plugin.ErrNotFound,
		"helper@elsewhere":    plugin.ErrNotFound,
		"nothing@conformance": plugin.ErrNotFound,
		"broken":              conversation.ErrCannotLoadPlugin,
		"":                    conversation.ErrCannotLoadPlugin,
		"helper@":             conversation.ErrCannotLoadPlugin,
	} {
		if err := c.LoadPlugin(t.Context(), ref); !errors.Is(err, want) {
			t.Errorf("LoadPlugin(%q) = %v, want %v", ref, err, want)
		}
	}
	if b, _ := json.Marshal(c.State().Fields().Agent); strings.Contains(string(b), "never") {
		t.Fatal("a plugin that failed to load reached the stored agent")
	}
	if n := m.requestsWith(pluginTool); n != 0 {
		t.Fatalf("%d requests offered the plugin's tool before it was loaded", n)
	}
	if err := c.LoadPlugin(t.Context(), "helper@conformance"); err != nil {
		t.Fatalf("LoadPlugin: %v", err)
	}
	storedAgentHas(t, c, "frob")
	storedAgentHas(t, c, "plugtools")
	if _, err := os.Stat(filepath.Join(s.WorkDir, hookMark)); err == nil {
		t.Fatal("the plugin's hook ran before the plugin was loaded")
	}
	turn(t, c, "please frobnicate")
	if _, err := os.Stat(filepath.Join(s.WorkDir, hookMark)); err != nil {
		t.Errorf("the plugin's UserPromptSubmit hook did not run: %v", err)
	}
	last := string(m.srv.LastRequest().RawBody)
	if !strings.Contains(last, pluginSkillBody) {
		t.Error("the plugin's skill did not reach the model")
	}
	if !strings.Contains(last, `"`+pluginTool+`"`) {
		t.Error("the plugin's MCP tool was not offered to the model")
	}
}

// A plugin loaded during a run joins before the run's next step:
// LoadPlugin returns while the step is still under way, and the model's
// next request offers the plugin's tool.
func testLoadPluginDuringRun(t *testing.T, open Open) {
	m := newModel(t, echo)
	entered, release := make(chan struct{}), make(chan struct{})
	m.gate.Store(&gate{entered: entered, release: release})
	s := m.setup(t)
	s.AgentContext = marketplace(t)
	c := open(t, s)
	t.Cleanup(func() { c.Close() })
	if err := c.SendMessage(t.Context(), event.UserMessage("work")); err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- c.Run(t.Context()) }()
	<-entered // the first step asks the model
	loaded := make(chan error, 1)
	go func() { loaded <- c.LoadPlugin(t.Context(), "helper") }()
	var err error
	select {
	case err = <-loaded:
	case <-time.After(time.Minute): // a hang guard
		err = errors.New("it waited a minute for the step in progress")
	}
	close(release)
	if err != nil {
		t.Fatalf("LoadPlugin during a run: %v", err)
	}
	if err := <-ran; err != nil {
		t.Fatalf("Run: %v", err)
	}
	reqs := m.srv.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d model requests, want the step's and the next", len(reqs))
	}
	if strings.Contains(string(reqs[0].RawBody), pluginTool) {
		t.Error("the step in progress was offered the plugin's tool")
	}
	if !strings.Contains(string(reqs[len(reqs)-1].RawBody), `"`+pluginTool+`"`) {
		t.Error("the step after the load was not offered the plugin's tool")
	}
}

// writeFiles writes files (slash paths under dir to contents).
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A conversation opened with plugins (a directory source) has them from
// its first run: the plugin's skill answers the message that triggers
// it, its hook runs on that message, and the stored agent has the skill.
func testStartWithPlugins(t *testing.T, open Open) {
	m := newModel(t)
	s := m.setup(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		".plugin/plugin.json":  `{"name": "starter", "version": "1.0.0"}`,
		"skills/frob/SKILL.md": "---\nname: frob\ndescription: How to frobnicate\ntriggers: [frobnicate]\n---\n" + pluginSkillBody,
		"hooks/hooks.json":     `{"hooks": {"UserPromptSubmit": [{"matcher": "*", "hooks": [{"type": "command", "command": "touch ` + hookMark + `"}]}]}}`,
	})
	s.Plugins = []plugin.Source{{Source: dir}}
	c := open(t, s)
	t.Cleanup(func() { c.Close() })
	turn(t, c, "please frobnicate")
	if _, err := os.Stat(filepath.Join(s.WorkDir, hookMark)); err != nil {
		t.Errorf("the plugin's UserPromptSubmit hook did not run: %v", err)
	}
	if !strings.Contains(string(m.srv.LastRequest().RawBody), pluginSkillBody) {
		t.Error("the plugin's skill did not reach the model")
	}
	// The stored agent (a remote one's mirror of the server's) has it.
	if b, err := json.Marshal(c.State().Fields().Agent); err != nil || !strings.Contains(string(b), pluginSkillBody) {
		t.Errorf("the stored agent has not the plugin's skill: %s %v", b, err)
	}
}
