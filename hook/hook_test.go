package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"

	"golang.org/x/sys/unix"
)

// script writes an executable shell script into dir and returns its path.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func cmdHook(command string) Definition {
	return Definition{Type: TypeCommand, Command: command, Timeout: DefaultTimeout}
}

func manager(t *testing.T, dir string, eventType string, hooks ...Definition) *Manager {
	t.Helper()
	cfg := &Config{}
	*cfg.matchers(eventType) = []Matcher{{Matcher: "*", Hooks: hooks}}
	r := &Runner{WorkDir: dir, SessionID: "sess-1"}
	t.Cleanup(func() { r.Close() })
	return NewManager(cfg, r)
}

func preTool(tool string) Input {
	return Input{EventType: PreToolUse, ToolName: tool, ToolInput: json.RawMessage(`{"command":"rm -rf /"}`)}
}

func TestAllow(t *testing.T) {
	dir := t.TempDir()
	m := manager(t, dir, PreToolUse, cmdHook(script(t, dir, "ok.sh", "echo fine\nexit 0\n")))
	out := m.Fire(t.Context(), preTool("terminal"), Ref{ActionID: "a1"})
	if out.Blocked || len(out.Results) != 1 || !out.Results[0].Success || out.Results[0].Stdout != "fine\n" {
		t.Fatalf("outcome %+v", out)
	}
	e := out.Events[0]
	if e.HookEventType != PreToolUse || e.ToolName != "terminal" || e.ActionID != "a1" || !e.Success || e.Source != event.SourceHook {
		t.Fatalf("event %+v", e)
	}
	if _, err := event.Marshal(e); err != nil {
		t.Fatal(err)
	}
}

func TestBlockByExit2(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "second-ran")
	m := manager(t, dir, PreToolUse,
		cmdHook(script(t, dir, "block.sh", "echo 'rm is not allowed' >&2\nexit 2\n")),
		cmdHook("touch "+marker))
	out := m.Fire(t.Context(), preTool("terminal"), Ref{})
	if !out.Blocked || out.Reason != "rm is not allowed" || out.Results[0].ExitCode != 2 {
		t.Fatalf("outcome %+v", out)
	}
	if len(out.Results) != 1 {
		t.Fatal("hooks after the blocking one ran")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("second hook ran")
	}
}

func TestBlockByJSON(t *testing.T) {
	dir := t.TempDir()
	m := manager(t, dir, PreToolUse,
		cmdHook(`echo '{"decision":"DENY","reason":"no deletes"}'`))
	out := m.Fire(t.Context(), preTool("terminal"), Ref{})
	if !out.Blocked || out.Reason != "no deletes" || out.Results[0].Decision != Deny || !out.Results[0].Success {
		t.Fatalf("outcome %+v", out)
	}
	m = manager(t, dir, Stop, cmdHook(`echo '{"continue": false, "reason": "tests fail"}'`))
	out = m.Fire(t.Context(), Input{EventType: Stop}, Ref{})
	if !out.Blocked || out.Reason != "tests fail" {
		t.Fatalf("continue:false outcome %+v", out)
	}
}

func TestAdditionalContext(t *testing.T) {
	dir := t.TempDir()
	m := manager(t, dir, UserPromptSubmit,
		cmdHook(`echo '{"additionalContext":"first"}'`),
		cmdHook(`echo 'not json'`),
		cmdHook(`echo '{"decision":"allow","additionalContext":"second"}'`))
	out := m.Fire(t.Context(), Input{EventType: UserPromptSubmit, Message: "hello"}, Ref{MessageID: "m1"})
	if out.Blocked || out.AdditionalContext != "first\nsecond" || len(out.Events) != 3 || out.Events[0].MessageID != "m1" {
		t.Fatalf("outcome %+v", out)
	}
}

func TestTimeoutKillsGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	d := cmdHook(script(t, dir, "hang.sh", "sleep 300 &\necho $! > "+pidFile+"\nwait\n"))
	d.Timeout = 1
	m := manager(t, dir, PreToolUse, d)
	out := m.Fire(t.Context(), preTool("terminal"), Ref{})
	r := out.Results[0]
	if out.Blocked || r.Success || r.ExitCode != -1 || !strings.Contains(r.Error, "timed out after 1 seconds") {
		t.Fatalf("result %+v", r)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Sscan(strings.TrimSpace(string(data)), &pid); err != nil {
		t.Fatal(err)
	}
	// The child was killed with the group (it may linger as a zombie of
	// init for a moment).
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("child %d still running", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func alive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// Field 3 is the state; Z is a zombie.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && unix.Kill(pid, 0) == nil
}

func TestCrash(t *testing.T) {
	dir := t.TempDir()
	m := manager(t, dir, PreToolUse,
		cmdHook("echo oops >&2; exit 1"),
		cmdHook("kill -SEGV $$"),
		cmdHook(filepath.Join(dir, "missing.sh")))
	out := m.Fire(t.Context(), preTool("terminal"), Ref{})
	if out.Blocked || len(out.Results) != 3 {
		t.Fatalf("outcome %+v", out)
	}
	if r := out.Results[0]; r.Success || r.ExitCode != 1 || r.Stderr != "oops\n" {
		t.Fatalf("exit 1: %+v", r)
	}
	if r := out.Results[1]; r.Success || r.ExitCode != -1 || r.Error == "" {
		t.Fatalf("signal: %+v", r)
	}
	if r := out.Results[2]; r.Success || r.ExitCode != 127 {
		t.Fatalf("missing: %+v", r)
	}
}

func TestPostToolUseNeverStops(t *testing.T) {
	dir := t.TempDir()
	m := manager(t, dir, PostToolUse, cmdHook("exit 2"), cmdHook("exit 0"))
	out := m.Fire(t.Context(), Input{EventType: PostToolUse, ToolName: "terminal"}, Ref{})
	if out.Blocked || len(out.Results) != 2 || !out.Results[0].Blocked {
		t.Fatalf("outcome %+v", out)
	}
}

func TestEnvAndStdin(t *testing.T) {
	dir := t.TempDir()
	m := manager(t, dir, PreToolUse, cmdHook(script(t, dir, "dump.sh",
		"cat > stdin.json\nenv > env.txt\npwd > pwd.txt\n")))
	m.Runner.Env = map[string]string{"EXTRA_VAR": "x"}
	out := m.Fire(t.Context(), preTool("terminal"), Ref{})
	if !out.Results[0].Success {
		t.Fatalf("%+v", out.Results[0])
	}
	var in map[string]any
	data, _ := os.ReadFile(filepath.Join(dir, "stdin.json"))
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatalf("stdin %q: %v", data, err)
	}
	want := map[string]any{"event_type": "PreToolUse", "tool_name": "terminal", "tool_input": map[string]any{"command": "rm -rf /"},
		"tool_response": nil, "message": nil, "session_id": "sess-1", "working_dir": dir, "metadata": map[string]any{}}
	if g, w := mustJSON(in), mustJSON(want); g != w {
		t.Fatalf("stdin = %s\nwant    %s", g, w)
	}
	env, _ := os.ReadFile(filepath.Join(dir, "env.txt"))
	for _, kv := range []string{"OPENHANDS_PROJECT_DIR=" + dir, "OPENHANDS_SESSION_ID=sess-1", "OPENHANDS_EVENT_TYPE=PreToolUse",
		"OPENHANDS_TOOL_NAME=terminal", "EXTRA_VAR=x"} {
		if !strings.Contains(string(env), kv+"\n") {
			t.Errorf("env lacks %s", kv)
		}
	}
	pwd, _ := os.ReadFile(filepath.Join(dir, "pwd.txt"))
	if strings.TrimSpace(string(pwd)) != dir {
		t.Errorf("ran in %s", pwd)
	}
	// Like the reference, the event keeps the tool's name and input only.
	if e := out.Events[0]; string(e.HookInput) != `{"tool_name":"terminal","tool_input":{"command":"rm -rf /"}}` {
		t.Errorf("hook_input %s", e.HookInput)
	}
}

// TestHookInputRecorded checks the hook_input a HookExecutionEvent keeps
// of each event type: 1.58.2's (hooks/conversation_hooks.py).
func TestHookInputRecorded(t *testing.T) {
	dir := t.TempDir()
	ok := cmdHook(script(t, dir, "ok.sh", "exit 0\n"))
	act := json.RawMessage(`{"command":"ls","kind":"TerminalAction"}`)
	obs := json.RawMessage(`{"kind":"TerminalObservation"}`)
	for _, c := range []struct {
		in   Input
		want string
	}{
		{Input{EventType: PreToolUse, ToolName: "terminal", ToolInput: act},
			`{"tool_name":"terminal","tool_input":{"command":"ls","kind":"TerminalAction"}}`},
		{Input{EventType: PostToolUse, ToolName: "terminal", ToolInput: act, ToolResponse: obs},
			`{"tool_name":"terminal","tool_input":{"command":"ls","kind":"TerminalAction"},"tool_response":{"kind":"TerminalObservation"}}`},
		{Input{EventType: UserPromptSubmit, Message: "hi"}, `{"message":"hi"}`},
		{Input{EventType: Stop, Metadata: map[string]any{"reason": "agent_finished"}}, `{"reason":"agent_finished"}`},
		{Input{EventType: Stop}, ``},
		{Input{EventType: SessionStart}, ``},
		{Input{EventType: SessionEnd}, ``},
	} {
		out := manager(t, dir, c.in.EventType, ok).Fire(t.Context(), c.in, Ref{})
		if len(out.Events) != 1 {
			t.Fatalf("%s: %d events", c.in.EventType, len(out.Events))
		}
		if got := string(out.Events[0].HookInput); got != c.want {
			t.Errorf("%s: hook_input %s, want %s", c.in.EventType, got, c.want)
		}
	}
}

