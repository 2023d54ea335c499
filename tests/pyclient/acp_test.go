package pyclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
)

// claudeACP is Zed's Claude Agent ACP adapter, installed by
// scripts/deps.d/40-acp.sh (see agent/acp).
const claudeACP = "../../agent/acp/testdata/npm/node_modules/@zed-industries/claude-agent-acp/dist/index.js"

// TestACPAgentPythonClient: the reference's Python client creates a
// conversation whose agent is its ACPAgent (kind ACPAgent) on `gohands
// serve`, and runs it to the end. The external agent is a real ACP server,
// Claude Code through claude-agent-acp, its model pointed at the scripted
// Anthropic server through secrets the client sends: it writes a file, and
// the client gets its tool call and the turn's FinishAction over the
// socket.
func TestACPAgentPythonClient(t *testing.T) {
	py := testenv.ReferencePython(t)
	node := testenv.Program(t, "node")
	if _, err := os.Stat(claudeACP); err != nil {
		testenv.Missing(t, "%s (run scripts/deps.sh): %v", claudeACP, err)
	}
	script, _ := filepath.Abs(claudeACP)
	work := t.TempDir()
	target := filepath.Join(work, "hello.txt")
	model := llmtest.NewAnthropic(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "Write", Arguments: llmtest.Args(map[string]any{"file_path": target, "content": "hi\n"})}}},
		llmtest.Reply{Text: "Wrote hello.txt."},
	)
	// Claude Code checks connectivity with a HEAD first; the scripted
	// server serves POSTs only.
	u, _ := url.Parse(model.URL)
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.FlushInterval = -1
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			proxy.ServeHTTP(w, r)
		}
	}))
	defer front.Close()

	g := startGohandsServer(t)
	args := []string{filepath.Join("testdata", "acp_client.py"),
		"--server", g.URL, "--api-key", apiKey, "--workdir", work,
		"--acp-command", node + " " + script, "--task", "write hello.txt"}
	for k, v := range map[string]string{
		"ANTHROPIC_BASE_URL": front.URL, "ANTHROPIC_API_KEY": "sk-ant-test", "HOME": t.TempDir(),
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "IS_SANDBOX": "1",
	} {
		args = append(args, "--secret", k+"="+v)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, args...)
	cmd.Env = referenceEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var out struct {
		Errors         []string         `json:"errors"`
		Status         string           `json:"status"`
		Events         []map[string]any `json:"events"`
		MissedOnSocket []string         `json:"missed_on_socket"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || runErr != nil {
		t.Fatalf("acp_client.py: %v, %v\n%s\n%s", runErr, err, stdout.Bytes(), tail(stderr.Bytes(), 8000))
	}
	t.Logf("events: %s", stdout.Bytes())
	if out.Status != "finished" {
		t.Errorf("status %q", out.Status)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "hi\n" {
		t.Errorf("hello.txt: %q, %v", b, err)
	}
	var kinds []string
	var answer string
	writeDone := false
	for _, e := range out.Events {
		kinds = append(kinds, e["kind"].(string))
		if e["kind"] == "ACPToolCallEvent" && e["status"] == "completed" {
			writeDone = true
		}
		if e["kind"] == "ActionEvent" && e["tool"] == "finish" {
			answer, _ = e["message"].(string)
		}
	}
	if !writeDone {
		t.Errorf("no completed ACPToolCallEvent among %v", kinds)
	}
	if answer != "Wrote hello.txt." {
		t.Errorf("finish message %q among %v", answer, kinds)
	}
	if len(out.MissedOnSocket) > 0 {
		t.Errorf("events never came over the socket: %v", out.MissedOnSocket)
	}
	if strings.Contains(stdout.String(), "sk-ant-test") {
		t.Error("the API key is in the events")
	}
}
