package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
)

// acpClient is a Node program on the official ACP TypeScript SDK
// (@agentclientprotocol/sdk 2.4.0, installed by scripts/deps.d/40-npm.sh).
const acpClient = "../../agent/acp/testdata/npm/acp-client.mjs"

type acpClientReport struct {
	Init struct {
		ProtocolVersion int    `json:"protocolVersion"`
		LoadSession     bool   `json:"loadSession"`
		Name            string `json:"name"`
	} `json:"init"`
	SessionID   string   `json:"sessionId"`
	Modes       []string `json:"modes"`
	InitialMode string   `json:"initialMode"`
	Updates     []acpUpdate
	LoadUpdates []acpUpdate `json:"loadUpdates"`
	Permissions []struct {
		Title   string   `json:"title"`
		Kind    string   `json:"kind"`
		Options []string `json:"options"`
	} `json:"permissions"`
	StopReasons []string `json:"stopReasons"`
	Error       string   `json:"error"`
}

type acpUpdate struct {
	Kind   string `json:"kind"`
	Text   string `json:"text"`
	ID     string `json:"id"`
	Status string `json:"status"`
	Title  string `json:"title"`
	// Content are the types of a tool call's content ("content", "diff").
	Content []string `json:"content"`
	Diff    *struct {
		Path    string  `json:"path"`
		OldText *string `json:"oldText"`
		NewText string  `json:"newText"`
	} `json:"diff"`
}

// A real ACP client drives `gohands acp`: initialize, a new session in
// always-ask mode, a prompt whose file creation asks permission and
// streams a tool call, a prompt cancelled mid-call, session/load with the
// history replayed, and a prompt in the loaded session.
func TestACPClient(t *testing.T) {
	t.Parallel()
	node := testenv.Program(t, "node")
	if _, err := os.Stat(acpClient); err != nil {
		testenv.Missing(t, "%s and its node_modules (run scripts/deps.sh): %v", acpClient, err)
	}
	e := newE2E(t)
	e.srv.Add(
		llmtest.Reply{Reasoning: "A new file.", ToolCalls: []llmtest.ToolCall{call("c1", "file_editor", map[string]any{"command": "create", "path": filepath.Join(e.work, "hello.txt"), "file_text": "hi\n"})}},
		finishReply("Created hello.txt."),
		llmtest.Reply{Text: "slow", Delay: time.Minute},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("c2", "echo", map[string]any{"message": "hello-through-mcp"})}},
		finishReply("You are welcome."),
	)
	mcp, _ := json.Marshal([]any{map[string]any{"name": "everything", "command": "node", "args": []string{everythingScript(t), "stdio"}, "env": []any{}}})
	script, _ := filepath.Abs(acpClient)
	cmd := exec.Command(node, script, e.work, binPath, "acp", "--persistence-dir", e.data, "--llm-config", e.config)
	cmd.Env = append(e.env, "ACP_MCP="+string(mcp))
	cmd.Dir = filepath.Dir(script)
	out, stderr := runACPClient(t, cmd)
	var r acpClientReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("report %q: %v", out, err)
	}
	if r.Error != "" {
		t.Fatalf("client error: %s\nstderr: %s", r.Error, stderr)
	}
	if r.Init.ProtocolVersion != 1 || !r.Init.LoadSession || r.Init.Name != "gohands" {
		t.Errorf("initialize: %+v", r.Init)
	}
	if !slices.Equal(r.Modes, []string{"always-ask", "always-approve", "ask-risky"}) {
		t.Errorf("modes %v", r.Modes)
	}
	// Issue 32 item 6: a new session asks before actions, tool calls have
	// titles for people, and an edit comes as a diff.
	if r.InitialMode != "always-ask" {
		t.Errorf("a new session starts in mode %q, want always-ask", r.InitialMode)
	}
	hello := filepath.Join(e.work, "hello.txt")
	wantTitle := "Create `" + hello + "`"
	if len(r.Permissions) == 0 || r.Permissions[0].Title != wantTitle {
		t.Errorf("permission requests %+v, want the title %q", r.Permissions, wantTitle)
	}
	var sawTitle, sawDiff bool
	for _, u := range r.Updates {
		if u.Kind == "tool_call" && u.ID == "c1" {
			sawTitle = u.Title == wantTitle
		}
		if u.Kind == "tool_call_update" && u.ID == "c1" && u.Diff != nil {
			sawDiff = u.Diff.Path == hello && u.Diff.NewText == "hi\n" && u.Diff.OldText == nil
		}
	}
	if !sawTitle || !sawDiff {
		t.Errorf("the file creation's tool call: title shown %v, diff sent %v; updates %+v", sawTitle, sawDiff, r.Updates)
	}
	if !slices.Equal(r.StopReasons, []string{"end_turn", "cancelled", "end_turn"}) {
		t.Errorf("stop reasons %v", r.StopReasons)
	}
	if len(r.Permissions) != 2 || r.Permissions[0].Kind != "edit" || !slices.Contains(r.Permissions[0].Options, "allow_once") {
		t.Errorf("permission requests %+v", r.Permissions)
	}
	// The MCP server the client passed is a tool of the loaded session.
	reqs := e.srv.Requests()
	if _, texts := toolResults(t, reqs[len(reqs)-1]); !slices.ContainsFunc(texts, func(s string) bool { return strings.Contains(s, "hello-through-mcp") }) {
		t.Errorf("the model did not see the MCP tool's result: %q", texts)
	}
	if b, err := os.ReadFile(filepath.Join(e.work, "hello.txt")); err != nil || string(b) != "hi\n" {
		t.Errorf("hello.txt: %q, %v", b, err)
	}
	var seq []string
	for _, u := range r.Updates {
		seq = append(seq, u.Kind+":"+u.Status+u.Text)
	}
	for _, want := range []string{"agent_thought_chunk:A new file.", "tool_call:pending", "tool_call_update:completed", "agent_message_chunk:Created hello.txt.", "agent_message_chunk:You are welcome."} {
		if !slices.ContainsFunc(seq, func(s string) bool { return strings.HasPrefix(s, want) }) {
			t.Errorf("updates %q lack %q", seq, want)
		}
	}
	var replayed []string
	for _, u := range r.LoadUpdates {
		replayed = append(replayed, u.Kind+":"+u.Text)
	}
	for _, want := range []string{"user_message_chunk:create hello.txt", "agent_message_chunk:Created hello.txt.", "user_message_chunk:take your time"} {
		if !slices.Contains(replayed, want) {
			t.Errorf("replayed %q lack %q", replayed, want)
		}
	}
}

