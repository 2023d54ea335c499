package acp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/agent/acp"
	"github.com/gohands/gohands/agent/acp/acptest"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/security"
)

// claudeAgent returns an ACPAgent running claude-agent-acp (see
// acptest) with its model pointed at llm, a scripted Anthropic Messages
// server.
func claudeAgent(t *testing.T, llm *llmtest.Server) *acp.Agent {
	t.Helper()
	claude := acptest.NewClaude(t, llm)
	a := acp.New(claude.Node, claude.Script)
	a.Env = event.Map[string, secret.String]{}
	for k, v := range claude.Env {
		a.Env[k] = secret.New(v)
	}
	// Hang guards: node starts the adapter in seconds when idle, and in
	// more than a minute at load 50.
	a.StartupTimeout = 300
	a.PromptTimeout = 300
	return a
}

// The external agent writes a file after our policy lets it: the
// permission request is held for confirmation, and running again
// approves it.
func TestClaudeWritesFileAfterConfirmation(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "hello.txt")
	llm := llmtest.NewAnthropic(t,
		llmtest.Reply{Text: "I will write the file.", ToolCalls: []llmtest.ToolCall{{Name: "Write", Arguments: llmtest.Args(map[string]any{"file_path": target, "content": "hello from claude\n"})}}},
		llmtest.Reply{Text: "Wrote hello.txt."},
	)
	a := claudeAgent(t, llm)
	c, err := conversation.New(ctx, a, dir, &conversation.LocalOptions{ConfirmationPolicy: security.AlwaysConfirm{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	send(t, c, "Write hello.txt saying hello.")
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if st := status(c); st != conversation.StatusWaitingForConfirmation {
		t.Fatalf("status %s, want waiting_for_confirmation (events %v)", st, kinds(events(t, c)))
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatal("the file was written before the permission was granted")
	}
	acts := ofKind[*event.ActionEvent](events(t, c))
	if len(acts) != 1 {
		t.Fatalf("actions %v", acts)
	}
	pa, _ := acts[0].Action.(*acp.PermissionAction)
	if pa == nil || pa.ToolKind != "edit" || !strings.Contains(string(pa.RawInput), "hello.txt") {
		t.Fatalf("held permission %#v", acts[0].Action)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if st := status(c); st != conversation.StatusFinished {
		t.Fatalf("status %s", st)
	}
	b, err := os.ReadFile(target)
	if err != nil || string(b) != "hello from claude\n" {
		t.Fatalf("hello.txt: %q, %v", b, err)
	}
	if msg := finalMessage(t, c); !strings.Contains(msg, "Wrote hello.txt.") {
		t.Errorf("final message %q", msg)
	}
	var done bool
	for _, e := range ofKind[*event.ACPToolCallEvent](events(t, c)) {
		done = done || (e.Status == "completed" && e.ToolKind == "edit")
	}
	if !done {
		t.Errorf("no completed edit tool call among %v", kinds(events(t, c)))
	}
	if n := len(llm.Requests()); n != 2 {
		t.Errorf("%d model calls, want 2", n)
	}
}

// A rejected permission keeps the file unwritten.
func TestClaudeRejectedWrite(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "hello.txt")
	llm := llmtest.NewAnthropic(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "Write", Arguments: llmtest.Args(map[string]any{"file_path": target, "content": "x\n"})}}},
		llmtest.Reply{Text: "The write was refused."},
	)
	a := claudeAgent(t, llm)
	c, err := conversation.New(ctx, a, dir, &conversation.LocalOptions{ConfirmationPolicy: security.AlwaysConfirm{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	send(t, c, "Write hello.txt.")
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.RejectPendingActions(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("hello.txt was written after the rejection")
	}
	if msg := finalMessage(t, c); !strings.Contains(msg, "refused") {
		t.Errorf("final message %q", msg)
	}
}

func kinds(evs []event.Event) []string {
	var out []string
	for _, e := range evs {
		k, _ := event.KindOf(e)
		out = append(out, k)
	}
	return out
}
