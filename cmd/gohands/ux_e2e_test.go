package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/llm/llmtest"
)

// lastUserText is the text of the last user message of the model's last
// request.
func lastUserText(t *testing.T, srv *llmtest.Server) string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := srv.LastRequest().Decode(&req); err != nil {
		t.Fatal(err)
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != "user" {
			continue
		}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			return s
		}
		var parts []struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(m.Content, &parts)
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

// TestTUIMultiLineAndEsc: in tmux, Ctrl-J and Alt-Enter start new lines, a
// bracketed paste keeps its newlines without sending, and the model gets
// every line as one message; Esc stops a step that waits for the model;
// /model lists the known models of the providers with a key.
func TestTUIMultiLineAndEsc(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		llmtest.Reply{Text: "Got all four lines."},
		llmtest.Reply{Text: "too late", Delay: 50 * time.Second},
	)
	e.env = append(e.env, "XDG_CONFIG_HOME="+e.home, "ANTHROPIC_API_KEY=sk-ant-e2e")
	s := startScreen(t, e, "multi", "--persistence-dir", e.data, "--llm-config", e.config)
	s.waitFor("Ask gohands")

	s.tmux("send-keys", "-t", s.name, "-l", "fix this:")
	s.keys("C-j")
	s.tmux("set-buffer", "-b", "trace", "Traceback (most recent call last):\n  File \"calc.py\", line 3\nZeroDivisionError")
	s.tmux("paste-buffer", "-p", "-b", "trace", "-t", s.name)
	s.keys("M-Enter")
	s.tmux("send-keys", "-t", s.name, "-l", "thanks")
	scr := s.waitFor("› fix this:", "  ZeroDivisionError", "  thanks")
	t.Logf("the prompt:\n%s", scr)
	if n := len(e.srv.Requests()); n != 0 {
		t.Fatalf("%d model calls before Enter: the paste or a newline key sent", n)
	}
	s.keys("Enter")
	s.waitFor("Got all four lines.")
	s.waitIdle()
	want := "fix this:\nTraceback (most recent call last):\n  File \"calc.py\", line 3\nZeroDivisionError\nthanks"
	if got := lastUserText(t, e.srv); got != want {
		t.Errorf("the model got %q, want %q", got, want)
	}

	s.typeLine("/model")
	scr = s.waitFor("Model: openai/gpt-4o", "openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5", "/model NAME switches")
	if strings.Contains(scr, "gemini/") {
		t.Errorf("/model lists gemini models though no key for it is set:\n%s", scr)
	}

	s.typeLine("think for a long time")
	s.waitFor("Thinking…")
	// Esc once the model has the request: the screen says Thinking… as
	// soon as the message is sent, before the run has begun, and an Esc
	// that comes before the run begins pauses nothing (a loaded machine
	// pressed it there; the TUI's pause acts on a running conversation).
	for deadline := time.Now().Add(time.Minute); len(e.srv.Requests()) < 2; {
		if time.Now().After(deadline) {
			t.Fatalf("the model got %d requests, want 2", len(e.srv.Requests()))
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.keys("Escape")
	scr = s.waitFor("Paused.")
	if strings.Contains(scr, "too late") {
		t.Errorf("the step was not interrupted:\n%s", scr)
	}
	s.typeLine("/exit")
	if code, stderr := s.exited(); code != "0" {
		t.Fatalf("exit %s: %s", code, stderr)
	}
}

// TestE2ERunContinue: after the agent asks a question, run says how to
// answer; gohands run -c sends the answer to the workspace's latest
// conversation (issue 32 item 7).
func TestE2ERunContinue(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		llmtest.Reply{Text: "Which file should I fix, **a.py** or b.py?"},
		llmtest.Reply{Text: "Fixed b.py."},
	)
	r := e.start("run", "--llm-config", e.config, "fix the bug").wait(time.Minute)
	if r.code != 0 || !strings.Contains(r.stderr, `the agent asks you something; answer with: gohands run -c "ANSWER"`) {
		t.Fatalf("exit %d, no hint on how to answer:\n%s", r.code, r.stderr)
	}
	infos, err := listConversations(filepath.Join(e.home, "gohands", "conversations"), nil)
	if err != nil || len(infos) != 1 {
		t.Fatalf("stored %v, %v", infos, err)
	}
	r = e.start("run", "-c", "--llm-config", e.config, "b.py").wait(time.Minute)
	if r.code != 0 || !strings.Contains(r.stderr, "continuing conversation "+infos[0].ID) || !strings.Contains(r.stdout, "Fixed b.py.") {
		t.Fatalf("run -c: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "asks you something") {
		t.Errorf("a hint after an answer that asks nothing:\n%s", r.stderr)
	}
	if got := lastUserText(t, e.srv); got != "b.py" {
		t.Errorf("the answer reached the model as %q", got)
	}
	var req struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := e.srv.LastRequest().Decode(&req); err != nil || len(req.Messages) < 4 {
		t.Errorf("the answer's request holds %d messages (%v): not the same conversation", len(req.Messages), err)
	}

	r = e.start("run", "-c", "--conversation-id", infos[0].ID, "--llm-config", e.config, "x").wait(time.Minute)
	if r.code != exitUsage || !strings.Contains(r.stderr, "-c and --conversation-id cannot be used together") {
		t.Errorf("-c with --conversation-id: exit %d: %s", r.code, r.stderr)
	}
	e.cwd = t.TempDir()
	r = e.start("run", "-c", "--llm-config", e.config, "x").wait(time.Minute)
	if r.code != exitUsage || !strings.Contains(r.stderr, "no conversation to continue in "+e.cwd) {
		t.Errorf("-c where there is none: exit %d: %s", r.code, r.stderr)
	}
}

// TestE2EInstructionFiles: the AGENTS.md files from the git root down to
// the workspace are all read, root first, and CLAUDE.md is read by a
// model that is not Claude (issue 32 item 9).
func TestE2EInstructionFiles(t *testing.T) {
	t.Parallel()
	e := newE2E(t, llmtest.Reply{Text: "Noted."})
	repo := e.work
	for path, text := range map[string]string{
		".git/HEAD":         "ref: refs/heads/main\n",
		"AGENTS.md":         "ROOT-RULE: run gofmt.",
		"svc/AGENTS.md":     "SVC-RULE: run make test.",
		"svc/api/CLAUDE.md": "CLAUDE-RULE: keep handlers small.",
	} {
		p := filepath.Join(repo, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e.cwd = filepath.Join(repo, "svc", "api")
	r := e.start("run", "--llm-config", e.config, "--persistence-dir", e.data, "hello").wait(time.Minute)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := e.srv.LastRequest().Decode(&req); err != nil || len(req.Messages) == 0 {
		t.Fatalf("request: %v", err)
	}
	system := string(req.Messages[0].Content)
	root, svc := strings.Index(system, "ROOT-RULE"), strings.Index(system, "SVC-RULE")
	if root < 0 || svc < 0 || root > svc {
		t.Errorf("the root's and svc's AGENTS.md are not both there, root first (at %d and %d):\n%.3000s", root, svc, system)
	}
	if !strings.Contains(system, "CLAUDE-RULE") {
		t.Errorf("CLAUDE.md not read for openai/gpt-4o:\n%.3000s", system)
	}
}

// TestE2EFailedStart: a run whose model call fails prints the error once
// (with its hint, on standard error), and ls shows the conversation with
// that error (issue 32 item 9).
func TestE2EFailedStart(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	for i, kv := range e.env {
		if strings.HasPrefix(kv, "LLM_BASE_URL=") {
			e.env[i] = "LLM_BASE_URL=http://127.0.0.1:1/v1" // nothing listens there
		}
	}
	r := e.start(e.args("hello")...).wait(time.Minute)
	if r.code != exitError {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if n := strings.Count(r.stdout+r.stderr, "connection refused"); n != 1 {
		t.Errorf("the error is printed %d times:\nstdout:\n%s\nstderr:\n%s", n, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "is the server at --base-url running?") {
		t.Errorf("no hint:\n%s", r.stderr)
	}
	r = e.start("ls", "--persistence-dir", e.data).wait(time.Minute)
	if r.code != 0 || !strings.Contains(r.stdout, e.id) || !strings.Contains(r.stdout, "error") || !strings.Contains(r.stdout, "✗ OSError: ") {
		t.Errorf("ls: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = e.start("ls", "--json", "--persistence-dir", e.data).wait(time.Minute)
	var list []convInfo
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 1 || !strings.Contains(list[0].Error, "connection refused") {
		t.Errorf("ls --json: %v\n%s", err, r.stdout)
	}
}

// TestE2EResumeFlagHelp: --help shows -r's optional id plainly.
func TestE2EResumeFlagHelp(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.start("--help").wait(time.Minute)
	if r.code != 0 || !strings.Contains(r.stdout, "-r, --resume ID ") || strings.Contains(r.stdout, "pick\"]") || strings.ContainsRune(r.stdout, 0) {
		t.Errorf("exit %d, help:\n%q", r.code, r.stdout)
	}
}

// TestTUIResumeExitHint: after /new and then /resume of the first
// conversation, the exit hint names the resumed one, and not gohands -c,
// which would continue the newer one (issue 32 item 9).
func TestTUIResumeExitHint(t *testing.T) {
	t.Parallel()
	e := newE2E(t, llmtest.Reply{Text: "Answer one."}, llmtest.Reply{Text: "Answer two."})
	e.env = append(e.env, "XDG_CONFIG_HOME="+e.home)
	s := startScreen(t, e, "hint", "--persistence-dir", e.data, "--llm-config", e.config)
	s.waitFor("Ask gohands")
	s.typeLine("first task")
	s.waitFor("Answer one.")
	s.waitIdle()
	infos, err := listConversations(e.data, func(string, error) {})
	if err != nil || len(infos) != 1 {
		t.Fatalf("stored %v, %v", infos, err)
	}
	first := infos[0].ID
	s.typeLine("/new")
	s.waitFor("New conversation.")
	s.typeLine("second task")
	s.waitFor("Answer two.")
	s.waitIdle()
	s.typeLine("/resume " + first[:8])
	s.waitFor("Resumed conversation")
	s.typeLine("/exit")
	code, stderr := s.exited()
	if code != "0" {
		t.Fatalf("exit %s: %s", code, stderr)
	}
	if want := "conversation " + first + " is kept; continue it with: gohands -r " + first[:8]; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	if strings.Contains(stderr, "gohands -c") {
		t.Errorf("the hint names gohands -c, which continues the second conversation:\n%s", stderr)
	}
}