// claudeACP is Zed's Claude Agent ACP adapter (scripts/deps.d/40-npm.sh).
const claudeACP = "../../agent/acp/testdata/npm/node_modules/@zed-industries/claude-agent-acp/dist/index.js"

// `gohands run --acp` runs a task through a real ACP server, whose model
// is the scripted Anthropic server: the file it writes is there, its
// answer is the run's final message.
func TestRunACP(t *testing.T) {
	t.Parallel()
	node := testenv.Program(t, "node")
	if _, err := os.Stat(claudeACP); err != nil {
		testenv.Missing(t, "%s (run scripts/deps.sh): %v", claudeACP, err)
	}
	e := newE2E(t)
	target := filepath.Join(e.work, "hello.txt")
	llm := llmtest.NewAnthropic(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "Write", Arguments: llmtest.Args(map[string]any{"file_path": target, "content": "hello\n"})}}},
		llmtest.Reply{Text: "Wrote hello.txt."},
	)
	// Claude Code checks connectivity with a HEAD first; the scripted
	// server serves POSTs only.
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			return
		}
		u, _ := url.Parse(llm.URL)
		p := httputil.NewSingleHostReverseProxy(u)
		p.FlushInterval = -1
		p.ServeHTTP(w, r)
	}))
	defer front.Close()
	e.env = append(e.env, "ANTHROPIC_BASE_URL="+front.URL, "ANTHROPIC_API_KEY=sk-ant-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "IS_SANDBOX=1")
	script, _ := filepath.Abs(claudeACP)
	res := e.mustRun(0, e.args("--acp", node+" "+script, "write hello.txt")...)
	if b, err := os.ReadFile(target); err != nil || string(b) != "hello\n" {
		t.Fatalf("hello.txt: %q, %v\nstderr: %s", b, err, res.stderr)
	}
	if !strings.Contains(res.stdout, "Wrote hello.txt.") {
		t.Errorf("transcript lacks the answer:\n%s", res.stdout)
	}
	if e.status() != "finished" {
		t.Errorf("status %s", e.status())
	}
}

func TestSplitWords(t *testing.T) {
	t.Parallel()
	got, err := splitWords(`npx -y "@scope/pkg" --flag 'a b'`)
	if err != nil || !slices.Equal(got, []string{"npx", "-y", "@scope/pkg", "--flag", "a b"}) {
		t.Errorf("%q, %v", got, err)
	}
	if _, err := splitWords(`bad "quote`); err == nil {
		t.Error("unclosed quote accepted")
	}
}

// acpSessions is the Node client of the session management scenario.
const acpSessions = "../../agent/acp/testdata/npm/acp-sessions.mjs"

type acpModel struct {
	Current string   `json:"current"`
	Options []string `json:"options"`
}

