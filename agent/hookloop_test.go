package agent_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/hook"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/terminal"
)

// A PreToolUse hook of the workspace that exits 2 for commands containing
// "forbidden" blocks them: the command never runs, the model reads the
// hook's reason, and allowed commands run. As in 1.58.2, each hook's run
// is stored before the event it is about (the action, the observation),
// and the hooks get the action (kind and nulls included) as tool_input,
// on stdin and in the recorded hook_input.
func TestPreToolUseHookBlocksCommand(t *testing.T) {
	work := t.TempDir()
	t.Setenv("HOME", t.TempDir()) // no user-level hooks
	if err := os.MkdirAll(filepath.Join(work, ".openhands"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(work, ".openhands", "guard.sh")
	pre := filepath.Join(work, "pre-input.jsonl")
	guard := "#!/bin/sh\nin=$(cat)\nprintf '%s\\n' \"$in\" >> " + pre + "\n" +
		"if printf '%s' \"$in\" | grep -q forbidden; then echo 'forbidden commands are not allowed here' >&2; exit 2; fi\nexit 0\n"
	if err := os.WriteFile(script, []byte(guard), 0o755); err != nil {
		t.Fatal(err)
	}
	post := filepath.Join(work, "post-input.json")
	cfg := fmt.Sprintf(`{"hooks":{"PreToolUse":[{"matcher":"terminal","hooks":[{"type":"command","command":%q}]}],"PostToolUse":[{"matcher":"*","hooks":[{"command":"cat > %s"}]}]}}`, script, post)
	if err := os.WriteFile(filepath.Join(work, ".openhands", "hooks.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	blocked := filepath.Join(work, "forbidden-ran")
	allowed := filepath.Join(work, "allowed-ran")
	call := func(cmd string) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: terminal.Name, Arguments: fmt.Sprintf(`{"command":%q}`, cmd)}}}
	}
	a, p := newAgent(t, call("touch "+blocked+" # forbidden"), call("touch "+allowed), llmtest.Reply{Text: "Done."})
	a.Tools = append(a.Tools, tool.Spec{Name: terminal.Name})
	c2, err := conversation.New(ctx, a, work, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	c2.SendMessage(ctx, event.UserMessage("go"))
	if err := c2.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(blocked); !os.IsNotExist(err) {
		t.Fatalf("the blocked command ran: %v", err)
	}
	if _, err := os.Stat(allowed); err != nil {
		t.Fatalf("the allowed command did not run: %v", err)
	}
	// PostToolUse ran once, for the allowed command, and got its result.
	if b, err := os.ReadFile(post); err != nil || !strings.Contains(string(b), "tool_response") || !strings.Contains(string(b), "allowed-ran") {
		t.Fatalf("PostToolUse input: %s, %v", b, err)
	}
	var hookEvents, rejections int
	for _, e := range logEvents(t, c2) {
		switch e := e.(type) {
		case *event.HookExecutionEvent:
			hookEvents++
		case *event.UserRejectObservation:
			rejections++
			if e.RejectionSource != event.RejectedByHook {
				t.Fatalf("rejection source %q", e.RejectionSource)
			}
		}
	}
	if hookEvents != 2+1 || rejections != 1 { // 2 PreToolUse, 1 PostToolUse
		t.Fatalf("%d hook events, %d rejections", hookEvents, rejections)
	}
	checkHookOrderAndInput(t, logEvents(t, c2), pre, post)
	rs := p.Requests()
	var saw bool
	for _, m := range rs[1].Messages {
		if strings.Contains(event.TextOf(m.Content), "forbidden commands are not allowed here") {
			saw = true
		}
	}
	if !saw {
		t.Fatalf("the model did not see the reason: %+v", rs[1].Messages)
	}
}

// A Stop hook that blocks the first finish keeps the agent running with
// the hook's feedback; the second finish is allowed.
func TestStopHookKeepsAgentRunningOnce(t *testing.T) {
	work := t.TempDir()
	t.Setenv("HOME", t.TempDir())
	if err := os.MkdirAll(filepath.Join(work, ".openhands"), 0o755); err != nil {
		t.Fatal(err)
	}
	flag := filepath.Join(work, "stopped-once")
	script := filepath.Join(work, ".openhands", "stop.sh")
	body := fmt.Sprintf("#!/bin/sh\nif [ ! -e %s ]; then touch %s; echo 'run the tests first' >&2; exit 2; fi\nexit 0\n", flag, flag)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`{"Stop":[{"hooks":[{"command":%q}]}]}`, script)
	if err := os.WriteFile(filepath.Join(work, ".openhands", "hooks.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	a, p := newAgent(t, llmtest.Reply{Text: "Done."}, llmtest.Reply{Text: "Tests pass. Done."})
	c, err := conversation.New(ctx, a, work, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SendMessage(ctx, event.UserMessage("go"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if c.Status() != conversation.StatusFinished {
		t.Fatalf("status %s", c.Status())
	}
	rs := p.Requests()
	if len(rs) != 2 {
		t.Fatalf("%d requests", len(rs))
	}
	last := rs[1].Messages[len(rs[1].Messages)-1]
	if got := event.TextOf(last.Content); !strings.Contains(got, "run the tests first") || last.Role != "user" {
		t.Fatalf("the model was told %q by %s", got, last.Role)
	}
	// The feedback is the environment's, as in the reference: a client
	// must not show it as the user's words.
	var feedback []event.Source
	for e, err := range conversation.EventsFrom(ctx, c.State().Events(), 0) {
		if err != nil {
			t.Fatal(err)
		}
		if m, ok := e.(*event.MessageEvent); ok && strings.HasPrefix(event.TextOf(m.LLMMessage.Content), hook.StopFeedbackPrefix) {
			feedback = append(feedback, m.Source)
		}
	}
	if !slices.Equal(feedback, []event.Source{event.SourceEnvironment}) {
		t.Fatalf("stop hook feedback messages from %v, want one from the environment", feedback)
	}
}

// UserPromptSubmit hooks can keep a message out of the conversation or add
// context to it; SessionStart and SessionEnd hooks run and are recorded.
func TestUserPromptAndSessionHooks(t *testing.T) {
	work := t.TempDir()
	t.Setenv("HOME", t.TempDir())
	if err := os.MkdirAll(filepath.Join(work, ".openhands"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(work, ".openhands", "prompt.sh")
	body := "#!/bin/sh\nif grep -q 'secret-plan'; then echo 'no secret plans' >&2; exit 2; fi\necho '{\"additionalContext\": \"ctx-from-hook-9\"}'\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	ends := filepath.Join(work, "session-ends")
	cfg := fmt.Sprintf(`{"UserPromptSubmit":[{"hooks":[{"command":%q}]}],"SessionStart":[{"hooks":[{"command":"true"}]}],"SessionEnd":[{"hooks":[{"command":"echo end >> %s"}]}]}`, script, ends)
	if err := os.WriteFile(filepath.Join(work, ".openhands", "hooks.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	a, p := newAgent(t, llmtest.Reply{Text: "Hello."})
	c, err := conversation.New(ctx, a, work, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A blocked message is stored after the hook's run and marked blocked,
	// as in 1.58.2; the run that follows ends at once without asking the
	// model, and takes the mark out.
	if err := c.SendMessage(ctx, event.UserMessage("here is the secret-plan")); err != nil {
		t.Fatal(err)
	}
	f := c.State().Fields()
	if !strings.Contains(f.BlockedMessages[f.LastUserMessageID], "no secret plans") {
		t.Fatalf("blocked_messages %v, last user message %s", f.BlockedMessages, f.LastUserMessageID)
	}
	log := logEvents(t, c)
	h, _ := log[len(log)-2].(*event.HookExecutionEvent)
	if m, _ := log[len(log)-1].(*event.MessageEvent); m == nil || m.ID != f.LastUserMessageID || h == nil || !h.Blocked || h.MessageID != m.ID {
		t.Fatalf("stored last: %s", kindsOf(log[len(log)-2:]))
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if st, n := c.Status(), len(p.Requests()); st != conversation.StatusFinished || n != 0 || len(c.State().Fields().BlockedMessages) != 0 {
		t.Fatalf("after the blocked message: status %s, %d model calls, blocked_messages %v", st, n, c.State().Fields().BlockedMessages)
	}
	if err := c.SendMessage(ctx, event.UserMessage("hi")); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	rs := p.Requests()
	var users []string
	for _, m := range rs[0].Messages {
		if m.Role == event.RoleUser {
			users = append(users, event.TextOf(m.Content))
		}
	}
	if len(users) != 1 || !strings.Contains(users[0], "hi") || !strings.Contains(users[0], "ctx-from-hook-9") {
		t.Fatalf("user messages the model saw: %q", users)
	}
	kinds := map[string]int{}
	for _, e := range logEvents(t, c) {
		if h, ok := e.(*event.HookExecutionEvent); ok {
			kinds[h.HookEventType]++
		}
	}
	if kinds["SessionStart"] != 1 || kinds["UserPromptSubmit"] != 2 {
		t.Fatalf("hook events %v", kinds)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(ends); err != nil || string(b) != "end\n" {
		t.Fatalf("SessionEnd hook: %q, %v", b, err)
	}
}

// The conversation's hook_config is used instead of the workspace's files.
func TestHookConfigOption(t *testing.T) {
	work := t.TempDir()
	t.Setenv("HOME", t.TempDir())
	ran := filepath.Join(work, "ran")
	a, p := newAgent(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: terminal.Name, Arguments: fmt.Sprintf(`{"command":"touch %s"}`, ran)}}},
		llmtest.Reply{Text: "Blocked."})
	a.Tools = append(a.Tools, tool.Spec{Name: terminal.Name})
	cfg := `{"PreToolUse":[{"matcher":"terminal","hooks":[{"command":"echo 'terminal is off today' >&2; exit 2"}]}]}`
	c, err := conversation.New(ctx, a, work, &conversation.LocalOptions{HookConfig: json.RawMessage(cfg)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SendMessage(ctx, event.UserMessage("go"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ran); !os.IsNotExist(err) {
		t.Fatalf("the blocked command ran: %v", err)
	}
	msgs := p.Requests()[1].Messages
	if got := event.TextOf(msgs[len(msgs)-1].Content); !strings.Contains(got, "terminal is off today") {
		t.Fatalf("the model saw %q", got)
	}
	// A bad hook_config is an error, not silently no hooks.
	a2, _ := newAgent(t, llmtest.Reply{Text: "x"})
	c2, err := conversation.New(ctx, a2, t.TempDir(), &conversation.LocalOptions{HookConfig: json.RawMessage(`{"NoSuchEvent":[]}`)})
	if err == nil {
		defer c2.Close()
		err = c2.SendMessage(ctx, event.UserMessage("go"))
	}
	if err == nil {
		t.Fatal("a bad hook_config was accepted")
	}
}

// checkHookOrderAndInput checks the events of TestPreToolUseHookBlocksCommand
// after the user's message, and what its hooks got on stdin (the lines of
// pre, the file post) and recorded.
func checkHookOrderAndInput(t *testing.T, evs []event.Event, pre, post string) {
	t.Helper()
	var kinds []string
	var actions []json.RawMessage
	var recorded []string
	after := false
	for _, e := range evs {
		k, _ := event.KindOf(e)
		switch e := e.(type) {
		case *event.MessageEvent:
			if e.Source == event.SourceUser {
				after = true
				continue
			}
		case *event.HookExecutionEvent:
			k += " " + e.HookEventType
			recorded = append(recorded, string(e.HookInput))
		case *event.ActionEvent:
			b, err := event.MarshalKinded(e.Action)
			if err != nil {
				t.Fatal(err)
			}
			actions = append(actions, b)
		}
		if after {
			kinds = append(kinds, k)
		}
	}
	want := []string{"HookExecutionEvent PreToolUse", "ActionEvent", "UserRejectObservation",
		"HookExecutionEvent PreToolUse", "ActionEvent", "HookExecutionEvent PostToolUse", "ObservationEvent", "MessageEvent"}
	if !slices.Equal(kinds, want) {
		t.Errorf("events after the message:\n%q\nwant\n%q", kinds, want)
	}
	if len(actions) != 2 || len(recorded) != 3 {
		t.Fatalf("%d actions, %d hook runs", len(actions), len(recorded))
	}
	toolInput := func(what, in string) string {
		var v struct {
			ToolInput json.RawMessage `json:"tool_input"`
		}
		if err := json.Unmarshal([]byte(in), &v); err != nil {
			t.Fatalf("%s: %v: %s", what, err, in)
		}
		return string(v.ToolInput)
	}
	b, err := os.ReadFile(pre)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 {
		t.Fatalf("PreToolUse stdin: %s", b)
	}
	post1, _ := os.ReadFile(post)
	for i, c := range []struct{ what, in, action string }{
		{"PreToolUse stdin 1", lines[0], string(actions[0])},
		{"PreToolUse stdin 2", lines[1], string(actions[1])},
		{"PostToolUse stdin", string(post1), string(actions[1])},
		{"hook_input 1", recorded[0], string(actions[0])},
		{"hook_input 2", recorded[1], string(actions[1])},
		{"hook_input 3", recorded[2], string(actions[1])},
	} {
		// The action as stored, with its unset timeout as null (1.58.2's
		// model_dump keeps None fields).
		want := `{"timeout":null,` + c.action[1:]
		if got := toolInput(c.what, c.in); got != want {
			t.Errorf("%s: tool_input %s, want %s", c.what, got, want)
		}
		if i < 2 && !strings.Contains(c.action, `"kind":"TerminalAction"`) {
			t.Errorf("action %s has no kind", c.action)
		}
	}
}
