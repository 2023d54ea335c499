package pyclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/agent/acp/acptest"
	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
)

// TestACPAgentPythonClient: the reference's Python client creates a
// conversation whose agent is its ACPAgent (kind ACPAgent) on `gohands
// serve`, and runs it to the end. The external agent is a real ACP server,
// Claude Code through claude-agent-acp, its model pointed at the scripted
// Anthropic server through secrets the client sends: it writes a file, and
// the client gets its tool call and the turn's FinishAction over the
// socket.
func TestACPAgentPythonClient(t *testing.T) {
	t.Parallel()
	py := testenv.ReferencePython(t)
	work := t.TempDir()
	target := filepath.Join(work, "hello.txt")
	model := llmtest.NewAnthropic(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "Write", Arguments: llmtest.Args(map[string]any{"file_path": target, "content": "hi\n"})}}},
		llmtest.Reply{Text: "Wrote hello.txt."},
	)
	claude := acptest.NewClaude(t, model)

	g := startGohandsServer(t)
	args := []string{filepath.Join("testdata", "acp_client.py"),
		"--server", g.URL, "--api-key", apiKey, "--workdir", work,
		"--acp-command", claude.Node + " " + claude.Script, "--task", "write hello.txt"}
	for k, v := range claude.Env {
		args = append(args, "--secret", k+"="+v)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, args...)
	cmd.Env = referenceEnv(t)
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