// A real ACP client lists, resumes and switches the model of a session of
// `gohands acp`, and uses its slash commands (issue 30).
func TestACPSessions(t *testing.T) {
	t.Parallel()
	node := testenv.Program(t, "node")
	if _, err := os.Stat(acpSessions); err != nil {
		testenv.Missing(t, "%s and its node_modules (run scripts/deps.sh): %v", acpSessions, err)
	}
	e := newE2E(t)
	e.srv.Add(finishReply("one"), finishReply("two"), finishReply("three"))
	script, _ := filepath.Abs(acpSessions)
	cmd := exec.Command(node, script, e.work, "openai/gpt-5-mini", binPath, "acp", "--persistence-dir", e.data, "--llm-config", e.config, "--models", "openai/gpt-5-mini")
	cmd.Env = e.env
	cmd.Dir = filepath.Dir(script)
	out, stderr := runACPClient(t, cmd)
	var r struct {
		Capabilities map[string]any `json:"capabilities"`
		SessionID    string         `json:"sessionId"`
		NewModel     *acpModel      `json:"newModel"`
		SetModel     *acpModel      `json:"setModel"`
		ResumeModel  *acpModel      `json:"resumeModel"`
		ResumeMode   string         `json:"resumeMode"`
		Listed       []struct {
			ID, Cwd   string
			Title     *string
			UpdatedAt *string
		} `json:"listed"`
		ListedElsewhere int `json:"listedElsewhere"`
		Updates         []struct {
			Phase, Kind, Mode, Model string
		} `json:"updates"`
		ResumeUpdates []struct{ Kind string } `json:"resumeUpdates"`
		StopReasons   []string                `json:"stopReasons"`
		Commands      []string                `json:"commands"`
		Texts         []string                `json:"texts"`
		ResumeMissing string                  `json:"resumeMissing"`
		Error         string                  `json:"error"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("report %q: %v", out, err)
	}
	if r.Error != "" {
		t.Fatalf("client error: %s\nstderr: %s", r.Error, stderr)
	}
	if r.Capabilities["list"] == nil || r.Capabilities["resume"] == nil {
		t.Errorf("session capabilities %v lack list and resume", r.Capabilities)
	}
	if r.NewModel == nil || r.NewModel.Current != "openai/gpt-4o" || !slices.Equal(r.NewModel.Options, []string{"openai/gpt-4o", "openai/gpt-5-mini"}) {
		t.Errorf("new session's model option %+v", r.NewModel)
	}
	if len(r.Listed) != 1 || r.Listed[0].ID != r.SessionID || r.Listed[0].Cwd != e.work || r.Listed[0].Title == nil || *r.Listed[0].Title != "first task" || r.Listed[0].UpdatedAt == nil {
		t.Errorf("session/list for the cwd: %+v", r.Listed)
	}
	if r.ListedElsewhere != 0 {
		t.Errorf("session/list for another cwd listed %d sessions", r.ListedElsewhere)
	}
	if r.SetModel == nil || r.SetModel.Current != "openai/gpt-5-mini" {
		t.Errorf("after set_config_option: %+v", r.SetModel)
	}
	if r.ResumeModel == nil || r.ResumeModel.Current != "openai/gpt-5-mini" || r.ResumeMode != "always-ask" {
		t.Errorf("resumed session: model %+v, mode %q", r.ResumeModel, r.ResumeMode)
	}
	for _, u := range r.ResumeUpdates {
		if u.Kind != "available_commands_update" {
			t.Errorf("session/resume replayed %q", u.Kind)
		}
	}
	if !slices.Equal(r.Commands, []string{"model", "mode"}) {
		t.Errorf("available commands %v", r.Commands)
	}
	if !slices.Equal(r.StopReasons, []string{"end_turn", "end_turn", "end_turn", "end_turn", "end_turn"}) {
		t.Errorf("stop reasons %v", r.StopReasons)
	}
	var modeUpdate bool
	for _, u := range r.Updates {
		modeUpdate = modeUpdate || (u.Kind == "current_mode_update" && u.Mode == "always-approve")
	}
	if !modeUpdate || !slices.Contains(r.Texts, "Mode: always-approve") || !slices.ContainsFunc(r.Texts, func(s string) bool { return strings.Contains(s, `unknown model "no-such-model"`) }) {
		t.Errorf("slash commands: mode update %v, texts %q", modeUpdate, r.Texts)
	}
	if r.ResumeMissing != "-32002" {
		t.Errorf("resuming an unknown session: %s", r.ResumeMissing)
	}
	// The model calls: the first with the configured model, the next two
	// with the switched one; the commands call no model.
	var models []string
	for _, q := range e.srv.Requests() {
		if m, ok := q.Body["model"].(string); ok {
			models = append(models, m)
		}
	}
	if !slices.Equal(models, []string{"gpt-4o", "gpt-5-mini", "gpt-5-mini"}) {
		t.Errorf("models of the calls %v", models)
	}
}

// runACPClient runs an ACP client script and returns its standard output
// and error, failing t if it fails or does not finish in 2 minutes (a hang
// guard).
func runACPClient(t *testing.T, cmd *exec.Cmd) ([]byte, string) {
	t.Helper()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.Output(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the client did not finish; stderr:\n%s", stderr.String())
	}
	if err != nil {
		t.Fatalf("client: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	return out, stderr.String()
}
