package agent_test

import (
	"encoding/json"
	"fmt"
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

// A PreToolUse hook of type agent runs a sub-agent with the hook's system
// prompt, finish as its only tool and the event as its task; its finish
// message "deny" blocks the call (the model sees the reason), its plain
// "allow" lets the next one run. Its costs are the conversation's under
// "agent-hook:<name>".
func TestAgentHookDecides(t *testing.T) {
	work := t.TempDir()
	t.Setenv("HOME", t.TempDir())
	blocked, allowed := filepath.Join(work, "forbidden-ran"), filepath.Join(work, "allowed-ran")
	call := func(cmd string) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: terminal.Name, Arguments: fmt.Sprintf(`{"command":%q}`, cmd)}}}
	}
	deny := `{"decision":"deny","reason":"forbidden work (hook-reason-6d1)"}`
	a, p := newAgent(t,
		call("touch "+blocked+" # forbidden"),
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: fmt.Sprintf(`{"message":%q}`, deny)}}, Usage: llmtest.Usage{PromptTokens: 11, CompletionTokens: 3}},
		call("touch "+allowed),
		llmtest.Reply{Text: "Looks fine. {\"decision\":\"allow\",\"reason\":\"ok\"}", Usage: llmtest.Usage{PromptTokens: 13, CompletionTokens: 2}},
		llmtest.Reply{Text: "Done."},
	)
	a.Tools = append(a.Tools, tool.Spec{Name: terminal.Name})
	cfg := `{"PreToolUse":[{"matcher":"terminal","hooks":[{"type":"agent","name":"guard","system_prompt":"You guard the workspace (guard-prompt-3a7).","max_iterations":2}]}]}`
	c, err := conversation.New(ctx, a, work, &conversation.LocalOptions{HookConfig: json.RawMessage(cfg)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SendMessage(ctx, event.UserMessage("go"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(blocked); !os.IsNotExist(err) {
		t.Fatalf("the denied command ran: %v", err)
	}
	if _, err := os.Stat(allowed); err != nil {
		t.Fatalf("the allowed command did not run: %v", err)
	}
	rs := p.Requests()
	if len(rs) != 5 {
		t.Fatalf("%d requests", len(rs))
	}
	hookReq := rs[1]
	if len(hookReq.Messages) != 2 || hookReq.Messages[0].Role != event.RoleSystem || hookReq.Messages[1].Role != event.RoleUser {
		t.Fatalf("hook sub-agent request: %+v", hookReq.Messages)
	}
	if !strings.Contains(event.TextOf(hookReq.Messages[0].Content), "guard-prompt-3a7") {
		t.Fatalf("hook system prompt: %q", event.TextOf(hookReq.Messages[0].Content))
	}
	if task := event.TextOf(hookReq.Messages[1].Content); !strings.Contains(task, "PreToolUse") || !strings.Contains(task, "# forbidden") {
		t.Fatalf("hook task: %q", task)
	}
	if len(hookReq.Tools) != 1 || hookReq.Tools[0].Name != "finish" {
		t.Fatalf("hook tools: %+v", hookReq.Tools)
	}
	var saw bool
	for _, m := range rs[2].Messages {
		saw = saw || strings.Contains(event.TextOf(m.Content), "hook-reason-6d1")
	}
	if !saw {
		t.Fatal("the model did not see the hook's reason")
	}
	m := c.State().Fields().Stats.UsageToMetrics["agent-hook:guard"]
	if m == nil || m.AccumulatedTokenUsage == nil || m.AccumulatedTokenUsage.PromptTokens != 24 {
		t.Fatalf("agent hook metrics: %+v", m)
	}
	var hookRuns int
	for _, e := range logEvents(t, c) {
		if _, ok := e.(*event.HookExecutionEvent); ok {
			hookRuns++
		}
	}
	if hookRuns != 2 {
		t.Fatalf("%d hook events", hookRuns)
	}
}
