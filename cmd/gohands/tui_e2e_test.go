package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
)

// screen is gohands running in a tmux session of fixed size: the test
// types into it and reads what it shows.
type screen struct {
	t      *testing.T
	sock   string
	name   string
	stderr string // the file gohands' standard error goes to
	status string // the file its exit status goes to
}

// startScreen runs gohands args in a new 100x30 tmux session with e's
// environment, in e's workspace.
func startScreen(t *testing.T, e *e2e, name string, args ...string) *screen {
	t.Helper()
	return startScreenOn(t, e, name, false, args...)
}

// startScreenOn is startScreen; with paneStderr, standard error goes to
// the terminal too.
func startScreenOn(t *testing.T, e *e2e, name string, paneStderr bool, args ...string) *screen {
	t.Helper()
	tmux := testenv.Program(t, "tmux")
	dir := t.TempDir()
	s := &screen{t: t, sock: filepath.Join(dir, "tmux.sock"), name: name,
		stderr: filepath.Join(dir, "stderr"), status: filepath.Join(dir, "status")}
	var script strings.Builder
	script.WriteString("#!/bin/sh\n")
	for _, kv := range e.env {
		k, v, _ := strings.Cut(kv, "=")
		if k == "NO_COLOR" || k == "TERM" || k == "TMUX" || k == "CI" {
			continue
		}
		fmt.Fprintf(&script, "export %s=%s\n", k, shellQuote(v))
	}
	fmt.Fprintf(&script, "cd %s\n", shellQuote(cmpOr(e.cwd, e.work)))
	q := []string{shellQuote(binPath)}
	for _, a := range args {
		q = append(q, shellQuote(a))
	}
	redirect := " 2>" + shellQuote(s.stderr)
	if paneStderr {
		redirect = ""
	}
	fmt.Fprintf(&script, "%s%s\necho $? >%s\nsleep 600\n", strings.Join(q, " "), redirect, shellQuote(s.status))
	sh := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(sh, []byte(script.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tmux, "-S", s.sock, "-f", "/dev/null", "new-session", "-d", "-s", name,
		"-x", "100", "-y", "30", sh).CombinedOutput()
	if err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command(tmux, "-S", s.sock, "kill-server").Run() })
	return s
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func (s *screen) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", s.sock}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// capture is the screen's text now.
func (s *screen) capture() string { return s.tmux("capture-pane", "-p", "-t", s.name) }