func mustJSONBytes(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func mustJSON(v any) string { return string(mustJSONBytes(v)) }

func TestAsync(t *testing.T) {
	dir := t.TempDir()
	done := filepath.Join(dir, "done")
	slowPid := filepath.Join(dir, "slow.pid")
	quick := cmdHook("cat > " + filepath.Join(dir, "in.json") + "; touch " + done)
	quick.Async = true
	slow := cmdHook("echo $$ > " + slowPid + "; exec sleep 300")
	slow.Async = true
	m := manager(t, dir, PreToolUse, cmdHook("exit 0"), quick, slow)
	start := time.Now()
	out := m.Fire(t.Context(), preTool("terminal"), Ref{})
	if time.Since(start) > 10*time.Second || out.Blocked || !out.Results[1].Async || !out.Results[2].Success {
		t.Fatalf("outcome %+v", out)
	}
	waitFor(t, done)
	if data, _ := os.ReadFile(filepath.Join(dir, "in.json")); !strings.Contains(string(data), `"PreToolUse"`) {
		t.Fatalf("async stdin %q", data)
	}
	waitFor(t, slowPid)
	data, _ := os.ReadFile(slowPid)
	var pid int
	fmt.Sscan(strings.TrimSpace(string(data)), &pid)
	m.Runner.Close()
	if alive(pid) {
		t.Fatalf("async hook %d survived Close", pid)
	}
	if r := m.Runner.Run(t.Context(), &quick, preTool("x")); r.Error == "" {
		t.Fatal("async hook started after Close")
	}
}

func waitFor(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if st, err := os.Stat(path); err == nil && (st.Size() > 0 || strings.HasSuffix(path, "done")) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCancel(t *testing.T) {
	dir := t.TempDir()
	m := manager(t, dir, PreToolUse, cmdHook("sleep 300"))
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	out := m.Fire(ctx, preTool("terminal"), Ref{})
	if r := out.Results[0]; r.Success || !strings.Contains(r.Error, "cancelled") {
		t.Fatalf("%+v", r)
	}
}

func TestLogCap(t *testing.T) {
	dir := t.TempDir()
	m := manager(t, dir, PostToolUse, cmdHook("head -c 70000 /dev/zero | tr '\\0' 'a'"))
	out := m.Fire(t.Context(), Input{EventType: PostToolUse}, Ref{})
	if n := len(out.Events[0].Stdout); n != MaxLogChars {
		t.Fatalf("stdout of %d chars in the event", n)
	}
	if len(out.Results[0].Stdout) != 70000 {
		t.Fatal("result lost output")
	}
}

func TestPromptHook(t *testing.T) {
	p := llmtest.NewProvider(t,
		llmtest.Reply{Text: `Sure. {"decision": "deny", "reason": "destructive"}`},
		llmtest.Reply{Text: `{"decision":"allow"}`},
		llmtest.Reply{Text: "I think it is fine"},
		llmtest.Reply{Text: `{"decision":"maybe"}`},
		llmtest.Fail(400, "bad"),
	)
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.NumRetries = 1
	l, err := llm.New(cfg, &llm.Options{Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	d := Definition{Type: TypePrompt, Prompt: "Deny deleting files.", Timeout: 10}
	r := &Runner{Model: l}
	res := r.Run(t.Context(), &d, preTool("terminal"))
	if !res.Blocked || res.Decision != Deny || res.Reason != "destructive" || !res.Success {
		t.Fatalf("deny: %+v", res)
	}
	req := p.Requests()[0]
	if len(req.Messages) != 2 || !strings.Contains(event.TextOf(req.Messages[0].Content), "Deny deleting files.") ||
		!strings.Contains(event.TextOf(req.Messages[1].Content), "rm -rf /") {
		t.Fatalf("request %+v", req.Messages)
	}
	if res := r.Run(t.Context(), &d, preTool("terminal")); res.Blocked || !res.Success || res.Decision != Allow {
		t.Fatalf("allow: %+v", res)
	}
	for _, what := range []string{"no JSON", "bad decision", "LLM error"} {
		if res := r.Run(t.Context(), &d, preTool("terminal")); res.Blocked || res.Success || res.Decision != Allow || res.Error == "" {
			t.Fatalf("%s: %+v", what, res)
		}
	}
	if res := (&Runner{}).Run(t.Context(), &d, preTool("terminal")); !res.Continue() || res.Error == "" {
		t.Fatalf("no model: %+v", res)
	}
}

// An agent hook hands the event to SubAgent and reads the decision in its
// answer; no SubAgent, a failure, no answer or no decision allow.
func TestAgentHook(t *testing.T) {
	d := Definition{Type: TypeAgent, Name: "guard", SystemPrompt: "check", Timeout: 10, MaxIterations: 2}
	var gotTask string
	answer := func(s string, err error) *Runner {
		return &Runner{SubAgent: func(_ context.Context, got *Definition, task string) (string, error) {
			if got != &d {
				t.Errorf("SubAgent got another definition")
			}
			gotTask = task
			return s, err
		}}
	}
	res := answer(`Checked. {"decision": "deny", "reason": "destructive"}`, nil).Run(t.Context(), &d, preTool("terminal"))
	if !res.Blocked || res.Decision != Deny || res.Reason != "destructive" || !res.Success {
		t.Fatalf("deny: %+v", res)
	}
	if !strings.Contains(gotTask, "PreToolUse") || !strings.Contains(gotTask, "rm -rf /") || !strings.Contains(gotTask, "untrusted") {
		t.Fatalf("task: %q", gotTask)
	}
	if res := answer(`{"decision":"allow"}`, nil).Run(t.Context(), &d, preTool("terminal")); res.Blocked || !res.Success || res.Decision != Allow {
		t.Fatalf("allow: %+v", res)
	}
	for what, r := range map[string]*Runner{
		"no sub-agent": {},
		"failure":      answer("", errors.New("boom")),
		"no answer":    answer(" ", nil),
		"no decision":  answer(`{"decision":"maybe"}`, nil),
		"no JSON":      answer("fine by me", nil),
	} {
		if res := r.Run(t.Context(), &d, preTool("terminal")); res.Blocked || res.Success || res.Decision != Allow || res.Error == "" {
			t.Fatalf("%s: %+v", what, res)
		}
	}
}

func TestManagerHelpers(t *testing.T) {
	dir := t.TempDir()
	cfg, err := Parse([]byte(`{
		"PreToolUse": [{"matcher": "terminal", "hooks": [{"command": "exit 2"}]}],
		"Stop": [{"hooks": [{"command": "cat > stop.json; echo '{\"decision\":\"deny\",\"additionalContext\":\"run the tests first\"}'"}]}],
		"SessionEnd": [{"hooks": [{"command": "touch ended"}]}]
	}`))
	if err != nil {
		t.Fatal(err)
	}
	m := NewManager(cfg, &Runner{WorkDir: dir})
	if out := m.PreToolUse(t.Context(), "terminal", json.RawMessage(`{}`), "a1"); !out.Blocked || out.Reason != "blocked by hook exit 2" || out.Events[0].ActionID != "a1" {
		t.Fatalf("pre: %+v", out)
	}
	if out := m.PreToolUse(t.Context(), "file_editor", json.RawMessage(`{}`), "a2"); out.Blocked || len(out.Results) != 0 {
		t.Fatalf("unmatched tool: %+v", out)
	}
	out := m.Stop(t.Context(), "agent_finished")
	if fb := out.StopFeedback(); fb != "[Stop hook feedback] run the tests first" {
		t.Fatalf("feedback %q", fb)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "stop.json"))
	if !strings.Contains(string(data), `"metadata":{"reason":"agent_finished"}`) {
		t.Fatalf("stop input %s", data)
	}
	if out := m.UserPromptSubmit(t.Context(), "hi", "m1"); out.Blocked || out.StopFeedback() != "" {
		t.Fatalf("prompt: %+v", out)
	}
	m.SessionEnd(t.Context())
	if _, err := os.Stat(filepath.Join(dir, "ended")); err != nil {
		t.Fatal(err)
	}
}

// A hook that exits but leaves a child holding its output open is done
// when it exits: the child does not hold the caller, and is killed.
func TestLeftoverChild(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	m := manager(t, dir, PreToolUse, cmdHook("sleep 300 & echo $! > "+pidFile+"; echo '{\"decision\":\"deny\",\"reason\":\"r\"}'"))
	start := time.Now()
	out := m.Fire(t.Context(), preTool("terminal"), Ref{})
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("took %v", d)
	}
	if r := out.Results[0]; !r.Success || r.Error != "" || !out.Blocked || out.Reason != "r" {
		t.Fatalf("result %+v", r)
	}
	data, _ := os.ReadFile(pidFile)
	var pid int
	fmt.Sscan(strings.TrimSpace(string(data)), &pid)
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("child %d still running", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
