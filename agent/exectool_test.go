package agent_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/terminal"
)

// ExecuteTool runs a tool outside the loop (before any run too) and
// RerunActions runs the logged actions again; neither logs anything, an
// unknown tool is ErrUnknownTool naming the tools there are.
func TestExecuteToolAndRerun(t *testing.T) {
	ctx := context.Background()
	a, _ := newAgent(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"echo run >> out.txt","security_risk":"LOW"}`}}},
		llmtest.Reply{Text: "done"},
	)
	a.Tools = append(a.Tools, tool.Spec{Name: terminal.Name})
	c, _ := newConv(t, a, nil)
	out := filepath.Join(c.WorkingDir(), "out.txt")
	lines := func() string {
		data, _ := os.ReadFile(out)
		return strings.Join(strings.Fields(string(data)), ",")
	}

	obs, err := c.ExecuteTool(ctx, "terminal", &terminal.Action{Command: "echo before >> out.txt"})
	if err != nil || obs == nil {
		t.Fatalf("ExecuteTool before a run: %v, %v", obs, err)
	}
	if c.State().Events().Len() != 1 { // the system prompt only
		t.Errorf("ExecuteTool logged: %v", kindsOf(logEvents(t, c)))
	}
	if err := c.SendMessage(ctx, event.Message{Role: event.RoleUser, Content: []event.Content{event.Text("go")}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if got := lines(); got != "before,run" {
		t.Fatalf("out.txt %q", got)
	}
	n := c.State().Events().Len()
	ok, err := c.RerunActions(ctx)
	if !ok || err != nil {
		t.Fatalf("RerunActions: %v, %v", ok, err)
	}
	if got := lines(); got != "before,run,run" {
		t.Errorf("after the rerun out.txt %q", got)
	}
	if c.State().Events().Len() != n {
		t.Errorf("RerunActions logged %d events", c.State().Events().Len()-n)
	}
	_, err = c.ExecuteTool(ctx, "nope", &terminal.Action{Command: "true"})
	if !errors.Is(err, conversation.ErrUnknownTool) || !strings.Contains(err.Error(), "terminal") {
		t.Errorf("unknown tool: %v", err)
	}
}