// waitFor waits until the screen shows all of want.
func (s *screen) waitFor(want ...string) string {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := s.capture()
		missing := ""
		for _, w := range want {
			if !strings.Contains(got, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return got
		}
		if time.Now().After(deadline) {
			errOut, _ := os.ReadFile(s.stderr)
			s.t.Fatalf("the screen does not show %q:\n%s\nstderr:\n%s", missing, got, errOut)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitGone waits until the screen no longer shows text.
func (s *screen) waitGone(text string) {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for strings.Contains(s.capture(), text) {
		if time.Now().After(deadline) {
			s.t.Fatalf("the screen still shows %q:\n%s", text, s.capture())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// typeLine types text and Enter.
func (s *screen) typeLine(text string) {
	s.t.Helper()
	s.tmux("send-keys", "-t", s.name, "-l", text)
	s.tmux("send-keys", "-t", s.name, "Enter")
}

func (s *screen) keys(keys ...string) {
	s.t.Helper()
	s.tmux(append([]string{"send-keys", "-t", s.name}, keys...)...)
}

// exited waits for gohands to end and returns its status and stderr.
func (s *screen) exited() (string, string) {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if b, err := os.ReadFile(s.status); err == nil && len(b) > 0 {
			errOut, _ := os.ReadFile(s.stderr)
			return strings.TrimSpace(string(b)), string(errOut)
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("gohands did not exit; screen:\n%s", s.capture())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestTUIInTmux drives the interactive mode as a person would: a task,
// its streamed answer and live command, an "always" confirmation, a
// follow-up, slash commands, the /resume picker, Ctrl-C to pause a
// command and twice to leave, then gohands -c to come back.
func TestTUIInTmux(t *testing.T) {
	gate := "gate-" + fmt.Sprint(time.Now().UnixNano())
	e := newE2E(t,
		llmtest.Reply{Text: "Let me count for you.", ChunkDelay: 20 * time.Millisecond,
			ToolCalls: []llmtest.ToolCall{call("call_count", "terminal", map[string]any{
				"command": "echo first-line; while [ ! -f " + gate + " ]; do sleep 0.1; done; echo second-line"})}},
		llmtest.Reply{Text: "Counted **two** lines."},
		llmtest.Reply{Text: "You are welcome."},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_sleep", "terminal", map[string]any{"command": "echo sleeping; sleep 120"})}},
	)
	e.env = append(e.env, "XDG_CONFIG_HOME="+e.home)
	s := startScreen(t, e, "tui", "--persistence-dir", e.data, "--llm-config", e.config)

	s.waitFor("Ask gohands", "openai/gpt-4o")
	s.typeLine("count the lines")
	s.waitFor("› count the lines", "Let me count for you.", "$ echo first-line",
		"The agent wants to run 1 action", "always (this session)")
	s.keys("a")
	// The command's first line shows while it still runs.
	s.waitFor("first-line", "Running terminal")
	if err := os.WriteFile(filepath.Join(e.work, gate), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	scr := s.waitFor("second-line", "Counted two lines.", "confirm never")
	t.Logf("after the first task:\n%s", scr)

	s.typeLine("thanks")
	s.waitFor("You are welcome.")
	s.typeLine("/cost")
	s.waitFor("Total: $")
	s.typeLine("/model openai/gpt-4o-mini")
	s.waitFor("now uses openai/gpt-4o-mini", "openai/gpt-4o-mini · ")
	s.typeLine("/resume")
	scr = s.waitFor("Resume a conversation", "count the lines")
	t.Logf("the picker:\n%s", scr)
	s.keys("Escape")
	s.waitGone("Resume a conversation")

	s.typeLine("sleep a while")
	s.waitFor("sleeping", "Running terminal")
	var req struct {
		Model string `json:"model"`
	}
	if err := e.srv.LastRequest().Decode(&req); err != nil || req.Model != "gpt-4o-mini" {
		t.Errorf("after /model the request names %q (%v), want gpt-4o-mini", req.Model, err)
	}
	s.keys("C-c")
	scr = s.waitFor("Paused.")
	t.Logf("paused:\n%s", scr)
	s.keys("C-c")
	s.waitFor("Press Ctrl-C again to exit.")
	s.keys("C-c")
	code, stderr := s.exited()
	if code != "0" {
		t.Fatalf("exit status %s; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "continue it with: gohands -c") {
		t.Errorf("no resume hint on stderr:\n%s", stderr)
	}

	// The conversation is stored with both messages.
	infos, err := listConversations(e.data, func(p string, err error) { t.Errorf("%s: %v", p, err) })
	if err != nil || len(infos) != 1 {
		t.Fatalf("stored conversations %v, %v", infos, err)
	}
	if infos[0].Workspace != e.work || infos[0].FirstMessage != "count the lines" {
		t.Errorf("stored %+v", infos[0])
	}
	events, err := os.ReadDir(filepath.Join(infos[0].Dir, "events"))
	if err != nil || len(events) < 8 {
		t.Errorf("%d events stored (%v)", len(events), err)
	}

	// gohands -c comes back to it.
	e.srv.Add(llmtest.Reply{Text: "Still here."})
	s2 := startScreen(t, e, "tui2", "-c", "--persistence-dir", e.data, "--llm-config", e.config)
	s2.waitFor("You are welcome.", infos[0].ID[:8])
	s2.typeLine("still there?")
	s2.waitFor("Still here.")
	s2.typeLine("/exit")
	if code, stderr := s2.exited(); code != "0" {
		t.Fatalf("exit status %s after /exit; stderr:\n%s", code, stderr)
	}
}

// TestLineModeREPL: --no-tui reads messages and answers from standard
// input, asks before actions (the interactive default) and keeps the
// conversation.
func TestLineModeREPL(t *testing.T) {
	e := newE2E(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_touch", "terminal", map[string]any{"command": "touch made-by-agent"})}},
		llmtest.Reply{Text: "Made the file."},
		llmtest.Reply{Text: "Bye then."},
	)
	e.stdin = "make a file\ny\nthanks\n/cost\n/exit\n"
	p := e.start("--no-tui", "--persistence-dir", e.data, "--llm-config", e.config)
	r := p.wait(2 * time.Minute)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"Confirm terminal (risk", "touch made-by-agent", "Made the file.", "Bye then.", "Total: $"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(e.work, "made-by-agent")); err != nil {
		t.Errorf("the approved command did not run: %v", err)
	}
	infos, err := listConversations(e.data, func(string, error) {})
	if err != nil || len(infos) != 1 || infos[0].FirstMessage != "make a file" {
		t.Errorf("stored %+v, %v", infos, err)
	}
}

// TestRunWaitingIndicator: gohands run on a terminal shows a spinner and
// the time waited while the model thinks, and clears it for the answer.
func TestRunWaitingIndicator(t *testing.T) {
	e := newE2E(t, llmtest.Reply{Text: "Thought about it.", Delay: 3 * time.Second})
	s := startScreenOn(t, e, "run", true, e.args("think hard")...)
	scr := s.waitFor("working… 1s (Ctrl-C pauses)")
	t.Logf("waiting:\n%s", scr)
	scr = s.waitFor("Thought about it.", "gohands: finished")
	if strings.Contains(scr, "working…") {
		t.Errorf("the indicator stayed:\n%s", scr)
	}
	if code, stderr := s.exited(); code != "0" {
		t.Errorf("exit %s: %s", code, stderr)
	}
}

// TestTUIFirstRunSetup: with no model anywhere, gohands asks for one, its
// key and base URL, saves them (mode 0600) and answers the task.
func TestTUIFirstRunSetup(t *testing.T) {
	e := newE2E(t, llmtest.Reply{Text: "Hello from the configured model."})
	var env []string
	for _, kv := range e.env {
		if !strings.HasPrefix(kv, "LLM_") {
			env = append(env, kv)
		}
	}
	e.env = append(env, "XDG_CONFIG_HOME="+e.home)
	s := startScreen(t, e, "setup", "--persistence-dir", e.data, "say hello")
	s.waitFor("No model is configured yet", "Model:")
	s.typeLine("openai/gpt-4o")
	s.waitFor("API key:")
	s.typeLine("sk-first-run")
	s.waitFor("Base URL:")
	if strings.Contains(s.capture(), "sk-first-run") {
		t.Error("the key is shown on the screen")
	}
	s.typeLine(e.srv.URL + "/v1")
	s.waitFor("› say hello", "Hello from the configured model.")
	if got := e.srv.LastRequest().Header.Get("Authorization"); got != "Bearer sk-first-run" {
		t.Errorf("Authorization %q", got)
	}
	path := filepath.Join(e.home, "gohands", "settings.json")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("settings mode %v, want 0600", fi.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"model": "openai/gpt-4o"`) || !strings.Contains(string(data), e.srv.URL) {
		t.Errorf("settings:\n%s", data)
	}
	s.typeLine("/exit")
	if code, stderr := s.exited(); code != "0" {
		t.Errorf("exit %s: %s", code, stderr)
	}
}
